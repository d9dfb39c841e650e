package join

import (
	"fmt"
	"testing"
	"time"
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
				// The interval join's DoFn, as Interval builds it, with
				// exact cleanup.
				in, err := NewModelProcess("late_behind").NewInstance(append(tc.opts, CleanupEvery(time.Millisecond))...)
				if err != nil {
					t.Fatal(err)
				}
				ks := NewModelKeyState()
				const p = 1_000_000 // the key's cleanup progress
				other := side.core().Other()
				x := p - rules.Expiry(other, 0) // an element of the other side that expires at p
				var lateOut []string
				element := func(s Side, ms int64, value string) {
					_, late, _, err := in.Element(ks, "a", s, ms, value)
					if err != nil {
						t.Fatal(err)
					}
					for _, l := range late {
						v := l.Left
						if l.Side == Right {
							v = l.Right
						}
						lateOut = append(lateOut, fmt.Sprintf("late %v %s %s@%d", l.Side, l.Key, *v, l.Time.UnixMilli()))
					}
				}
				in.StartBundle()
				element(sideOf(other), x, "x")
				in.FinishBundle()
				// The key's earliest timer is its cleanup timer, beside which
				// it may also have its forgetting timer set (a cleanup that
				// appends a record).
				timers := ks.Timers()
				if len(timers) == 0 {
					t.Fatal("key a has no timer set")
				}
				timer := timers[0]
				if got := timer.Fire; got != p {
					t.Fatalf("the key's timer fires at %d, want %d", got, p)
				}
				in.StartBundle()
				if _, err := in.Fire(ks, "a", timer); err != nil {
					t.Fatal(err)
				}
				behind := d.Milliseconds()
				element(side, p-behind, "on time")
				element(side, p-behind-1, "late")
				in.FinishBundle()
				if want := fmt.Sprintf("late %v a late@%d", side, p-behind-1); len(lateOut) != 1 || lateOut[0] != want {
					t.Errorf("late elements %q, want [%q]", lateOut, want)
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
