package interval

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
	// The firings that read the key's state; TestIntervalStaleCleanupRecord
	// drives a stale firing of a record timer.
	h.j.AppendCleanup = false
	h.startBundle()
	h.element(match.Left, 10_000, "a", "l1")
	h.element(match.Left, 20_000, "a", "l2")
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
	if got := h.counter("stale_firings"); got != 0 {
		t.Errorf("stale_firings = %d after a firing that was not stale, want 0", got)
	}

	h.startBundle()
	h.fire("a", first) // stale: the timer has moved to 25.001 s
	h.finishBundle()
	if got := h.only("a"); got != second {
		t.Errorf("after the stale firing the timer is %+v, want it unchanged: %+v", got, second)
	}
	if got := h.counter("stale_firings"); got != 1 {
		t.Errorf("stale_firings = %d, want 1", got)
	}

	h.startBundle()
	h.element(match.Right, 24_000, "a", "r1")
	h.finishBundle()
	if diff := cmp.Diff([]string{"pair a l2@20000 r1@24000"}, h.out); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if len(h.late) != 0 {
		t.Errorf("late elements %v, want none", h.late)
	}
}

// TestIntervalStaleFiringHold is TestIntervalStaleFiring for a timer that
// holds the output watermark (LeftOuter, EmitFinal), whose tag carries its
// hold and its firing time: the stale firing must neither expire l2 (and
// report it unmatched before r1 arrives) nor judge r1 late.
func TestIntervalStaleFiringHold(t *testing.T) {
	h := newHarness(t, match.Rules{Bounds: match.Between(-5*time.Second, 5*time.Second), Type: match.LeftOuter, Emit: match.Final}, time.Millisecond, 0)
	h.startBundle()
	h.element(match.Left, 10_000, "a", "l1")
	h.element(match.Left, 20_000, "a", "l2")
	h.finishBundle()
	first := h.only("a")
	if got, want := first.HoldTimestamp.Milliseconds(), int64(10_000); got != want || first.Tag != "10000/15001" {
		t.Fatalf("first timer holds at %d with tag %q, want %d and \"10000/15001\"", got, first.Tag, want)
	}

	h.startBundle()
	h.fire("a", first) // expires l1, unmatched; the timer moves to l2's expiry and hold
	h.finishBundle()
	second := h.only("a")
	if second.Tag != "20000/25001" {
		t.Fatalf("after the first firing the timer's tag is %q, want \"20000/25001\"", second.Tag)
	}

	h.startBundle()
	h.fire("a", first) // stale
	h.finishBundle()
	if got := h.only("a"); got != second {
		t.Errorf("after the stale firing the timer is %+v, want it unchanged: %+v", got, second)
	}

	h.startBundle()
	h.element(match.Right, 24_000, "a", "r1")
	h.fire("a", h.only("a"))
	h.finishBundle()
	want := []string{"unmatched a l1@10000 -", "pair a l2@20000 r1@24000"}
	if diff := cmp.Diff(want, h.out); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if len(h.late) != 0 {
		t.Errorf("late elements %v, want none", h.late)
	}
	if got := h.counter("stale_firings"); got != 1 {
		t.Errorf("stale_firings = %d, want 1", got)
	}
}

// TestIntervalFiringLaterThanState: a firing for a later time than the
// key's state implies (a timer moved earlier by an arrival, whose earlier
// firing the runner delivered late) is not stale: the watermark has
// passed the state's time too, so the key is cleaned up at that time, the
// timer still set for it is cleared, and the next one set.
func TestIntervalFiringLaterThanState(t *testing.T) {
	h := newHarness(t, match.Rules{Bounds: match.Between(-5*time.Second, 5*time.Second), Type: match.LeftOuter, Emit: match.Final}, time.Millisecond, 0)
	h.startBundle()
	h.element(match.Left, 20_000, "a", "l2")
	h.finishBundle()
	late := h.only("a") // 25.001 s, holding at 20 s
	h.startBundle()
	h.element(match.Left, 10_000, "a", "l1") // moves the timer to 15.001 s, holding at 10 s
	h.finishBundle()
	if got := h.only("a").Tag; got != "10000/15001" {
		t.Fatalf("after l1 the timer's tag is %q, want \"10000/15001\"", got)
	}

	h.startBundle()
	h.fire("a", late) // the 25.001 s firing, delivered although replaced
	h.finishBundle()
	want := []string{"unmatched a l1@10000 -"}
	if diff := cmp.Diff(want, h.out); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	next := h.only("a") // the 15.001 s timer is cleared
	if next.Tag != "20000/25001" {
		t.Errorf("after the firing the timer's tag is %q, want \"20000/25001\"", next.Tag)
	}
	if got := h.counter("stale_firings"); got != 0 {
		t.Errorf("stale_firings = %d, want 0", got)
	}
}
