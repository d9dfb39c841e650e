package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestQuickstartRunsAsWritten builds and runs the quick start as a user
// would (go run), on Prism in process, and checks what it prints.
func TestQuickstartRunsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	cmd := exec.Command("go", "run", ".")
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if e, ok := err.(*exec.ExitError); ok {
			stderr = string(e.Stderr)
		}
		t.Fatalf("go run ./examples/quickstart: %v\n%s", err, stderr)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(got) // the runner prints in any order
	want := []string{
		"o1 paid 30, 4m0s after the order",
		"o2 unpaid",
		"o3 unpaid",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("quick start printed (-want +got):\n%s", diff)
	}
}
