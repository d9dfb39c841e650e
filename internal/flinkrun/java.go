package flinkrun

// This file runs the Java programs that make bench-flink sets beside
// beamjoin: Flink's own DataStream jobs and Beam Java's Nexmark, each in a
// JVM of its own; and keeps what a JVM leaves for the benchmark's reader
// (its flight recording, its log).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// PeersClasspathEnv names the environment variable that holds the path of
// a file with the Java peers' classpath: peers/flink's classes and their
// dependencies (scripts/flink.sh peers).
const PeersClasspathEnv = "BEAMJOIN_FLINK_PEERS_CLASSPATH"

// JavaRun is one run of a Java program.
type JavaRun struct {
	Classpath string
	Main      string   // the main class
	Args      []string // the program's arguments
	// JavaOptions are further options of the JVM; the run always has
	// Flink's JDK 17 openings and TimestampOptions.
	JavaOptions []string
	HeapMB      int // 0 means 2048, as a job server's
	Dir         string
}

// JavaResult is what a Java program did.
type JavaResult struct {
	Output  string        // standard output and error
	PeakRSS int64         // bytes (the process's ru_maxrss)
	CPU     time.Duration // user and system
	Wall    time.Duration
}

// RunJava runs r and waits for it. The JVM is killed if ctx ends or this
// process dies first. A JVM that exits with an error returns the result
// with the error.
func RunJava(ctx context.Context, r JavaRun) (JavaResult, error) {
	heap := r.HeapMB
	if heap == 0 {
		heap = 2048
	}
	// Flink's temporary files, such as its RPC system's jar (22 MB),
	// unpacked at every start, go to a directory removed after the run.
	tmp, err := os.MkdirTemp("", "beamjoin-java-")
	if err != nil {
		return JavaResult{}, err
	}
	defer os.RemoveAll(tmp)
	args := []string{fmt.Sprintf("-Xmx%dm", heap), "-Djava.io.tmpdir=" + tmp}
	args = append(args, jdk17Opens...)
	args = append(args, TimestampOptions...)
	args = append(args, r.JavaOptions...)
	args = append(args, "-cp", r.Classpath, r.Main)
	args = append(args, r.Args...)
	cmd := exec.CommandContext(ctx, javaCommand(), args...)
	cmd.Dir = r.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// The parent-death signal follows the thread that started the child:
	// keep it for the child's life (see Start).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	err = cmd.Run()
	res := JavaResult{Output: out.String(), Wall: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			res.PeakRSS = ru.Maxrss << 10
		}
		res.CPU = ps.UserTime() + ps.SystemTime()
	}
	if err != nil {
		return res, fmt.Errorf("flinkrun: %s %s: %w", filepath.Base(r.Main), r.Args, err)
	}
	return res, nil
}

func javaCommand() string {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		return filepath.Join(home, "bin", "java")
	}
	return "java"
}

// PeersClasspath returns the Java peers' classpath from the file that
// PeersClasspathEnv names, and skips the benchmark when it is unset.
func PeersClasspath(tb testing.TB) string {
	tb.Helper()
	file := os.Getenv(PeersClasspathEnv)
	if file == "" {
		tb.Skipf("a Java peer: run it with make bench-flink (or %s=$(scripts/flink.sh peers))", PeersClasspathEnv)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		tb.Fatalf("%s: %v", PeersClasspathEnv, err)
	}
	return strings.TrimSpace(string(b))
}

// DumpFlightRecording writes the flight recordings of JVM pid (started
// with -XX:StartFlightRecording) to file with jcmd, while the JVM runs: a
// job server is stopped with a signal and may be killed before its
// recording is written on exit.
func DumpFlightRecording(pid int, file string) error {
	jcmd := "jcmd"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		jcmd = filepath.Join(home, "bin", "jcmd")
	}
	out, err := exec.Command(jcmd, strconv.Itoa(pid), "JFR.dump", "filename="+file).CombinedOutput()
	if err != nil {
		return fmt.Errorf("flinkrun: jcmd %d JFR.dump: %w\n%s", pid, err, out)
	}
	return nil
}

// KeepLog writes a JVM's log (JobServer.Log, JavaResult.Output) to dir as
// name.log, for a benchmark's -flink-log-dir: an empty dir keeps nothing.
// A log that cannot be written fails tb, which runs on.
func KeepLog(tb testing.TB, dir, name, log string) {
	tb.Helper()
	if dir == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".log"), []byte(log), 0o644); err != nil {
		tb.Error(err)
	}
}
