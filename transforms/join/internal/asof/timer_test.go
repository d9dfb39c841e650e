package asof

import (
	"testing"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/statetest"
)

// TestTimerHoldsNotAfterFiring sets the as-of join's timers where the
// hold it wants is later than its firing time: a left element far later
// than the versions before it. Beam Java's SDK refuses a timer whose
// output timestamp is after its firing time; every timer must hold at or
// before it fires (the harness's timers check each one they are given).
// The interval join's and the window join's DoFns are checked alike in
// their packages.
func TestTimerHoldsNotAfterFiring(t *testing.T) {
	t.Run("asof", func(t *testing.T) {
		err := statetest.HoldError(func() {
			h := newAsofHarness(t, leftOuter)
			h.element(match.Right, 10, "k", "v10")
			h.element(match.Right, 20, "k", "v20") // v10 is needed until 21
			h.element(match.Left, 100, "k", "l100")
			h.advance(1 << 40)
		})
		if err != nil {
			t.Error(err)
		}
	})
}
