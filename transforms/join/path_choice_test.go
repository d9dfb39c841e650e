package join_test

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// TestPathChoiceOptions: the options a path cannot take together are
// judged on the path the join takes, so bounded inputs accept what only
// the bounded path honours, and Streaming brings the streaming path's
// rules back; Bounded and Streaming contradict each other, and the
// routes without a bounded path do not take Streaming. Which path runs
// is TestIntervalBoundedGraph's.
func TestPathChoiceOptions(t *testing.T) {
	between := join.Between(0, time.Second)
	for _, tc := range []struct {
		name    string
		asof    bool
		input   func(beam.Scope, []event) (beam.PCollection, beam.PCollection)
		opts    []join.Option
		wantErr string // "" for none
	}{
		{"bounded_input/UniqueLeft+MaxBufferedPerKey", false, batch, []join.Option{between, join.UniqueLeft(), join.MaxBufferedPerKey(2)}, ""},
		{"bounded_input/UniqueLeft+MaxBufferedPerKey/Streaming", false, batch, []join.Option{between, join.UniqueLeft(), join.MaxBufferedPerKey(2), join.Streaming()},
			"UniqueLeft cannot be combined with MaxBufferedPerKey(2)"},
		{"unbounded_input/UniqueLeft+MaxBufferedPerKey", false, play, []join.Option{between, join.UniqueLeft(), join.MaxBufferedPerKey(2)},
			"UniqueLeft cannot be combined with MaxBufferedPerKey(2)"},
		{"bounded_input/SplitKeys+MaxBufferedPerKey", false, batch, []join.Option{between, join.SplitKeys(0), join.MaxBufferedPerKey(2)}, ""},
		{"bounded_input/SplitKeys+MaxBufferedPerKey/Streaming", false, batch, []join.Option{between, join.SplitKeys(0), join.MaxBufferedPerKey(2), join.Streaming()},
			"MaxBufferedPerKey(2) cannot be combined with SplitKeys(0s)"},
		{"interval/Bounded+Streaming", false, batch, []join.Option{between, join.Bounded(), join.Streaming()},
			"join.Interval: Bounded and Streaming cannot be given together"},
		{"asof/Bounded+Streaming", true, play, []join.Option{join.Bounded(), join.Streaming()},
			"join.AsOf: Bounded and Streaming cannot be given together"},
		{"asof/bounded_input/Streaming", true, batch, []join.Option{join.Streaming()}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			left, right := tc.input(s, []event{l(1, "k", "a"), r(2, "k", "b")})
			var err error
			if tc.asof {
				_, err = join.TryAsOf[string, string, string](s, left, right, tc.opts...)
			} else {
				_, err = join.TryInterval[string, string, string](s, left, right, tc.opts...)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("got error %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
	for _, r := range []join.Route{join.RouteWindow, join.RouteCoGroup} {
		if err := r.Check(join.Streaming()); err == nil || !strings.Contains(err.Error(), "does not take Streaming") {
			t.Errorf("%v.Check(Streaming()): got %v, want an error saying it does not take Streaming", r, err)
		}
	}
}
