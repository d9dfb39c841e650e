package join_test

import (
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/transforms/join"
)

// TestOptionsContradicting checks that options that set one value twice,
// differently, are refused at construction with both named, on every
// route that takes them, while the same option given twice is not.
func TestOptionsContradicting(t *testing.T) {
	between := join.Between(0, time.Minute)
	for _, tc := range []struct {
		name  string
		route join.Route
		opts  []join.Option
		want  string // "" for no error
	}{
		{"interval_left_outer_and_inner", join.RouteInterval, []join.Option{between, join.LeftOuter, join.Inner},
			"beamjoin: join.Interval: LeftOuter and Inner contradict each other: give one of them"},
		{"interval_final_and_retract", join.RouteInterval, []join.Option{between, join.EmitFinal, join.EmitRetract},
			"beamjoin: join.Interval: EmitFinal and EmitRetract contradict each other: give one of them"},
		{"interval_two_betweens", join.RouteInterval, []join.Option{between, join.Between(-time.Second, time.Second)},
			"beamjoin: join.Interval: Between(0s, 1m0s) and Between(-1s, 1s) contradict each other: give one of them"},
		{"interval_two_lateness", join.RouteInterval, []join.Option{between, join.AllowedLateness(time.Second), join.AllowedLateness(time.Minute)},
			"beamjoin: join.Interval: AllowedLateness(1s) and AllowedLateness(1m0s) contradict each other: give one of them"},
		{"interval_threshold_and_no_detection", join.RouteInterval, []join.Option{between, join.HotKeyThreshold(100), join.NoHotKeyDetection()},
			"beamjoin: join.Interval: HotKeyThreshold(100) and NoHotKeyDetection() contradict each other: give one of them"},
		{"window_full_and_left", join.RouteWindow, []join.Option{join.FullOuter, join.LeftOuter},
			"beamjoin: join.Window: FullOuter and LeftOuter contradict each other: give one of them"},
		{"asof_immediate_and_final", join.RouteAsOf, []join.Option{join.EmitImmediate, join.EmitFinal},
			"beamjoin: join.AsOf: EmitImmediate and EmitFinal contradict each other: give one of them"},
		{"cogroup_two_lateness", join.RouteCoGroup, []join.Option{join.AllowedLateness(0), join.AllowedLateness(time.Second)},
			"beamjoin: join.CoGroup: AllowedLateness(0s) and AllowedLateness(1s) contradict each other: give one of them"},
		{"same_option_twice_is_fine", join.RouteInterval, []join.Option{between, join.Between(0, time.Minute), join.LeftOuter, join.LeftOuter}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.route.Check(tc.opts...)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("%v.Check = %q, want %q", tc.route, got, tc.want)
			}
		})
	}
}
