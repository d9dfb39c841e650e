package join_test

// Window and CoGroup under triggers other than the default, set by the
// caller with beam.WindowInto: the runner fires the panes, and each
// pane's records are checked exactly, with the pane they are in. The
// streams are TestStreams, so the panes do not depend on the schedule:
// Prism moves to the next event only when everything before it is done,
// and fires an element-count trigger per key on each element it groups.

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window/trigger"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.Function4x1(describeWindowResultPane)
	register.Function4x1(describeGroupPane)
	register.Function1x2(timedKV)
	register.Function4x1(describePaneValues)
}

// paneName writes a pane as its timing and index: "early#0", "ontime#2".
func paneName(pn beam.PaneInfo) string {
	return fmt.Sprintf("%s#%d", pn.Timing, pn.Index)
}

// describeWindowResultPane is describeWindowResult with the record's pane
// first: "early#0 pair a [0s,10s) l1@1s r1@2s".
func describeWindowResultPane(pn beam.PaneInfo, w beam.Window, et beam.EventTime, r join.WindowResult[string, string, note]) string {
	return paneName(pn) + " " + describeWindowResult(w, et, r)
}

// describeGroupPane is describeGroup with the Group's pane first.
func describeGroupPane(pn beam.PaneInfo, w beam.Window, et beam.EventTime, g join.Group[string, string, note]) string {
	return paneName(pn) + " " + describeGroup(w, et, g)
}

// triggerCase is a stream, the windowing its inputs are given (with a
// trigger), and the records of each pane of Window (FullOuter) and of
// CoGroup, for discarding and for accumulating panes.
type triggerCase struct {
	name     string
	events   func(c *teststream.Config)
	windowFn *window.Fn
	trigger  trigger.Trigger
	lateness time.Duration

	discarding, accumulating struct{ pairs, groups []string }
}

func TestWindowAndCoGroupFirePanesByTheInputsTrigger(t *testing.T) {
	var cases []triggerCase

	// The global window, firing every two elements of a key. On a, l1 and
	// r1 fire pane 0, l2 and l3 pane 1, r2 and l4 pane 2; l5 waits for the
	// end of the input, the end of the global window: the on-time pane.
	// On b, rb1 waits until lb1 comes.
	global := triggerCase{
		name: "global_window_repeated_element_count",
		events: func(c *teststream.Config) {
			must(c.AdvanceWatermark(0))
			must(c.AddElements(1000, leftAt("a", 1*time.Second, "l1"), rightAt("a", 2*time.Second, "r1"), rightAt("b", 1*time.Second, "rb1")))
			must(c.AddElements(3000, leftAt("a", 3*time.Second, "l2"), leftAt("a", 4*time.Second, "l3")))
			must(c.AddElements(5000, rightAt("a", 5*time.Second, "r2"), leftAt("a", 6*time.Second, "l4"), leftAt("b", 5*time.Second, "lb1")))
			must(c.AddElements(7000, leftAt("a", 7*time.Second, "l5")))
			must(c.AdvanceWatermarkToInfinity())
		},
		windowFn: window.NewGlobalWindows(),
		trigger:  trigger.Repeat(trigger.AfterCount(2)),
	}
	global.discarding.pairs = []string{
		"early#0 pair a global l1@1s r1@2s",
		"early#1 unmatched a global l2@3s -",
		"early#1 unmatched a global l3@4s -",
		"early#2 pair a global l4@6s r2@5s",
		"ontime#3 unmatched a global l5@7s -",
		"early#0 pair b global lb1@5s rb1@1s",
	}
	global.discarding.groups = []string{
		"early#0 a global [l1] [r1]",
		"early#1 a global [l2 l3] []",
		"early#2 a global [l4] [r2]",
		"ontime#3 a global [l5] []",
		"early#0 b global [lb1] [rb1]",
	}
	// Accumulating: each pane holds every value of the key so far, and
	// its records are the join of them all. The last pane of b is
	// Prism's (TestPrismRefiresAccumulatingPanes): at the end of the
	// window it fires b's values again, though nothing came since its
	// last pane; Beam's model fires no such pane.
	global.accumulating.pairs = concat(
		[]string{"early#0 pair a global l1@1s r1@2s"},
		pairsOf("early#1 pair a global", []string{"l1@1s", "l2@3s", "l3@4s"}, []string{"r1@2s"}),
		pairsOf("early#2 pair a global", []string{"l1@1s", "l2@3s", "l3@4s", "l4@6s"}, []string{"r1@2s", "r2@5s"}),
		pairsOf("ontime#3 pair a global", []string{"l1@1s", "l2@3s", "l3@4s", "l4@6s", "l5@7s"}, []string{"r1@2s", "r2@5s"}),
		[]string{"early#0 pair b global lb1@5s rb1@1s"},
		[]string{"ontime#1 pair b global lb1@5s rb1@1s"}, // Prism's
	)
	global.accumulating.groups = []string{
		"early#0 a global [l1] [r1]",
		"early#1 a global [l1 l2 l3] [r1]",
		"early#2 a global [l1 l2 l3 l4] [r1 r2]",
		"ontime#3 a global [l1 l2 l3 l4 l5] [r1 r2]",
		"early#0 b global [lb1] [rb1]",
		"ontime#1 b global [lb1] [rb1]", // Prism's
	}
	cases = append(cases, global)

	// [0s,10s), firing early every two elements, on time, and late for
	// each late element within 10 s of allowed lateness. l1 and r1 fire
	// early pane 0, l2 and r2 early pane 1; l3 waits for the watermark:
	// the on-time pane. r3 comes after it, within the allowed lateness: a
	// late pane. r4 comes after the window expired (20 s): dropped by the
	// runner, in no pane.
	earlyLate := triggerCase{
		name: "fixed_windows_early_on_time_and_late_panes",
		events: func(c *teststream.Config) {
			must(c.AdvanceWatermark(0))
			must(c.AddElements(1000, leftAt("a", 1*time.Second, "l1"), rightAt("a", 2*time.Second, "r1")))
			must(c.AddElements(3000, leftAt("a", 3*time.Second, "l2"), rightAt("a", 4*time.Second, "r2")))
			must(c.AddElements(5000, leftAt("a", 5*time.Second, "l3")))
			must(c.AdvanceWatermark(11_000))
			must(c.AddElements(6000, rightAt("a", 6*time.Second, "r3")))
			must(c.AdvanceWatermark(21_000))
			must(c.AddElements(7000, rightAt("a", 7*time.Second, "r4")))
			must(c.AdvanceWatermarkToInfinity())
		},
		windowFn: fixed10s,
		trigger:  trigger.AfterEndOfWindow().EarlyFiring(trigger.AfterCount(2)).LateFiring(trigger.AfterCount(1)),
		lateness: 10 * time.Second,
	}
	earlyLate.discarding.pairs = []string{
		"early#0 pair a [0s,10s) l1@1s r1@2s",
		"early#1 pair a [0s,10s) l2@3s r2@4s",
		"ontime#2 unmatched a [0s,10s) l3@5s -",
		"late#3 unmatched a [0s,10s) - r3@6s",
	}
	earlyLate.discarding.groups = []string{
		"early#0 a [0s,10s) [l1] [r1]",
		"early#1 a [0s,10s) [l2] [r2]",
		"ontime#2 a [0s,10s) [l3] []",
		"late#3 a [0s,10s) [] [r3]",
	}
	// Accumulating, as Prism fires it (TestPrismRefiresAccumulatingPanes):
	// the pane that r3 fires after the on-time pane is marked early (Beam's
	// model: late#3), and the same values fire twice more, when the
	// watermark passes the window's end again (ontime#4) and when the
	// window expires (late#5), with nothing new: Beam's model fires
	// neither.
	lefts, rights := []string{"l1@1s", "l2@3s", "l3@5s"}, []string{"r1@2s", "r2@4s", "r3@6s"}
	earlyLate.accumulating.pairs = concat(
		[]string{"early#0 pair a [0s,10s) l1@1s r1@2s"},
		pairsOf("early#1 pair a [0s,10s)", []string{"l1@1s", "l2@3s"}, []string{"r1@2s", "r2@4s"}),
		pairsOf("ontime#2 pair a [0s,10s)", []string{"l1@1s", "l2@3s", "l3@5s"}, []string{"r1@2s", "r2@4s"}),
		pairsOf("early#3 pair a [0s,10s)", lefts, rights),
		pairsOf("ontime#4 pair a [0s,10s)", lefts, rights), // Prism's
		pairsOf("late#5 pair a [0s,10s)", lefts, rights),   // Prism's
	)
	earlyLate.accumulating.groups = []string{
		"early#0 a [0s,10s) [l1] [r1]",
		"early#1 a [0s,10s) [l1 l2] [r1 r2]",
		"ontime#2 a [0s,10s) [l1 l2 l3] [r1 r2]",
		"early#3 a [0s,10s) [l1 l2 l3] [r1 r2 r3]",
		"ontime#4 a [0s,10s) [l1 l2 l3] [r1 r2 r3]", // Prism's
		"late#5 a [0s,10s) [l1 l2 l3] [r1 r2 r3]",   // Prism's
	}
	cases = append(cases, earlyLate)

	for _, c := range cases {
		for _, mode := range []struct {
			name          string
			accumulate    bool
			pairs, groups []string
		}{
			{"discarding", false, c.discarding.pairs, c.discarding.groups},
			{"accumulating", true, c.accumulating.pairs, c.accumulating.groups},
		} {
			t.Run(c.name+"/"+mode.name, func(t *testing.T) {
				cfg := teststream.NewConfig()
				c.events(&cfg)
				p, s := beam.NewPipelineWithRoot()
				left, right := beam.ParDo2(s, splitTimed, teststream.Create(s, cfg))
				opts := []beam.WindowIntoOption{beam.Trigger(c.trigger), beam.AllowedLateness(c.lateness), beam.PanesDiscard()}
				if mode.accumulate {
					opts[2] = beam.PanesAccumulate()
				}
				left = beam.WindowInto(s, c.windowFn, left, opts...)
				right = beam.WindowInto(s, c.windowFn, right, opts...)
				pairs := join.Window[string, string, note](s.Scope("window"), left, right, join.FullOuter).Records
				groups := join.CoGroup[string, string, note](s.Scope("cogroup"), left, right).Records
				gotPairs := gather(s, beam.ParDo(s, describeWindowResultPane, pairs))
				gotGroups := gather(s, beam.ParDo(s, describeGroupPane, groups))
				if err := ptest.Run(p); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(sortedList(mode.pairs), gotPairs()); diff != "" {
					t.Errorf("join.Window records per pane differ (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(sortedList(mode.groups), gotGroups()); diff != "" {
					t.Errorf("join.CoGroup groups per pane differ (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// pairsOf writes every pair of a left and a right value after prefix:
// pairsOf("p", [l1 l2], [r1]) is ["p l1 r1", "p l2 r1"].
func pairsOf(prefix string, lefts, rights []string) []string {
	var out []string
	for _, l := range lefts {
		for _, r := range rights {
			out = append(out, prefix+" "+l+" "+r)
		}
	}
	return out
}

// timedKV is an element of a test stream as a KV of its key and value.
func timedKV(e timed) (string, string) { return e.Key, e.Value }

// describePaneValues writes a GroupByKey's group with its pane: "early#0
// a [0s,10s) [l1 r1]".
func describePaneValues(pn beam.PaneInfo, w beam.Window, key string, values func(*string) bool) string {
	var vs []string
	var v string
	for values(&v) {
		vs = append(vs, v)
	}
	name := fmt.Sprint(w)
	if iw, ok := w.(window.IntervalWindow); ok {
		name = bounds(iw.Start.ToTime(), iw.End.ToTime())
	} else if _, ok := w.(window.GlobalWindow); ok {
		name = "global"
	}
	return fmt.Sprintf("%s %s %s %s", paneName(pn), key, name, sortedJoin(vs))
}

// TestPrismRefiresAccumulatingPanes shows, with Beam's GroupByKey alone
// (no join), how Prism v2.77 fires accumulating panes, against Beam's
// model (Java's ReduceFnRunner, with the on-time and closing behaviours
// the Go SDK sets: FIRE_IF_NONEMPTY, EMIT_IF_NONEMPTY), which fires a
// pane only when an element came since the last one. Prism keeps a
// window's fired elements pending until the window expires, and pending
// elements hold the aggregation's input watermark. So it fires the
// accumulated values again, unchanged, when the watermark passes the
// window's end and when the window expires; and a late firing after the
// on-time pane is marked early. TestWindowAndCoGroupFirePanesByTheInputsTrigger
// expects Prism's panes in accumulating mode; this test fails when Prism
// fires as the model does, to say that it should expect the model's.
func TestPrismRefiresAccumulatingPanes(t *testing.T) {
	global := func(c *teststream.Config) {
		must(c.AdvanceWatermark(0))
		must(c.AddElements(1000, leftAt("a", 1*time.Second, "v1"), leftAt("a", 2*time.Second, "v2")))
		must(c.AdvanceWatermarkToInfinity())
	}
	earlyLate := func(c *teststream.Config) {
		must(c.AdvanceWatermark(0))
		must(c.AddElements(1000, leftAt("a", 1*time.Second, "v1"), leftAt("a", 2*time.Second, "v2")))
		must(c.AddElements(3000, leftAt("a", 3*time.Second, "v3")))
		must(c.AdvanceWatermark(11_000))
		must(c.AddElements(4000, leftAt("a", 4*time.Second, "v4")))
		must(c.AdvanceWatermarkToInfinity())
	}
	for _, tt := range []struct {
		name     string
		events   func(c *teststream.Config)
		windowFn *window.Fn
		trigger  trigger.Trigger
		lateness time.Duration
		model    []string // Beam's model
		prism    []string // Prism v2.77
	}{
		{
			name:     "global_window_repeated_element_count",
			events:   global,
			windowFn: window.NewGlobalWindows(),
			trigger:  trigger.Repeat(trigger.AfterCount(2)),
			model:    []string{"early#0 a global [v1 v2]"},
			prism:    []string{"early#0 a global [v1 v2]", "ontime#1 a global [v1 v2]"},
		},
		{
			name:     "fixed_windows_early_and_late_firings",
			events:   earlyLate,
			windowFn: fixed10s,
			trigger:  trigger.AfterEndOfWindow().EarlyFiring(trigger.AfterCount(2)).LateFiring(trigger.AfterCount(1)),
			lateness: 10 * time.Second,
			model: []string{
				"early#0 a [0s,10s) [v1 v2]",
				"ontime#1 a [0s,10s) [v1 v2 v3]",
				"late#2 a [0s,10s) [v1 v2 v3 v4]",
			},
			prism: []string{
				"early#0 a [0s,10s) [v1 v2]",
				"ontime#1 a [0s,10s) [v1 v2 v3]",
				"early#2 a [0s,10s) [v1 v2 v3 v4]",
				"ontime#3 a [0s,10s) [v1 v2 v3 v4]",
				"late#4 a [0s,10s) [v1 v2 v3 v4]",
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := teststream.NewConfig()
			tt.events(&cfg)
			p, s := beam.NewPipelineWithRoot()
			kvs := beam.ParDo(s, timedKV, teststream.Create(s, cfg))
			kvs = beam.WindowInto(s, tt.windowFn, kvs, beam.Trigger(tt.trigger), beam.AllowedLateness(tt.lateness), beam.PanesAccumulate())
			got := gather(s, beam.ParDo(s, describePaneValues, beam.GroupByKey(s, kvs)))
			if err := ptest.Run(p); err != nil {
				t.Fatal(err)
			}
			if cmp.Equal(sortedList(tt.model), got()) {
				t.Fatalf("Prism now fires accumulating panes as Beam's model does: expect the model's panes in TestWindowAndCoGroupFirePanesByTheInputsTrigger, and update docs/design/window.md")
			}
			if diff := cmp.Diff(sortedList(tt.prism), got()); diff != "" {
				t.Errorf("GroupByKey's accumulating panes on Prism differ (-want +got):\n%s", diff)
			}
		})
	}
}
