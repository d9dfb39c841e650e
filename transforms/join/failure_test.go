package join_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/beamjoin/beamjoin/internal/prismrun"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.DoFn3x1[context.Context, join.Result[string, string, string], func(join.Result[string, string, string]), error](&failOnKeyFn{})
	register.Emitter1[join.Result[string, string, string]]()
	register.DoFn1x0[join.Result[string, string, string]](&collectFailureRunFn{})
}

// failArmed makes failOnKeyFn fail: the pipelines run in this process
// (LOOPBACK), so the test arms and disarms it between runs.
var failArmed atomic.Bool

// failOnKeyFn stands for a user's DoFn downstream of the join that cannot
// handle one record: while armed, it fails on the first pair of key Key
// with an error that names the key; every other record passes through.
type failOnKeyFn struct{ Key string }

func (f *failOnKeyFn) ProcessElement(ctx context.Context, r join.Result[string, string, string], emit func(join.Result[string, string, string])) error {
	if failArmed.Load() && r.Key == f.Key && r.Kind == join.KindPair {
		return fmt.Errorf("failOnKeyFn: cannot write the pair of key %q (left %s, right %s)", r.Key, *r.Left, *r.Right)
	}
	emit(r)
	return nil
}

// failureRuns holds what each run's collector received, by run.
var failureRuns = struct {
	sync.Mutex
	got map[string][]string
}{got: map[string][]string{}}

type collectFailureRunFn struct{ Run string }

func (f *collectFailureRunFn) ProcessElement(r join.Result[string, string, string]) {
	failureRuns.Lock()
	defer failureRuns.Unlock()
	failureRuns.got[f.Run] = append(failureRuns.got[f.Run], fmt.Sprintf("%s %s %s+%s", r.Kind, r.Key, *r.Left, *r.Right))
}

// TestFailureDownstream runs an interval join on Prism whose results go
// through a DoFn that fails on one record, of key k3: the job fails, with
// an error that names the key, and does not hang or succeed with the
// record missing. A rerun of the same pipeline, the fault gone, produces
// every pair, as nested loops over the inputs find them: nothing of the
// failed run (state, timers, buffered elements) leaks into it.
func TestFailureDownstream(t *testing.T) {
	const failKey = "k3"
	// Five keys; for each, a left element and right elements 0, 400 and
	// 1500 ms after it (bounds [0, 1s]: the first two pair).
	type ev struct {
		side      oSide
		key, val  string
		timestamp int64
	}
	var evs []ev
	for i := range 5 {
		k := fmt.Sprintf("k%d", i)
		base := int64(10_000 + 2000*i)
		evs = append(evs, ev{oLeft, k, "l" + k, base})
		for j, d := range []int64{0, 400, 1500} {
			evs = append(evs, ev{oRight, k, fmt.Sprintf("r%s.%d", k, j), base + d})
		}
	}
	var want []string
	for _, l := range evs {
		for _, r := range evs {
			if l.side == oLeft && r.side == oRight && l.key == r.key && r.timestamp-l.timestamp >= 0 && r.timestamp-l.timestamp <= 1000 {
				want = append(want, fmt.Sprintf("%s %s %s+%s", join.KindPair, l.key, l.val, r.val))
			}
		}
	}
	slices.Sort(want)

	pipeline := func(run string) *beam.Pipeline {
		ts := teststream.NewConfig()
		for i, e := range evs {
			must(ts.AddElements(e.timestamp, dEvent{Side: int(e.side), Key: e.key, Val: e.val}))
			if i%4 == 3 {
				must(ts.AdvanceWatermark(e.timestamp))
			}
		}
		must(ts.AdvanceWatermarkToInfinity())
		p, s := beam.NewPipelineWithRoot()
		left, right := beam.ParDo2(s, &splitEventFn{}, teststream.Create(s, ts))
		res := join.Interval[string, string, string](s, left, right, join.Between(0, time.Second), join.Inner, join.EmitImmediate).Records
		checked := beam.ParDo(s, &failOnKeyFn{Key: failKey}, res)
		beam.ParDo0(s, &collectFailureRunFn{Run: run}, checked)
		return p
	}

	// The collector starts empty, and a retried job's failed attempt
	// leaves nothing in it, so the test repeats cleanly (-count).
	reset := func() {
		failureRuns.Lock()
		defer failureRuns.Unlock()
		clear(failureRuns.got)
	}
	reset()
	defer prismrun.OnRetry(reset)()
	failArmed.Store(true)
	err := ptest.Run(pipeline("failing"))
	failArmed.Store(false)
	if err == nil {
		t.Fatal("the pipeline succeeded, though a DoFn downstream of the join failed on a record of key k3")
	}
	if !strings.Contains(err.Error(), `key "k3"`) {
		t.Errorf("the pipeline's error does not name the key k3:\n%v", err)
	}
	t.Logf("the failed run: %.300s", err)

	if err := ptest.Run(pipeline("rerun")); err != nil {
		t.Fatalf("the rerun failed: %v", err)
	}
	failureRuns.Lock()
	got := slices.Sorted(slices.Values(failureRuns.got["rerun"]))
	failureRuns.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the rerun's results differ from every pair of the inputs (-want +got):\n%s", diff)
	}
}
