package join_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.Function2x1(describeWindowResult)
	register.Function2x1(describeWindowResultTime)
}

// describeWindowResult writes a record as "kind key window left right",
// e.g. "pair a [0s,10s) l1@1s r1@3s", with "-" for an absent side. It adds
// a complaint to the line if the record breaks an invariant that every
// record must keep, so that the tests' exact comparisons check them too.
func describeWindowResult(et beam.EventTime, r join.WindowResult[string, string, note]) string {
	left, right := "-", "-"
	if r.Left != nil {
		left = *r.Left + "@" + since(r.LeftTime)
	}
	if r.Right != nil {
		right = r.Right.Text + "@" + since(r.RightTime)
	}
	line := fmt.Sprintf("%v %s %s %s %s", r.Kind, r.Key, windowName(r.WindowStart, r.WindowEnd), left, right)
	if want := r.WindowEnd.Add(-time.Millisecond); !r.Time.Equal(want) || !et.ToTime().Equal(want) {
		line += fmt.Sprintf(" (BAD TIME: Time %s, element timestamp %s, want the window's max timestamp %s)", since(r.Time), since(et.ToTime()), since(want))
	}
	if (r.Left == nil) != r.LeftTime.IsZero() || (r.Right == nil) != r.RightTime.IsZero() {
		line += " (BAD: a side's value and time disagree on whether it is present)"
	}
	if (r.Kind == join.KindPair) != (r.Left != nil && r.Right != nil) {
		line += " (BAD: kind and sides disagree)"
	}
	return line
}

// describeWindowResultTime writes only a record's key, its Time and its
// element timestamp.
func describeWindowResultTime(et beam.EventTime, r join.WindowResult[string, string, note]) string {
	return fmt.Sprintf("%s Time=%s timestamp=%s", r.Key, since(r.Time), since(et.ToTime()))
}

// windowName writes a window's bounds, "[10s,20s)", or "global".
func windowName(start, end time.Time) string {
	if start.Equal(mtime.MinTimestamp.ToTime()) && end.Equal(mtime.EndOfGlobalWindowTime.ToTime().Add(time.Millisecond)) {
		return "global"
	}
	return bounds(start, end)
}

// The test inputs. Each is small enough to join by hand; the expected
// outputs below are those hand joins.
var (
	// tumbling, in 10 s windows: key a has values on both sides in
	// [0s,10s) and only a left one in [10s,20s); b has two left values
	// in [0s,10s) and a right one in [10s,20s); c's left value at exactly
	// 10 s is in [10s,20s), with r4, not in [0s,10s) with r5; d is only on
	// the left, e only on the right.
	tumbling = []timed{
		leftAt("a", 1*time.Second, "l1"),
		leftAt("a", 12*time.Second, "l2"),
		leftAt("b", 5*time.Second, "l3"),
		leftAt("b", 6*time.Second, "l6"),
		leftAt("c", 10*time.Second, "l4"),
		leftAt("d", 3*time.Second, "l5"),
		rightAt("a", 3*time.Second, "r1"),
		rightAt("a", 8*time.Second, "r2"),
		rightAt("b", 15*time.Second, "r3"),
		rightAt("c", 19*time.Second, "r4"),
		rightAt("c", 9*time.Second, "r5"),
		rightAt("e", 7*time.Second, "r6"),
	}
	fixed10s = window.NewFixedWindows(10 * time.Second)

	// sliding, in 10 s windows every 5 s: l1 and r1 share [0s,10s) and
	// [5s,15s); r2 is in [5s,15s) with l1 and alone in [10s,20s); l2 is
	// alone in both its windows.
	sliding = []timed{
		leftAt("a", 6*time.Second, "l1"),
		leftAt("b", 1*time.Second, "l2"),
		rightAt("a", 8*time.Second, "r1"),
		rightAt("a", 12*time.Second, "r2"),
	}
	sliding10sEvery5s = window.NewSlidingWindows(5*time.Second, 10*time.Second)

	// sessions, with a 5 s gap: on key a, l1 and l2 are 7 s apart but r1
	// between them joins them into one session [0s,12s), so sessions merge
	// across the two inputs; r2 is a session of its own. b's values are
	// 9 s apart: two sessions.
	sessions = []timed{
		leftAt("a", 0, "l1"),
		leftAt("a", 7*time.Second, "l2"),
		leftAt("b", 1*time.Second, "l3"),
		rightAt("a", 3*time.Second, "r1"),
		rightAt("a", 20*time.Second, "r2"),
		rightAt("b", 10*time.Second, "r3"),
	}
	sessions5s = window.NewSessions(5 * time.Second)
)

func TestWindow(t *testing.T) {
	tumblingPairs := []string{
		"pair a [0s,10s) l1@1s r1@3s",
		"pair a [0s,10s) l1@1s r2@8s",
		"pair c [10s,20s) l4@10s r4@19s",
	}
	tumblingLeftOnly := []string{
		"unmatched a [10s,20s) l2@12s -",
		"unmatched b [0s,10s) l3@5s -",
		"unmatched b [0s,10s) l6@6s -",
		"unmatched d [0s,10s) l5@3s -",
	}
	tumblingRightOnly := []string{
		"unmatched b [10s,20s) - r3@15s",
		"unmatched c [0s,10s) - r5@9s",
		"unmatched e [0s,10s) - r6@7s",
	}
	tests := []struct {
		name     string
		elements []timed
		// windowFn, if set, windows the inputs before the join is added, as
		// a caller would with beam.WindowInto.
		windowFn *window.Fn
		opts     []join.Option
		want     []string
	}{
		{
			name:     "inner_by_default_emits_each_pair_of_a_key_and_window",
			elements: tumbling,
			opts:     []join.Option{join.WindowInto(fixed10s)},
			want:     tumblingPairs,
		},
		{
			name:     "left_outer_adds_each_left_value_whose_window_has_no_right_value",
			elements: tumbling,
			opts:     []join.Option{join.WindowInto(fixed10s), join.LeftOuter},
			want:     concat(tumblingPairs, tumblingLeftOnly),
		},
		{
			name:     "right_outer_adds_each_right_value_whose_window_has_no_left_value",
			elements: tumbling,
			opts:     []join.Option{join.RightOuter, join.WindowInto(fixed10s)},
			want:     concat(tumblingPairs, tumblingRightOnly),
		},
		{
			name:     "full_outer_adds_both",
			elements: tumbling,
			opts:     []join.Option{join.WindowInto(fixed10s), join.FullOuter},
			want:     concat(tumblingPairs, tumblingLeftOnly, tumblingRightOnly),
		},
		{
			name:     "inputs_windowed_by_the_caller_join_in_their_windows",
			elements: tumbling,
			windowFn: fixed10s,
			opts:     []join.Option{join.Inner},
			want:     tumblingPairs,
		},
		{
			name:     "unwindowed_inputs_join_per_key_in_the_global_window",
			elements: tumbling,
			want: []string{
				"pair a global l1@1s r1@3s",
				"pair a global l1@1s r2@8s",
				"pair a global l2@12s r1@3s",
				"pair a global l2@12s r2@8s",
				"pair b global l3@5s r3@15s",
				"pair b global l6@6s r3@15s",
				"pair c global l4@10s r4@19s",
				"pair c global l4@10s r5@9s",
			},
		},
		{
			name:     "sliding_windows_repeat_a_pair_and_an_unmatched_value_in_each_window_they_are_in",
			elements: sliding,
			opts:     []join.Option{join.WindowInto(sliding10sEvery5s), join.FullOuter},
			want: []string{
				"pair a [0s,10s) l1@6s r1@8s",
				"pair a [5s,15s) l1@6s r1@8s",
				"pair a [5s,15s) l1@6s r2@12s",
				"unmatched a [10s,20s) - r2@12s",
				"unmatched b [-5s,5s) l2@1s -",
				"unmatched b [0s,10s) l2@1s -",
			},
		},
		{
			name:     "session_windows_merge_across_both_inputs",
			elements: sessions,
			opts:     []join.Option{join.WindowInto(sessions5s), join.FullOuter},
			want: []string{
				"pair a [0s,12s) l1@0s r1@3s",
				"pair a [0s,12s) l2@7s r1@3s",
				"unmatched a [20s,25s) - r2@20s",
				"unmatched b [1s,6s) l3@1s -",
				"unmatched b [10s,15s) - r3@10s",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			left, right := timedInputs(s, tt.elements)
			if tt.windowFn != nil {
				left = beam.WindowInto(s, tt.windowFn, left)
				right = beam.WindowInto(s, tt.windowFn, right)
			}
			results := join.Window[string, string, note](s, left, right, tt.opts...)
			got := gather(s, beam.ParDo(s, describeWindowResult, results))
			if err := ptest.Run(p); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sortedList(tt.want), got()); diff != "" {
				t.Errorf("join.Window records differ (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWindowTimestampsRecordsAtTheWindowMaxTimestamp checks the element
// timestamps themselves, which describeWindowResult only compares with Time.
func TestWindowTimestampsRecordsAtTheWindowMaxTimestamp(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	left, right := timedInputs(s, tumbling)
	results := join.Window[string, string, note](s, left, right, join.WindowInto(fixed10s), join.FullOuter)
	got := gather(s, beam.ParDo(s, describeWindowResultTime, results))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a Time=9.999s timestamp=9.999s",
		"a Time=9.999s timestamp=9.999s",
		"a Time=19.999s timestamp=19.999s",
		"b Time=9.999s timestamp=9.999s",
		"b Time=9.999s timestamp=9.999s",
		"b Time=19.999s timestamp=19.999s",
		"c Time=9.999s timestamp=9.999s",
		"c Time=19.999s timestamp=19.999s",
		"d Time=9.999s timestamp=9.999s",
		"e Time=9.999s timestamp=9.999s",
	}
	if diff := cmp.Diff(sortedList(want), got()); diff != "" {
		t.Errorf("join.Window timestamps differ (-want +got):\n%s", diff)
	}
}

func concat(lists ...[]string) []string {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	return all
}
