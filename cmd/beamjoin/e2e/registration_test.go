package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestE2ERegistrationWithWorkerProcess builds a pipeline of one's own
// (testdata/registration) twice and runs it with Prism starting its worker
// in a separate process (the PROCESS environment, as TestE2EWorkerProcess
// does). Built without join.RegisterTypes, it fails before anything runs,
// with the error naming the call to add; built with it (tag "register"),
// the worker process decodes the join's types and the records are exact.
func TestE2ERegistrationWithWorkerProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two programs and the Go SDK's boot loader")
	}
	dir := t.TempDir()
	build := func(name string, tags ...string) string {
		bin := filepath.Join(dir, name)
		args := append([]string{"build", "-o", bin}, tags...)
		if out, err := exec.Command("go", append(args, "./testdata/registration")...).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, out)
		}
		return bin
	}
	run := func(bin string, args ...string) (code int, stderr string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		var errb bytes.Buffer
		cmd.Stderr = &errb
		cmd.WaitDelay = 2 * time.Second
		err := cmd.Run()
		// As in run: a worker process may hold standard error open a moment.
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) && !errors.Is(err, exec.ErrWaitDelay) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), errb.String()
	}

	without, with := build("without"), build("with", "-tags", "register")
	worker := processWorker(t, dir, with) // ends with --worker_binary=with
	code, stderr := run(without, append([]string{"--out", filepath.Join(dir, "without.txt")},
		append(worker[:len(worker)-1:len(worker)-1], "--worker_binary="+without)...)...)
	const wantErr = "add join.RegisterTypes[string, main.Order, main.Payment]() to an init function of the program"
	if code != 3 || !strings.Contains(stderr, wantErr) {
		t.Errorf("without RegisterTypes: exit status %d, want 3 with %q; standard error:\n%s", code, wantErr, stderr)
	}

	out := filepath.Join(dir, "with.txt")
	args := append([]string{"--out", out}, worker...)
	for attempt := 1; ; attempt++ {
		if code, stderr = run(with, args...); code == 0 || attempt == 3 || !strings.Contains(stderr, "didn't get control connection") {
			break
		}
		stopWorkers(t, dir)
	}
	if code != 0 {
		t.Fatalf("with RegisterTypes: exit status %d\n%s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pair o1 30 4m0s", "unmatched o2", "unmatched o3"}
	if diff := cmp.Diff(want, lines(string(data))); diff != "" {
		t.Errorf("with RegisterTypes: records (-want +got):\n%s", diff)
	}
}
