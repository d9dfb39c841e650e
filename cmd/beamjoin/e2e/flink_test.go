package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamjoin/beamjoin/internal/flinkrun"
	"github.com/google/go-cmp/cmp"
)

// makeRun is make run's command: the sample orders and payments, a left
// outer join with final emission.
var makeRun = []string{"interval", "--left", "testdata/orders.jsonl", "--right", "testdata/payments.jsonl",
	"--key", "order_id", "--time", "ts", "--lower", "0", "--upper", "15m", "--type", "left", "--emit", "final"}

// TestFlinkCommand runs make run's join on Flink, read whole (Flink's
// batch mode) and replayed as a stream with --watermark-lag (its streaming
// mode), with workers in the command's process and in processes of their
// own: its records, and its summary, must be those of the same command on
// Prism in process; read whole, that is make run's output.
func TestFlinkCommand(t *testing.T) {
	js := flinkrun.Shared(t)
	bin := beamjoinBinary(t)
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	withRepo := func(args []string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			if strings.HasPrefix(a, "testdata/") {
				a = filepath.Join(repo, a)
			}
			out[i] = a
		}
		return out
	}
	flink := []string{"--runner", "flink", "--endpoint", js.Endpoint, "--parallelism", "2"}
	t.Cleanup(func() { js.RemoveArtifacts() })
	for _, mode := range []struct {
		name  string
		extra []string
	}{
		{"whole", nil},
		{"replay", []string{"--watermark-lag", "10m"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			args := append(withRepo(makeRun), mode.extra...)
			prism := mustRun(t, "", append(args, "--out", "out.jsonl")...)
			want := lines(prism.file(t, "out.jsonl"))
			if len(want) == 0 {
				t.Fatal("the Prism run wrote no records")
			}
			for _, env := range []string{"loopback", "process"} {
				t.Run(env, func(t *testing.T) {
					dir := t.TempDir()
					fargs := append(append(args, flink...), "--out", filepath.Join(dir, "out.jsonl"))
					if env == "process" {
						fargs = append(fargs, processWorker(t, dir, bin)...)
					} else {
						fargs = append(fargs, "--environment_type", "LOOPBACK")
					}
					r := run(t, dir, fargs...)
					if r.code != 0 {
						t.Fatalf("beamjoin on Flink: exit status %d\n%s", r.code, r.stderr)
					}
					if diff := cmp.Diff(want, lines(r.file(t, "out.jsonl"))); diff != "" {
						t.Errorf("records on Flink differ from Prism's (-Prism +Flink):\n%s", diff)
					}
					// Workers in processes of their own cannot write the
					// accounting this process reads: the command then sums
					// up from Beam's counters, with the fates and without
					// the dead letters' reasons. The counts both show must
					// agree.
					want, got := counters(t, prism.stderr), counters(t, r.stderr)
					if env == "process" {
						for k := range got {
							if _, ok := want[k]; !ok {
								delete(got, k)
							}
						}
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("summary on Flink differs from Prism's (-Prism +Flink):\n%s", diff)
					}
				})
			}
		})
	}
}
