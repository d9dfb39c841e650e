package join_test

// Tests that the interval join's outputs keep its allowed lateness (SPEC
// §2.5): a record made by an element the join took in within
// AllowedLateness, behind the watermark, survives a windowed aggregation
// downstream of the join.

import (
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// TestIntervalOutputsKeepTheLargerLateness checks the windowing Interval
// gives its outputs for windowed inputs: the inputs' window function, and
// as allowed lateness the larger of the inputs' and the join's.
func TestIntervalOutputsKeepTheLargerLateness(t *testing.T) {
	for _, tc := range []struct {
		name         string
		inputs, join time.Duration
		want         time.Duration
	}{
		{"neither", 0, 0, 0},
		{"the_join's", 0, 30 * time.Second, 30 * time.Second},
		{"the_inputs'", time.Minute, 30 * time.Second, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			in := beam.WindowInto(s, window.NewFixedWindows(time.Minute), beam.ParDo(s, modelKeyed, beam.Create(s, "a")),
				beam.AllowedLateness(tc.inputs))
			out := join.Interval[string, string, string](s, in, in, join.Between(0, time.Second), join.AllowedLateness(tc.join))
			for name, col := range map[string]beam.PCollection{"Records": out.Records, "Late": out.Late} {
				ws := col.WindowingStrategy()
				if got := time.Duration(ws.AllowedLateness) * time.Millisecond; got != tc.want {
					t.Errorf("%s: allowed lateness %v, want %v", name, got, tc.want)
				}
				if !ws.Fn.Equals(window.NewFixedWindows(time.Minute)) {
					t.Errorf("%s: windowed by %v, want the inputs' fixed windows of a minute", name, ws.Fn)
				}
			}
		})
	}
}

// TestIntervalLateAllowedPairSurvivesWindowedCount runs inputs in fixed
// windows of a minute, with Beam's default allowed lateness of zero,
// through an EmitImmediate join with AllowedLateness(30s), and counts its
// records per window downstream. r1 arrives 18 s behind the watermark,
// after its window [0s,1m) has closed, but within the join's lateness, so
// the join pairs it with l1, and no timer holds the pair: its count must
// still be there. (With only the inputs' lateness, Prism's aggregation
// drops the pair as late.) The pair of l2 and r2 is on time.
func TestIntervalLateAllowedPairSurvivesWindowedCount(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, []event{
		l(50_000, "a", "l1"),
		wm(70_000),           // the window [0s,1m) is closed; l1 is kept until 85 s
		r(52_000, "a", "r1"), // 18 s behind the watermark: within the join's 30 s
		l(71_000, "a", "l2"),
		r(73_000, "a", "r2"),
	})
	fixed := window.NewFixedWindows(time.Minute)
	left, right = beam.WindowInto(s, fixed, left), beam.WindowInto(s, fixed, right)
	joined := join.Interval[string, string, string](s, left, right,
		join.Between(0, 5*time.Second), join.AllowedLateness(30*time.Second), join.CleanupEvery(time.Millisecond))
	counts := stats.Count(s, beam.ParDo(s, formatResult, joined.Records))
	passert.Equals(s, inGlobal(s, beam.ParDo(s, formatWindowCount, counts)),
		"pair a l1@50000 r1@52000 t=52000 [0s,1m0s) x1",
		"pair a l2@71000 r2@73000 t=73000 [1m0s,2m0s) x1")
	passert.Empty(s, joined.Late)
	ptest.RunAndValidate(t, p)
}
