package flinkrun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// ClasspathEnv names the environment variable that holds the path of a
// file with the job server's Java classpath, as `mvn
// dependency:build-classpath` writes it (scripts/flink.sh classpath).
const ClasspathEnv = "BEAMJOIN_FLINK_CLASSPATH"

// Versions of the job server that scripts/flink/pom.xml pins. Beam's Go SDK
// here is v2.77.0; Maven Central serves no Flink job server or runner of a
// newer Beam whose dependencies all resolve (docs/runners.md).
const (
	BeamVersion  = "2.62.0"
	FlinkVersion = "1.19"
)

// driverClass is the job server's entry point in beam-runners-flink.
const driverClass = "org.apache.beam.runners.flink.FlinkJobServerDriver"

// Config says how to start a job server.
type Config struct {
	// Classpath is the job server's Java classpath.
	Classpath string
	// Parallelism is the default parallelism of the embedded cluster's
	// jobs (Flink's parallelism.default); a pipeline's --parallelism, which
	// Execute always sends, overrides it. 0 means 2.
	Parallelism int
	// FlinkConf holds further entries of the embedded cluster's Flink
	// configuration (flink-conf.yaml), such as
	// "execution.checkpointing.interval": "500ms". A Go pipeline cannot
	// turn on checkpointing itself: the Go SDK sends Flink's pipeline
	// options nested where the job server does not read them.
	FlinkConf map[string]string
	// Dir is where the job server keeps its configuration, its log and
	// Flink's checkpoints; "" means a new temporary directory, removed by
	// Stop.
	Dir string
	// Java is the java command; "" means java on PATH (or $JAVA_HOME/bin/java).
	Java string
	// HeapMB bounds the JVM's heap; 0 means 2048.
	HeapMB int
	// JavaOptions are further options of the JVM, such as
	// -Dorg.slf4j.simpleLogger.log.org.apache.beam.runners.flink=debug.
	JavaOptions []string
}

// Args returns the java command's arguments for a job server whose Flink
// configuration lies in confDir. The job server stages each job's worker
// binary (hundreds of megabytes for a test binary) under confDir's parent,
// and removes it when the job ends.
func (c Config) Args(confDir string) []string {
	heap := c.HeapMB
	if heap == 0 {
		heap = 2048
	}
	args := []string{fmt.Sprintf("-Xmx%dm", heap)}
	args = append(args, jdk17Opens...)
	args = append(args, c.JavaOptions...)
	return append(args, "-cp", c.Classpath, driverClass,
		"--flink-master=[local]", "--flink-conf-dir="+confDir,
		"--job-host=localhost", "--job-port=0", "--artifact-port=0", "--expansion-port=0",
		"--artifacts-dir="+filepath.Join(filepath.Dir(confDir), "artifacts"), "--clean-artifacts-per-job=true")
}

// jdk17Opens are the module openings Flink's own start scripts give a JDK
// 17 (env.java.opts.all in Flink 1.19's configuration): Flink's Kryo
// serializers reflect into these packages.
var jdk17Opens = []string{
	"-XX:+IgnoreUnrecognizedVMOptions",
	"--add-exports=java.base/sun.net.util=ALL-UNNAMED",
	"--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
	"--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
	"--add-opens=java.base/java.lang=ALL-UNNAMED",
	"--add-opens=java.base/java.net=ALL-UNNAMED",
	"--add-opens=java.base/java.io=ALL-UNNAMED",
	"--add-opens=java.base/java.nio=ALL-UNNAMED",
	"--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
	"--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
	"--add-opens=java.base/java.text=ALL-UNNAMED",
	"--add-opens=java.base/java.time=ALL-UNNAMED",
	"--add-opens=java.base/java.util=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED",
}

// flinkConf returns the embedded cluster's flink-conf.yaml: the defaults
// that keep it on loopback and on free ports, then c.FlinkConf.
func (c Config) flinkConf() string {
	par := c.Parallelism
	if par == 0 {
		par = 2
	}
	conf := map[string]string{
		"parallelism.default":           strconv.Itoa(par),
		"taskmanager.numberOfTaskSlots": strconv.Itoa(par),
		"rest.bind-address":             "localhost",
		"rest.address":                  "localhost",
		"rest.port":                     "0",
		"jobmanager.rpc.address":        "localhost",
		"taskmanager.host":              "localhost",
	}
	for k, v := range c.FlinkConf {
		conf[k] = v
	}
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, conf[k])
	}
	return b.String()
}

// JobServer is a running job server.
type JobServer struct {
	// Endpoint is the job service's address, host:port on loopback.
	Endpoint string
	// Dir holds the configuration, the log (jobserver.log) and, where
	// checkpointing is on, the checkpoints.
	Dir string

	cmd     *exec.Cmd
	done    chan struct{} // closed when the JVM has exited
	ownsDir bool

	mu    sync.Mutex
	lines []string // the log so far
	subs  []*logSub
}

type logSub struct {
	re *regexp.Regexp
	ch chan string
}

// jobServiceLine is the driver's log line that names the job service's
// port.
var jobServiceLine = regexp.MustCompile(`JobService started on [^:\s]+:(\d+)`)

// Start starts a job server and returns once its job service answers.
// The JVM runs in a process group of its own and is killed if this
// process dies first (Linux's parent-death signal), so that no JVM is
// left behind by a test binary that fails, times out or is interrupted.
// ctx bounds the wait for the service, not the server's life: Stop ends it.
func Start(ctx context.Context, c Config) (*JobServer, error) {
	if c.Classpath == "" {
		return nil, errors.New("flinkrun: no classpath for the job server (run scripts/flink.sh classpath)")
	}
	java := c.Java
	if java == "" {
		java = "java"
		if home := os.Getenv("JAVA_HOME"); home != "" {
			java = filepath.Join(home, "bin", "java")
		}
	}
	if _, err := exec.LookPath(java); err != nil {
		return nil, fmt.Errorf("flinkrun: %s not found: install a JDK 17 (Debian: apt-get install openjdk-17-jdk-headless): %w", java, err)
	}
	s := &JobServer{Dir: c.Dir, done: make(chan struct{})}
	if s.Dir == "" {
		d, err := os.MkdirTemp("", "beamjoin-flink-")
		if err != nil {
			return nil, err
		}
		s.Dir, s.ownsDir = d, true
	}
	confDir := filepath.Join(s.Dir, "conf")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		return nil, err
	}
	// Flink's temporary files go under Dir, so that a job server that is
	// killed leaves none behind in /tmp: Flink unpacks its RPC system's jar
	// (22 MB) there at every start, and deletes it only at a clean exit.
	tmp := filepath.Join(s.Dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	if _, set := c.FlinkConf["io.tmp.dirs"]; !set {
		conf := map[string]string{"io.tmp.dirs": tmp}
		maps.Copy(conf, c.FlinkConf)
		c.FlinkConf = conf
	}
	c.JavaOptions = append(slices.Clip(c.JavaOptions), "-Djava.io.tmpdir="+tmp)
	if err := os.WriteFile(filepath.Join(confDir, "flink-conf.yaml"), []byte(c.flinkConf()), 0o644); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(s.Dir, "jobserver.log"))
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(java, c.Args(confDir)...)
	s.cmd.Dir = s.Dir
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.cmd.Stderr = s.cmd.Stdout
	// Linux sends the parent-death signal when the thread that started
	// the child exits, and Go may end a thread whose goroutine locked it.
	// This goroutine keeps its thread for as long as the JVM lives.
	started := make(chan error)
	go func() {
		runtime.LockOSThread()
		err := s.cmd.Start()
		started <- err
		if err == nil {
			<-s.done
		}
	}()
	if err := <-started; err != nil {
		close(s.done)
		return nil, fmt.Errorf("flinkrun: starting the job server: %w", err)
	}
	port := make(chan string, 1)
	go func() {
		defer close(s.done)
		defer logFile.Close()
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logFile, line)
			s.add(line)
			if m := jobServiceLine.FindStringSubmatch(line); m != nil {
				select {
				case port <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, out)
		s.cmd.Wait()
	}()
	select {
	case p := <-port:
		s.Endpoint = net.JoinHostPort("localhost", p)
	case <-s.done:
		return nil, fmt.Errorf("flinkrun: the job server exited before it served; its log:\n%s", s.Log())
	case <-ctx.Done():
		s.Stop()
		return nil, fmt.Errorf("flinkrun: the job server did not say where it serves: %w; its log:\n%s", ctx.Err(), s.Log())
	}
	if err := s.ping(ctx); err != nil {
		s.Stop()
		return nil, fmt.Errorf("flinkrun: the job service at %s does not answer: %w; its log:\n%s", s.Endpoint, err, s.Log())
	}
	return s, nil
}

// ping asks the job service for its jobs until it answers.
func (s *JobServer) ping(ctx context.Context) error {
	cc, err := grpc.NewClient(s.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer cc.Close()
	client := jobpb.NewJobServiceClient(cc)
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := client.GetJobs(cctx, &jobpb.GetJobsRequest{})
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-s.done:
			return errors.New("the job server exited")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *JobServer) add(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, line)
	for _, sub := range s.subs {
		if sub.re.MatchString(line) {
			select {
			case sub.ch <- line:
			default:
			}
		}
	}
}

// Log returns the job server's log so far: Flink's and Beam's messages,
// and the SDK workers' logs that the job server receives.
func (s *JobServer) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// LogSince returns the log lines from line n on, and the number of lines so far.
func (s *JobServer) LogSince(n int) ([]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n > len(s.lines) {
		n = len(s.lines)
	}
	return append([]string(nil), s.lines[n:]...), len(s.lines)
}

// WaitForLine waits until a log line from now on matches re, and returns it.
func (s *JobServer) WaitForLine(ctx context.Context, re *regexp.Regexp) (string, error) {
	sub := &logSub{re: re, ch: make(chan string, 1)}
	s.mu.Lock()
	s.subs = append(s.subs, sub)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		for i, x := range s.subs {
			if x == sub {
				s.subs = append(s.subs[:i], s.subs[i+1:]...)
				break
			}
		}
		s.mu.Unlock()
	}()
	select {
	case line := <-sub.ch:
		return line, nil
	case <-s.done:
		return "", errors.New("flinkrun: the job server exited")
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Stop ends the job server: an interrupt, which the driver handles by
// shutting down, then after ten seconds a kill of its process group. It
// removes Dir if Start made it.
func (s *JobServer) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		pgid := s.cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-s.done
		}
	}
	if s.ownsDir {
		os.RemoveAll(s.Dir)
	}
}

// Pid is the JVM's process ID.
func (s *JobServer) Pid() int { return s.cmd.Process.Pid }

// RemoveArtifacts removes what the job server staged for the jobs it ran:
// each job's worker binary, hundreds of megabytes for a test binary in a
// PROCESS environment, which the job server fails to remove itself
// (Beam 2.62 logs "Failed to remove job staging directory"). Call it when
// no job of the server is running.
func (s *JobServer) RemoveArtifacts() error {
	dir := filepath.Join(s.Dir, "artifacts")
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
