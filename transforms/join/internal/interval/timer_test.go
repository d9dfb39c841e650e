package interval

import (
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/statetest"
)

// TestTimerHoldsNotAfterFiring sets every stateful DoFn's timers where the
// hold it wants is later than its firing time: an outer element whose
// cleanup or final record is far later than the key's earliest expiry (a
// future-dated left element beside an old right one). Beam Java's SDK
// refuses a timer whose output timestamp is after its firing time; every
// timer must hold at or before it fires (the harness's timers check each
// one they are given).
func TestTimerHoldsNotAfterFiring(t *testing.T) {
	outerFinal := match.Rules{Bounds: match.Between(-5*time.Second, 5*time.Second), Type: match.LeftOuter, Emit: match.Final}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"interval_bag_layout", func(t *testing.T) {
			h := newHarness(t, outerFinal, time.Millisecond, 0)
			h.startBundle()
			h.element(match.Right, 0, "k", "r0")
			h.element(match.Left, 100_000, "k", "l100") // far later than r0's expiry
			h.finishBundle()
			fireAll(t, h, func(key string, tm timers.TimerMap) { h.fire(key, tm) })
		}},
		{"interval_split_layout", func(t *testing.T) {
			h := newSplitHarness(t, outerFinal, time.Millisecond, time.Minute, 0)
			h.startBundle()
			h.element(match.Right, 70_000, "k", "r70") // in l100's bucket [60 s, 120 s), expiring first
			h.element(match.Left, 100_000, "k", "l100")
			h.finishBundle()
			fireAll(t, h, func(key string, tm timers.TimerMap) { h.fireSplit(key, tm) })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := statetest.HoldError(func() { tc.run(t) }); err != nil {
				t.Error(err)
			}
		})
	}
}

// fireAll fires h's timers in firing order, those that firings set too,
// until none is left.
func fireAll(t *testing.T, h *harness, fire func(key string, tm timers.TimerMap)) {
	t.Helper()
	for range 1000 {
		var key string
		var next timers.TimerMap
		found := false
		for k, tp := range h.timers {
			for _, tm := range tp {
				if !found || tm.FireTimestamp < next.FireTimestamp {
					key, next, found = k, tm, true
				}
			}
		}
		if !found {
			return
		}
		h.startBundle()
		fire(key, next)
		h.finishBundle()
	}
	t.Fatal("timers still set after 1000 firings")
}
