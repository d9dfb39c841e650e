package join_test

import (
	"errors"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

// TestOptionError checks that the checks of the options say which option is
// at fault and why, apart from where, so that a command can name its own
// flag for it; and that the error's text is the whole message.
func TestOptionError(t *testing.T) {
	type got struct{ Option, Reason, Error string }
	for _, tc := range []struct {
		name string
		err  error
		want got
	}{
		{"lower_above_upper", join.RouteInterval.Check(join.Between(10*time.Minute, 5*time.Minute)), got{
			"Between", "lower bound 10m0s is greater than upper bound 5m0s",
			"beamjoin: lower bound 10m0s is greater than upper bound 5m0s"}},
		{"empty_with_exclusive_ends", join.RouteInterval.Check(join.Between(0, 0), join.UpperExclusive()), got{
			"Between", "bounds [0s, 0s) match nothing: the interval is empty once its exclusive ends are removed",
			"beamjoin: bounds [0s, 0s) match nothing: the interval is empty once its exclusive ends are removed"}},
		{"negative_lateness", join.RouteInterval.Check(join.Between(0, time.Minute), join.AllowedLateness(-time.Second)), got{
			"AllowedLateness", "allowed lateness -1s is negative",
			"beamjoin: allowed lateness -1s is negative"}},
		{"zero_size", join.RouteWindow.Check(join.WindowInto(window.NewFixedWindows(0))), got{
			"WindowInto", "the size 0s is not positive",
			"beamjoin: join.Window: WindowInto(window.NewFixedWindows(0s)): the size 0s is not positive"}},
		{"sliding_with_gaps", join.RouteCoGroup.Check(join.WindowInto(window.NewSlidingWindows(2*time.Minute, time.Minute))), got{
			"WindowInto", "the period 2m0s is greater than the size 1m0s: an element between two windows would be in none",
			"beamjoin: join.CoGroup: WindowInto(window.NewSlidingWindows(2m0s, 1m0s)): the period 2m0s is greater than the size 1m0s: an element between two windows would be in none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var oe *join.OptionError
			if !errors.As(tc.err, &oe) {
				t.Fatalf("error %v is not a *join.OptionError", tc.err)
			}
			if diff := cmp.Diff(tc.want, got{oe.Option, oe.Reason(), tc.err.Error()}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Sliding windows whose period equals their size are fixed windows,
	// and fine.
	if err := join.RouteWindow.Check(join.WindowInto(window.NewSlidingWindows(time.Minute, time.Minute))); err != nil {
		t.Errorf("RouteWindow.Check(sliding 1m every 1m) = %v, want nil", err)
	}
}
