package join_test

// Tests of the interval join on windowed inputs (SPEC §2.7): the join runs
// in event time across window boundaries, and its records land in the
// windows of their own timestamps under the inputs' window function.

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window/trigger"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.Function2x1(withWindow)
	register.Function3x1(formatWindowCount)
	register.Function1x1(resultKey)
}

// withWindow appends the window the line is in. It observes the window, so
// a line in several windows comes out once per window.
func withWindow(w beam.Window, line string) string { return line + " " + windowOf(w) }

func formatWindowCount(w beam.Window, what string, n int) string {
	return fmt.Sprintf("%s %s x%d", what, windowOf(w), n)
}

func resultKey(r join.Result[string, string, string]) string { return r.Key }

// inGlobal moves formatted lines into the global window, so that passert
// compares them all at once.
func inGlobal(s beam.Scope, lines beam.PCollection) beam.PCollection {
	return beam.WindowInto(s, window.NewGlobalWindows(), lines)
}

// paths are the interval join's two paths, each with inputs of its kind:
// the streaming path on a TestStream, the bounded path on beam.Create.
var paths = []struct {
	name   string
	inputs func(beam.Scope, []event) (left, right beam.PCollection)
	opts   []join.Option
	// aggregates: a GroupByKey in a window other than the global one keeps
	// the path's records. The bounded path's records come after its
	// grouping in the global window, and Prism drops them there as late
	// (see join.Bounded); a batch runner does not.
	aggregates bool
}{
	{"streaming", play, nil, true},
	{"bounded", batch, []join.Option{join.Bounded()}, false},
}

// TestIntervalWindowedInputs joins inputs windowed by the caller: the pair
// a (left at 50 s, right at 70 s) straddles the one-minute boundary and is
// found whatever the windows; each record is in the windows of its own
// timestamp, and a count per window downstream sees it there, once.
func TestIntervalWindowedInputs(t *testing.T) {
	fixed := window.NewFixedWindows(time.Minute)
	sliding := window.NewSlidingWindows(30*time.Second, time.Minute)
	const (
		pair      = "pair a l1@50000 r1@70000 t=70000"
		unmatched = "unmatched b l2@130000 - t=130000"
	)
	tests := []struct {
		name string
		fn   *window.Fn
		// reshuffle moves the windowed inputs through a Reshuffle: Prism
		// then holds an element in several windows as one copy per window.
		reshuffle bool
		records   []string
		counts    []string
	}{
		{"fixed", fixed, false,
			[]string{pair + " [1m0s,2m0s)", unmatched + " [2m0s,3m0s)"},
			[]string{"pair [1m0s,2m0s) x1", "unmatched [2m0s,3m0s) x1"}},
		{"fixed_reshuffled", fixed, true,
			[]string{pair + " [1m0s,2m0s)", unmatched + " [2m0s,3m0s)"},
			[]string{"pair [1m0s,2m0s) x1", "unmatched [2m0s,3m0s) x1"}},
		// A record is in every window that holds its timestamp.
		{"sliding", sliding, false,
			[]string{pair + " [30s,1m30s)", pair + " [1m0s,2m0s)", unmatched + " [1m30s,2m30s)", unmatched + " [2m0s,3m0s)"},
			[]string{"pair [30s,1m30s) x1", "pair [1m0s,2m0s) x1", "unmatched [1m30s,2m30s) x1", "unmatched [2m0s,3m0s) x1"}},
		// Each input element is joined once, however the runner holds it.
		{"sliding_reshuffled", sliding, true,
			[]string{pair + " [30s,1m30s)", pair + " [1m0s,2m0s)", unmatched + " [1m30s,2m30s)", unmatched + " [2m0s,3m0s)"},
			[]string{"pair [30s,1m30s) x1", "pair [1m0s,2m0s) x1", "unmatched [1m30s,2m30s) x1", "unmatched [2m0s,3m0s) x1"}},
	}
	for _, path := range paths {
		for _, tc := range tests {
			t.Run(path.name+"/"+tc.name, func(t *testing.T) {
				p, s := beam.NewPipelineWithRoot()
				left, right := path.inputs(s, onTime(l(50_000, "a", "l1"), r(70_000, "a", "r1"), l(130_000, "b", "l2")))
				left, right = beam.WindowInto(s, tc.fn, left), beam.WindowInto(s, tc.fn, right)
				if tc.reshuffle {
					left, right = beam.Reshuffle(s, left), beam.Reshuffle(s, right)
				}
				opts := append([]join.Option{join.Between(0, 30*time.Second), join.LeftOuter, join.EmitFinal}, path.opts...)
				joined := join.Interval[string, string, string](s, left, right, opts...)
				res, late := joined.Records, joined.Late
				records := beam.ParDo(s, formatResult, res)
				passert.Equals(s, inGlobal(s, beam.ParDo(s, withWindow, records)), toAny(tc.records)...)
				if path.aggregates {
					counts := stats.Count(s, beam.ParDo(s, kindOf, records))
					passert.Equals(s, inGlobal(s, beam.ParDo(s, formatWindowCount, counts)), toAny(tc.counts)...)
				}
				passert.Empty(s, late)
				ptest.RunAndValidate(t, p)
			})
		}
	}
}

// TestIntervalSessionInputs joins inputs in session windows, which a
// stateful DoFn cannot use (they merge): the pair l1–r1 is found although
// its elements are in different sessions, and the records, each assigned
// to a session of its own timestamp, merge downstream: a count per key
// after the join sees key a's two records, 20 s apart, in one session.
//
// The count relies on Prism merging them, which it does only if its
// watermark does not stop between the first record's own session end (80 s)
// and the merged one (100 s): Prism hands a grouping an element once the
// watermark passes the end of the element's own window, before merging
// (TestPrismSplitsSessionsAtWatermarkStop). The join's output watermark
// stops at its timers' times, so CleanupEvery is pinned to exact cleanup
// (timers at 70.001 s and 100.001 s); with the default (11.25 s here) a
// timer at 81.25 s would split the session on Prism, not on a runner that
// merges before it fires.
func TestIntervalSessionInputs(t *testing.T) {
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			left, right := path.inputs(s, onTime(
				l(10_000, "a", "l1"), r(50_000, "a", "r1"), // 40 s apart: two sessions
				l(55_000, "a", "l2"), r(70_000, "a", "r2"),
				l(200_000, "b", "l3"), r(210_000, "b", "r3"),
			))
			sessions := window.NewSessions(30 * time.Second)
			left, right = beam.WindowInto(s, sessions, left), beam.WindowInto(s, sessions, right)
			joined := join.Interval[string, string, string](s, left, right,
				append([]join.Option{join.Between(0, 45*time.Second), join.CleanupEvery(time.Millisecond)}, path.opts...)...)
			res, late := joined.Records, joined.Late
			records := beam.ParDo(s, formatResult, res)
			passert.Equals(s, inGlobal(s, beam.ParDo(s, withWindow, records)),
				"pair a l1@10000 r1@50000 t=50000 [50s,1m20s)",
				"pair a l2@55000 r2@70000 t=70000 [1m10s,1m40s)",
				"pair b l3@200000 r3@210000 t=210000 [3m30s,4m0s)")
			if path.aggregates {
				perKey := stats.Count(s, beam.ParDo(s, resultKey, res))
				passert.Equals(s, inGlobal(s, beam.ParDo(s, formatWindowCount, perKey)),
					"a [50s,1m40s) x2",
					"b [3m30s,4m0s) x1")
			}
			passert.Empty(s, late)
			ptest.RunAndValidate(t, p)
		})
	}
}

// TestPrismSplitsSessionsAtWatermarkStop records a Prism v2.77 behaviour
// that a session-windowed grouping downstream of any stateful step meets:
// two elements of one key at 50 s and 70 s, in 30 s sessions, belong to
// one session [50s,100s), but when the watermark stops at 85 s, between the
// first element's own session end and the merged one, Prism hands the first
// to the grouping alone and the count sees two sessions. Without the stop
// (the watermark going from 50 s straight to the end) they merge. If this
// test fails, Prism has been fixed: drop the pin in
// TestIntervalSessionInputs and the note in README's Runners section.
func TestPrismSplitsSessionsAtWatermarkStop(t *testing.T) {
	tests := []struct {
		name string
		stop int64
		want []string
	}{
		{"no_stop", 0, []string{"a [50s,1m40s) x2"}},
		{"stop_at_85s", 85_000, []string{"a [50s,1m20s) x1", "a [1m10s,1m40s) x1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := teststream.NewConfig()
			must(c.AdvanceWatermark(50_000))
			must(c.AddElements(50_000, "a"))
			must(c.AddElements(70_000, "a"))
			if tc.stop != 0 {
				must(c.AdvanceWatermark(tc.stop))
			}
			must(c.AdvanceWatermarkToInfinity())
			p, s := beam.NewPipelineWithRoot()
			col := beam.WindowInto(s, window.NewSessions(30*time.Second), teststream.Create(s, c))
			counts := stats.Count(s, col)
			passert.Equals(s, inGlobal(s, beam.ParDo(s, formatWindowCount, counts)), toAny(tc.want)...)
			ptest.RunAndValidate(t, p)
		})
	}
}

// TestIntervalLateWindowed checks that late elements of windowed inputs
// come out in the windows of their own timestamps, like the results.
func TestIntervalLateWindowed(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, []event{
		l(10_000, "a", "l1"),
		l(58_000, "a", "l2"),
		wm(16_000),           // l1 expires at 15 s + 1 ms
		r(12_000, "a", "r1"), // could have matched l1, now gone: late
		r(61_000, "a", "r2"), // joins l2 across the boundary
	})
	fixed := window.NewFixedWindows(time.Minute)
	left, right = beam.WindowInto(s, fixed, left), beam.WindowInto(s, fixed, right)
	joined := join.Interval[string, string, string](s, left, right,
		join.Between(-5*time.Second, 5*time.Second), join.CleanupEvery(time.Millisecond))
	res, late := joined.Records, joined.Late
	passert.Equals(s, inGlobal(s, beam.ParDo(s, withWindow, beam.ParDo(s, formatResult, res))),
		"pair a l2@58000 r2@61000 t=61000 [1m0s,2m0s)")
	passert.Equals(s, inGlobal(s, beam.ParDo(s, withWindow, beam.ParDo(s, formatLate, late))),
		"late right a r1@12000 [0s,1m0s)")
	ptest.RunAndValidate(t, p)
}

// TestIntervalWindowingErrors checks that inputs windowed differently are
// a construction error naming both windowings, never a panic.
func TestIntervalWindowingErrors(t *testing.T) {
	fixed := window.NewFixedWindows(time.Minute)
	tests := []struct {
		name        string
		left, right func(beam.Scope, beam.PCollection) beam.PCollection
		want        string
	}{
		{"fixed_sizes",
			windowed(fixed), windowed(window.NewFixedWindows(2 * time.Minute)),
			"the left by window.NewFixedWindows(1m0s), the right by window.NewFixedWindows(2m0s)"},
		{"windowed_and_global",
			windowed(window.NewSessions(time.Minute)), nil,
			"the left by window.NewSessions(1m0s), the right by window.NewGlobalWindows()"},
		{"allowed_lateness",
			windowed(fixed), windowed(fixed, beam.AllowedLateness(time.Minute)),
			"the left by window.NewFixedWindows(1m0s), the right by window.NewFixedWindows(1m0s) with allowed lateness 1m0s"},
		{"trigger",
			windowed(fixed, beam.Trigger(trigger.AfterCount(2))), windowed(fixed),
			"the left by window.NewFixedWindows(1m0s) with trigger &trigger.AfterCountTrigger{elementCount:2}, the right by window.NewFixedWindows(1m0s)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			left, right := play(s, onTime(l(1, "a", "l")))
			if tc.left != nil {
				left = tc.left(s, left)
			}
			if tc.right != nil {
				right = tc.right(s, right)
			}
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("TryInterval() panicked: %v", r)
					}
				}()
				_, err = join.TryInterval[string, string, string](s, left, right, join.Between(0, time.Second))
			}()
			want := "beamjoin: join.Interval: the inputs are windowed differently: " + tc.want +
				"; window both alike (the join runs in event time across windows and gives its results the inputs' windowing)"
			if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func windowed(fn *window.Fn, opts ...beam.WindowIntoOption) func(beam.Scope, beam.PCollection) beam.PCollection {
	return func(s beam.Scope, col beam.PCollection) beam.PCollection { return beam.WindowInto(s, fn, col, opts...) }
}
