package join_test

import (
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/transforms/join"
)

// TestIntervalBundleCacheOption checks that BundleCacheBytes takes only a
// positive bound.
func TestIntervalBundleCacheOption(t *testing.T) {
	for _, n := range []int64{0, -1} {
		if err := join.RouteInterval.Check(join.Between(0, time.Second), join.BundleCacheBytes(n)); err == nil {
			t.Errorf("BundleCacheBytes(%d) accepted, want an error", n)
		}
	}
	if err := join.RouteInterval.Check(join.Between(0, time.Second), join.BundleCacheBytes(1<<20)); err != nil {
		t.Errorf("BundleCacheBytes(1 MiB): %v", err)
	}
	if err := join.RouteWindow.Check(join.BundleCacheBytes(1 << 20)); err == nil {
		t.Error("join.Window took BundleCacheBytes, want an error")
	}
}
