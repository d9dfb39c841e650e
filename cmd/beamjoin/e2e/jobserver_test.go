package e2e

import (
	"bufio"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// prismJobServer is a stand-alone Prism job server that a test started.
type prismJobServer struct {
	endpoint string // host:port on loopback
	mu       sync.Mutex
	log      strings.Builder
}

func (s *prismJobServer) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// servingLine is Prism's log line that names the job service's address.
var servingLine = regexp.MustCompile(`Serving JobManagement.*endpoint=\S*:(\d+)`)

// startPrism builds the SDK's prism command from the module cache and
// starts it as a job server on a free port, without its web UI. It skips
// the test if the command cannot be built. The server is killed when the
// test ends; it also shuts itself down after two minutes without a job,
// should the test binary die first.
func startPrism(t *testing.T) *prismJobServer {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "prism")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/apache/beam/sdks/v2/go/cmd/prism").CombinedOutput(); err != nil {
		t.Skipf("cannot build Prism's job server command from the module cache: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--job_port=0", "--serve_http=false", "--log_kind=text", "--idle_shutdown_timeout=2m")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	s := &prismJobServer{}
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case port <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case p := <-port:
		s.endpoint = net.JoinHostPort("127.0.0.1", p)
	case <-time.After(2 * time.Minute):
		t.Fatalf("Prism did not say where it serves within 2 minutes; its log:\n%s", s.logText())
	}
	return s
}

// TestE2EJobServer submits `beamjoin interval` to Prism running as a
// stand-alone job server in a process of its own (--runner=universal
// --endpoint=…), the path a Flink or Spark job server takes: once with
// LOOPBACK workers (in the submitting process), once with the worker in
// yet another process (the PROCESS environment, through the Go SDK's boot
// loader, as in TestE2EWorkerProcess), so that the worker registers its
// types without the launching process. The results of each must equal
// those of the same command run on Prism in process.
func TestE2EJobServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Prism's job server and the Go SDK's boot loader")
	}
	t.Parallel()
	bin := beamjoinBinary(t)
	args := append([]string{"interval"}, small(t, "--lower", "0", "--upper", "5m", "--type", "full", "--emit", "final", "--quiet")...)

	inProcess := mustRun(t, "", append(args, "--out", "out.jsonl")...)
	want := lines(inProcess.file(t, "out.jsonl"))
	if len(want) == 0 {
		t.Fatal("the in-process run wrote no results")
	}

	prism := startPrism(t)
	universal := []string{"--runner=universal", "--endpoint=" + prism.endpoint}

	t.Run("loopback", func(t *testing.T) {
		dir := t.TempDir()
		r := run(t, dir, append(append(args, universal...), "--environment_type=LOOPBACK", "--out", "out.jsonl")...)
		if r.code != 0 {
			t.Fatalf("exit status %d\n%s\nPrism's log:\n%s", r.code, r.stderr, prism.logText())
		}
		if diff := cmp.Diff(want, lines(r.file(t, "out.jsonl"))); diff != "" {
			t.Errorf("results differ from the in-process run (-in process +job server):\n%s", diff)
		}
	})

	t.Run("worker_process", func(t *testing.T) {
		dir := t.TempDir()
		procArgs := append(append(args, universal...), "--out", filepath.Join(dir, "out.jsonl"))
		procArgs = append(procArgs, processWorker(t, dir, bin)...)
		r := runRetryingConnect(t, dir, procArgs, prism.logText)
		if r.code != 0 {
			t.Fatalf("exit status %d\n%s\nPrism's log:\n%s", r.code, r.stderr, prism.logText())
		}
		if diff := cmp.Diff(want, lines(r.file(t, "out.jsonl"))); diff != "" {
			t.Errorf("results differ from the in-process run (-in process +worker process):\n%s", diff)
		}
	})
}
