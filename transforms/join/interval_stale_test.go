package join

import (
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/google/go-cmp/cmp"
)

// TestIntervalStaleFiring drives a stale firing (issue 9.4): the key's
// cleanup timer fires at 15.001 s and moves to 25.001 s, and then the
// runner delivers the 15.001 s firing again. The stale firing must change
// nothing: l2 stays buffered (it expires at 25.001 s) and pairs with r1,
// which is on time. A join that rebuilt the firing time from state would
// take the stale firing for the 25.001 s one, expire l2 early and judge r1
// late.
func TestIntervalStaleFiring(t *testing.T) {
	h := newHarness(t, match.Rules{Bounds: match.Between(-5*time.Second, 5*time.Second), Type: match.Inner, Emit: match.Immediate}, time.Millisecond, 0)
	h.startBundle()
	h.element(Left, 10_000, "a", "l1")
	h.element(Left, 20_000, "a", "l2")
	h.finishBundle()
	first := h.only("a")
	if got := first.FireTimestamp.Milliseconds(); got != 15_001 {
		t.Fatalf("first timer fires at %d, want 15001 (l1's expiry)", got)
	}

	h.startBundle()
	h.fire("a", first) // expires l1; the timer moves to l2's expiry
	h.finishBundle()
	second := h.only("a")
	if got := second.FireTimestamp.Milliseconds(); got != 25_001 {
		t.Fatalf("after the first firing the timer fires at %d, want 25001 (l2's expiry)", got)
	}

	h.startBundle()
	h.fire("a", first) // stale: the timer has moved to 25.001 s
	h.finishBundle()
	if got := h.only("a"); got != second {
		t.Errorf("after the stale firing the timer is %+v, want it unchanged: %+v", got, second)
	}

	h.startBundle()
	h.element(Right, 24_000, "a", "r1")
	h.finishBundle()
	if diff := cmp.Diff([]string{"pair a l2@20000 r1@24000"}, h.out); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if len(h.late) != 0 {
		t.Errorf("late elements %v, want none", h.late)
	}
}
