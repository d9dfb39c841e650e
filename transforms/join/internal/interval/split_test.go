package interval

import (
	"fmt"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	gocmp "github.com/google/go-cmp/cmp"
)

// TestSplitKeysMatchesDefaultLayout plays hot and cold keys through the
// split layout, over the in-memory backend, at several bucket widths, and
// through the default layout: with an allowed lateness longer than the
// input's disorder nothing is late, so every emission mode's records are
// the same in both (pairs and EmitFinal's records do not depend on when
// cleanup runs, EmitImmediate's and EmitRetract's on the order of arrival,
// which the harness keeps). Every element is counted in and given one
// fate, and no state, timer or buffered count outlives the data.
func TestSplitKeysMatchesDefaultLayout(t *testing.T) {
	events := hotKeyEvents(2000)
	for _, rc := range []struct {
		name  string
		rules match.Rules
	}{
		{"full-outer-retract", match.Rules{Bounds: match.Between(200*time.Millisecond, 1500*time.Millisecond), Type: match.FullOuter, Emit: match.Retract}},
		{"left-outer-final", match.Rules{Bounds: match.Between(-time.Second, 2*time.Second), Type: match.LeftOuter, Emit: match.Final}},
		{"right-outer-immediate", match.Rules{Bounds: match.Between(-700*time.Millisecond, -100*time.Millisecond), Type: match.RightOuter, Emit: match.Immediate}},
	} {
		rc.rules.Lateness = 2 * time.Second
		want := newLayoutHarness(t, joiner{Rules: rc.rules, CleanupEvery: 100}, 0)
		want.play(events, 50, 500)
		if len(want.late) > 0 {
			t.Fatalf("%s: %d late elements in the default layout; the test wants none", rc.name, len(want.late))
		}
		for _, width := range []time.Duration{0, 150 * time.Millisecond, 1100 * time.Millisecond, time.Minute} {
			t.Run(fmt.Sprintf("%s/width=%v", rc.name, width), func(t *testing.T) {
				h := newSplitHarness(t, rc.rules, 100*time.Millisecond, width, 16<<10)
				h.play(events, 50, 500)
				if diff := gocmp.Diff(want.out, h.out, sorted); diff != "" {
					t.Errorf("records differ from the default layout's (-default +split):\n%s", diff)
				}
				if len(h.late) > 0 {
					t.Errorf("late elements: %v", h.late)
				}
				for _, side := range []string{"left", "right"} {
					in, fates := h.counter(side+"_in"), int64(0)
					for f := match.Matched; f <= match.Late; f++ {
						fates += h.counter(side + "_" + f.String())
					}
					if in != fates || in == 0 {
						t.Errorf("%s: %d in, %d fates", side, in, fates)
					}
				}
				if b, k := h.counter("buffered"), h.counter("keys_with_state"); b != 0 || k != 0 {
					t.Errorf("buffered = %d, keys_with_state = %d at the end, want 0 and 0", b, k)
				}
				for rk, st := range h.states {
					if len(st.Bags) > 0 || len(h.timers[rk]) > 0 {
						t.Errorf("runner key %q keeps state or timers at the end: %d bags, timers %v", rk, len(st.Bags), h.timers[rk])
					}
				}
			})
		}
	}
}
