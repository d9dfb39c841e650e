package flinkrun

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"
)

var shared struct {
	once sync.Once
	s    *JobServer
	err  error
}

// Shared returns the test process's job server, started on first use with
// parallelism 2 from the classpath that ClasspathEnv names. It skips the
// test when ClasspathEnv is unset: `go test ./...` runs on Prism alone,
// and `make flink-test` (scripts/flink.sh test) runs the Flink tests. The
// server lives until StopShared, or until the test process exits.
func Shared(t testing.TB) *JobServer {
	t.Helper()
	cp := Classpath(t)
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		shared.s, shared.err = Start(ctx, Config{Classpath: cp, Parallelism: 2})
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.s
}

// StopShared stops the job server that Shared started, if any. Call it
// from TestMain after the tests have run.
func StopShared() {
	if shared.s != nil {
		shared.s.Stop()
	}
}

// Classpath returns the job server's classpath from the file that
// ClasspathEnv names, and skips the test when it is unset.
func Classpath(t testing.TB) string {
	t.Helper()
	file := os.Getenv(ClasspathEnv)
	if file == "" {
		t.Skipf("a Flink test: run it with make flink-test (or %s=$(scripts/flink.sh classpath) go test -run Flink)", ClasspathEnv)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%s: %v", ClasspathEnv, err)
	}
	return string(b)
}
