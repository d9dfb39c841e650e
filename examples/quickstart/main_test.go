package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/beamjoin/beamjoin/internal/flinkrun"
	"github.com/google/go-cmp/cmp"
)

func TestMain(m *testing.M) {
	code := m.Run()
	flinkrun.StopShared()
	os.Exit(code)
}

// quickstartPrints is what the quick start prints, sorted: the runner
// prints in any order.
var quickstartPrints = []string{
	"o1 paid 30, 4m0s after the order",
	"o2 unpaid",
	"o3 unpaid",
}

// TestQuickstartRunsAsWritten builds and runs the quick start as a user
// would (go run), on Prism in process, and checks what it prints.
func TestQuickstartRunsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	checkPrints(t, goRun(t, "."))
}

// TestFlinkQuickstart runs the quick start on Flink, unchanged, with the
// flags a user gives to submit it to a Flink job server.
func TestFlinkQuickstart(t *testing.T) {
	js := flinkrun.Shared(t)
	checkPrints(t, goRun(t, ".", "--runner", "flink", "--endpoint", js.Endpoint, "--environment_type", "LOOPBACK", "--parallelism", "2"))
}

// TestQuickstartRunsInANewModule does what the README tells a newcomer:
// copy main.go into a module of their own, point beamjoin at this clone
// and add the requirements (go mod init, go mod edit -require -replace,
// go get .), then run it. beamjoin is required at v0.0.0 and replaced by
// the clone, so no go command looks it up in the module proxy, which does
// not have it. The other modules come from the module cache the
// repository's own build filled and from the module proxy for the rest
// (go get . needs go.mod files of versions the repository's build does
// not: from an empty cache, logr v1.2.2's), with GOSUMDB=off because only
// the proxy is reachable on the machines this runs on.
func TestQuickstartRunsInANewModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "main.go"), src)
	for _, args := range [][]string{
		{"mod", "init", "example.com/mine"},
		{"mod", "edit", "-require", "github.com/beamjoin/beamjoin@v0.0.0", "-replace", "github.com/beamjoin/beamjoin=" + repo},
		{"get", "."},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = newModuleEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s in a new module: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	checkPrints(t, goRun(t, dir))
}

// newModuleEnv is the environment for the go commands of a module of the
// user's own: the module cache first, then the module proxy, and no
// checksum database.
func newModuleEnv() []string {
	return append(os.Environ(), "GOSUMDB=off", "GOFLAGS=")
}

// goRun runs the program in dir with go run and args, and returns its
// standard output.
func goRun(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", append([]string{"run", "."}, args...)...)
	cmd.Dir = dir
	cmd.Env = newModuleEnv()
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if e, ok := err.(*exec.ExitError); ok {
			stderr = string(e.Stderr)
		}
		t.Fatalf("go run in %s: %v\n%s", dir, err, stderr)
	}
	return out
}

func checkPrints(t *testing.T, out []byte) {
	t.Helper()
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(got)
	if diff := cmp.Diff(quickstartPrints, got); diff != "" {
		t.Errorf("quick start printed (-want +got):\n%s", diff)
	}
}

func mustWrite(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
