package join

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
)

// TestLateBehind checks that LateBehind is the join's own boundary: on a
// key whose cleanup has reached P (a firing at P, the expiry of an element
// of the other side), an element LateBehind behind P is not late and one a
// millisecond further behind is, for every bound shape and both sides. It
// is the allowed lateness, plus the distance to the earliest partner when
// the bounds keep every partner later than the element.
func TestLateBehind(t *testing.T) {
	const s = time.Second
	for _, tc := range []struct {
		name        string
		opts        []Option
		left, right time.Duration
	}{
		{"around_zero", []Option{Between(-5*s, 5*s)}, 0, 0},
		{"around_zero_lateness", []Option{Between(-5*s, 5*s), AllowedLateness(2 * s)}, 2 * s, 2 * s},
		{"after", []Option{Between(2*s, 5*s), AllowedLateness(s)}, 3 * s, s},
		{"after_exclusive", []Option{Between(2*s, 5*s), LowerExclusive(), UpperExclusive()}, 2*s + time.Millisecond, 0},
		{"before", []Option{Between(-5*s, -2*s)}, 0, 2 * s},
		{"before_exclusive_lateness", []Option{Between(-5*s, -2*s), UpperExclusive(), AllowedLateness(s)}, s, 3*s + time.Millisecond},
		{"at_zero", []Option{Between(0, 0)}, 0, 0},
	} {
		for _, side := range []Side{Left, Right} {
			t.Run(fmt.Sprintf("%s/%v", tc.name, side), func(t *testing.T) {
				d, err := LateBehind(side, tc.opts...)
				if err != nil {
					t.Fatal(err)
				}
				want := tc.left
				if side == Right {
					want = tc.right
				}
				if d != want {
					t.Errorf("LateBehind = %v, want %v", d, want)
				}
				c, err := intervalConfig(tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				rules := c.rules()
				h := newHarness(t, rules, time.Millisecond, 0)
				const p = 1_000_000 // the key's cleanup progress
				other := side.core().Other()
				x := p - rules.Expiry(other, 0) // an element of the other side that expires at p
				h.startBundle()
				h.element(sideOf(other), x, "a", "x")
				h.finishBundle()
				timer := h.earliest("a")
				if got := timer.FireTimestamp.Milliseconds(); got != p {
					t.Fatalf("the key's timer fires at %d, want %d", got, p)
				}
				h.startBundle()
				h.fire("a", timer)
				behind := d.Milliseconds()
				h.element(side, p-behind, "a", "on time")
				h.element(side, p-behind-1, "a", "late")
				h.finishBundle()
				if want := fmt.Sprintf("late %v a late@%d", side, p-behind-1); len(h.late) != 1 || h.late[0] != want {
					t.Errorf("late elements %q, want [%q]", h.late, want)
				}
			})
		}
	}
	if _, err := LateBehind(Side(2), Between(0, s)); err == nil {
		t.Error("LateBehind(Side(2)) succeeded, want an error")
	}
	if _, err := LateBehind(Left, Between(s, 0)); err == nil {
		t.Error("LateBehind with a lower bound above the upper succeeded, want TryInterval's error")
	}
	if _, err := LateBehind(Left); err == nil {
		t.Error("LateBehind with no bounds succeeded, want TryInterval's error")
	}
}

// earliest returns the key's set timer that fires first: the cleanup
// timer, beside which a key may also have its forgetting timer set (a
// cleanup that appends a record, interval_timer.go).
func (h *harness) earliest(key string) timers.TimerMap {
	h.t.Helper()
	_, tp := h.stores(key)
	var first timers.TimerMap
	found := false
	for _, t := range tp {
		if !found || t.FireTimestamp < first.FireTimestamp {
			first, found = t, true
		}
	}
	if !found {
		h.t.Fatalf("key %s has no timer set", key)
	}
	return first
}
