package interval

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// uniqueLeftEvents are n elements of keys that each have one left
// element, ten right elements in and around its bounds (-200 ms to
// 1.5 s), and some keys right elements only; 10 ms apart with up to 300 ms
// of disorder, from a fixed seed.
func uniqueLeftEvents(n int) []hotKeyEvent {
	r := rand.New(rand.NewPCG(5, 12))
	var out []hotKeyEvent
	for k := 0; len(out) < n; k++ {
		key := fmt.Sprintf("k%04d", k)
		at := int64(k) * 200
		if k%7 != 3 {
			out = append(out, hotKeyEvent{side: match.Left, ms: at, key: key, name: fmt.Sprintf("l%d", k)})
		}
		for i := range 10 {
			out = append(out, hotKeyEvent{side: match.Right, ms: at + r.Int64N(2400) - 600, key: key, name: fmt.Sprintf("r%d.%d", k, i)})
		}
	}
	arrival := map[string]int64{}
	for _, e := range out {
		arrival[e.name] = e.ms + r.Int64N(301)
	}
	slices.SortStableFunc(out, func(a, b hotKeyEvent) int { return int(arrival[a.name] - arrival[b.name]) })
	return out
}

// typeNames and emitNames are the join types' and emission modes' names,
// as join.Type and join.Emit write them.
var (
	typeNames = [...]string{match.Inner: "inner", match.LeftOuter: "left", match.RightOuter: "right", match.FullOuter: "full"}
	emitNames = [...]string{match.Immediate: "immediate", match.Final: "final", match.Retract: "retract"}
)

// TestUniqueLeftMatchesDefault plays the same elements, one left element
// per key, through the default layout with and without UniqueLeft, under
// each join type and emission mode: the records and the fates must be the
// same, and UniqueLeft must have left right elements unbuffered and made
// fewer state calls.
func TestUniqueLeftMatchesDefault(t *testing.T) {
	events := uniqueLeftEvents(3000)
	for typ := match.Inner; typ <= match.FullOuter; typ++ {
		for emit := match.Immediate; emit <= match.Retract; emit++ {
			rules := match.Rules{Bounds: match.Between(-200*time.Millisecond, 1500*time.Millisecond), Type: typ, Emit: emit, Lateness: time.Second}
			t.Run(fmt.Sprintf("%v/%v", typeNames[typ], emitNames[emit]), func(t *testing.T) {
				want := newLayoutHarness(t, joiner{Rules: rules, CleanupEvery: 100}, 0)
				want.play(events, 50, 500)
				got := newLayoutHarness(t, joiner{Rules: rules, CleanupEvery: 100, UniqueLeft: true}, 0)
				got.play(events, 50, 500)
				if len(want.late) > 0 || len(got.late) > 0 {
					t.Fatalf("late elements: %d without UniqueLeft, %d with; the test wants none", len(want.late), len(got.late))
				}
				if diff := gocmp.Diff(want.out, got.out, sorted); diff != "" {
					t.Errorf("records differ (-without +with UniqueLeft):\n%s", diff)
				}
				for _, name := range []string{"left_matched", "left_unmatched", "left_expired", "right_matched", "right_unmatched", "right_expired", "pairs_out", "retractions_out"} {
					if w, g := want.counter(name), got.counter(name); w != g {
						t.Errorf("%s = %d with UniqueLeft, %d without", name, g, w)
					}
				}
				if b, k := got.counter("buffered"), got.counter("keys_with_state"); b != 0 || k != 0 {
					t.Errorf("buffered = %d, keys_with_state = %d at the end, want 0 and 0", b, k)
				}
				if got.counter("right_not_buffered") == 0 {
					t.Errorf("no right element went unbuffered")
				}
				wc, _, _, _ := want.totals()
				gc, _, _, _ := got.totals()
				if gc >= wc {
					t.Errorf("%d state calls with UniqueLeft, %d without: want fewer", gc, wc)
				}
				t.Logf("state calls %d without UniqueLeft, %d with; %d right elements not buffered", wc, gc, got.counter("right_not_buffered"))
			})
		}
	}
}

// TestUniqueLeftDuplicate checks what UniqueLeft does with a second left
// element for a key: while the first is buffered, it goes to the late
// output, counted, and joins nothing; once the first has expired, it
// joins the right elements buffered, and not r3, which arrived while the
// first was (UniqueLeft's documented cost of a broken declaration).
func TestUniqueLeftDuplicate(t *testing.T) {
	rules := match.Rules{Bounds: match.Between(0, time.Second), Type: match.Inner, Emit: match.Immediate}
	h := newLayoutHarness(t, joiner{Rules: rules, CleanupEvery: 1, UniqueLeft: true}, 0)
	h.startBundle()
	h.element(match.Left, 1000, "k", "l1")
	h.element(match.Right, 1100, "k", "r1") // the first match: buffered
	h.element(match.Right, 1200, "k", "r2") // decided: not buffered
	h.element(match.Right, 2500, "k", "r3") // outside l1's bounds: not buffered
	h.element(match.Left, 1050, "k", "dup") // would match r1 and r2
	h.element(match.Right, 1300, "k", "r4") // matches l1 only
	h.finishBundle()
	h.fireUpTo(2001) // l1 expires at 2001
	h.startBundle()
	h.element(match.Left, 2100, "k", "l2")
	h.element(match.Right, 2600, "k", "r5")
	h.finishBundle()
	h.fireUpTo(1 << 62)
	want := []string{
		"pair k l1@1000 r1@1100",
		"pair k l1@1000 r2@1200",
		"pair k l1@1000 r4@1300",
		"pair k l2@2100 r5@2600",
	}
	if diff := gocmp.Diff(want, h.out, sorted); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if diff := gocmp.Diff([]string{"late left k dup@1050"}, h.late); diff != "" {
		t.Errorf("late output (-want +got):\n%s", diff)
	}
	for name, want := range map[string]int64{"left_duplicate": 1, "left_late": 1, "right_not_buffered": 5, "right_expired": 1, "left_matched": 2} {
		if got := h.counter(name); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
}
