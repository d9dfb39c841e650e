package join_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.Function3x1(describeGroup)
}

// describeGroup writes a Group as "key window [left values] [right
// values]", e.g. "a [0s,10s) [l1] [r1 r2]", values sorted. It adds a
// complaint to the line if the Group breaks an invariant, or is not in the
// window it names (w).
func describeGroup(w beam.Window, et beam.EventTime, g join.Group[string, string, note]) string {
	var rights []string
	for _, r := range g.Right {
		rights = append(rights, r.Text)
	}
	line := fmt.Sprintf("%s %s %s %s", g.Key, windowName(g.WindowStart, g.WindowEnd), sortedJoin(g.Left), sortedJoin(rights))
	if want := g.WindowEnd.Add(-time.Millisecond); !et.ToTime().Equal(want) {
		line += fmt.Sprintf(" (BAD TIME: element timestamp %s, want the window's max timestamp %s)", since(et.ToTime()), since(want))
	}
	if len(g.Left) == 0 && len(g.Right) == 0 {
		line += " (BAD: an empty group)"
	}
	return line + windowComplaint(w, g.WindowStart, g.WindowEnd)
}

func TestCoGroup(t *testing.T) {
	tests := []struct {
		name     string
		elements []timed
		windowFn *window.Fn // if set, the caller windows the inputs
		opts     []join.Option
		want     []string
	}{
		{
			name:     "fixed_windows_give_one_group_per_key_and_window_with_values",
			elements: tumbling,
			opts:     []join.Option{join.WindowInto(fixed10s)},
			want: []string{
				"a [0s,10s) [l1] [r1 r2]",
				"a [10s,20s) [l2] []",
				"b [0s,10s) [l3 l6] []",
				"b [10s,20s) [] [r3]",
				"c [0s,10s) [] [r5]",
				"c [10s,20s) [l4] [r4]",
				"d [0s,10s) [l5] []",
				"e [0s,10s) [] [r6]",
			},
		},
		{
			name:     "inputs_windowed_by_the_caller_group_in_their_windows",
			elements: sessions,
			windowFn: sessions5s,
			want: []string{
				"a [0s,12s) [l1 l2] [r1]",
				"a [20s,25s) [] [r2]",
				"b [1s,6s) [l3] []",
				"b [10s,15s) [] [r3]",
			},
		},
		{
			name:     "unwindowed_inputs_group_per_key_in_the_global_window",
			elements: sliding,
			want: []string{
				"a global [l1] [r1 r2]",
				"b global [l2] []",
			},
		},
		{
			name:     "sliding_windows_put_a_value_in_the_group_of_each_window_it_is_in",
			elements: sliding,
			opts:     []join.Option{join.WindowInto(sliding10sEvery5s)},
			want: []string{
				"a [0s,10s) [l1] [r1]",
				"a [5s,15s) [l1] [r1 r2]",
				"a [10s,20s) [] [r2]",
				"b [-5s,5s) [l2] []",
				"b [0s,10s) [l2] []",
			},
		},
		{
			name:     "session_windows_merge_across_both_inputs",
			elements: sessions,
			opts:     []join.Option{join.WindowInto(sessions5s)},
			want: []string{
				"a [0s,12s) [l1 l2] [r1]",
				"a [20s,25s) [] [r2]",
				"b [1s,6s) [l3] []",
				"b [10s,15s) [] [r3]",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			left, right := windowedInputs(s, tt.elements, tt.windowFn)
			groups := join.CoGroup[string, string, note](s, left, right, tt.opts...).Records
			got := gather(s, beam.ParDo(s, describeGroup, groups))
			if err := ptest.Run(p); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sortedList(tt.want), got()); diff != "" {
				t.Errorf("join.CoGroup groups differ (-want +got):\n%s", diff)
			}
		})
	}
}
