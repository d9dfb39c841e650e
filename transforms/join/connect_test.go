package join_test

import (
	"fmt"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/typex"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.Function4x1(describeTagged)
}

// describeTagged writes an element of Connect's output as "key side
// value@timestamp window", e.g. "a left l1@6s [0s,10s)". It adds a
// complaint to the line if the element breaks an invariant.
func describeTagged(w beam.Window, et beam.EventTime, k string, v join.Tagged[string, note]) string {
	value := "?"
	switch {
	case v.Side == join.Left && v.Left != nil && v.Right == nil:
		value = *v.Left
	case v.Side == join.Right && v.Right != nil && v.Left == nil:
		value = v.Right.Text
	}
	return fmt.Sprintf("%s %v %s@%s %s", k, v.Side, value, since(et.ToTime()), windowOf(w))
}

// windowOf writes a window as windowName does.
func windowOf(w typex.Window) string {
	if iw, ok := w.(window.IntervalWindow); ok {
		return bounds(mtime.Time(iw.Start).ToTime(), mtime.Time(iw.End).ToTime())
	}
	return "global"
}

func TestConnect(t *testing.T) {
	tests := []struct {
		name     string
		windowFn *window.Fn // if set, the caller windows the inputs
		want     []string
	}{
		{
			name: "tags_each_value_with_its_side_keeping_its_key_and_timestamp",
			want: []string{
				"a left l1@6s global",
				"a right r1@8s global",
				"a right r2@12s global",
				"b left l2@1s global",
			},
		},
		{
			name:     "keeps_each_value_in_the_windows_it_is_in",
			windowFn: sliding10sEvery5s,
			want: []string{
				"a left l1@6s [0s,10s)",
				"a left l1@6s [5s,15s)",
				"a right r1@8s [0s,10s)",
				"a right r1@8s [5s,15s)",
				"a right r2@12s [10s,20s)",
				"a right r2@12s [5s,15s)",
				"b left l2@1s [-5s,5s)",
				"b left l2@1s [0s,10s)",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			left, right := timedInputs(s, sliding)
			if tt.windowFn != nil {
				left = beam.WindowInto(s, tt.windowFn, left)
				right = beam.WindowInto(s, tt.windowFn, right)
			}
			events := join.Connect[string, string, note](s, left, right)
			got := gather(s, beam.ParDo(s, describeTagged, events))
			if err := ptest.Run(p); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sortedList(tt.want), got()); diff != "" {
				t.Errorf("join.Connect output differs (-want +got):\n%s", diff)
			}
		})
	}
}
