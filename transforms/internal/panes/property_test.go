package panes

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// TestFireProperties plays random streams on one key, with arrivals out
// of order and a watermark that trails them, through the key's state and
// Fire as the join's DoFn does, and checks what must hold whatever the
// order:
//
//   - every element leaves exactly once: late on arrival, late at a
//     firing, or done; at the end of input nothing is left;
//   - soundness: an element is never missed for a window that had not
//     expired by the watermark when it arrived;
//   - completeness: it is missed for every window that had expired by the
//     latest firing the key had seen when it arrived;
//   - every element is new in exactly one pane of each window it is in
//     (sessions: in exactly one pane), the first pane of a window holds
//     every element that arrived before the window fired, and a done
//     element is matched iff it shared a pane with the other side.
func TestFireProperties(t *testing.T) {
	windowings := []Windowing{
		{Kind: Fixed, Size: 10},
		{Kind: Sliding, Size: 10, Period: 4},
		{Kind: Sessions, Gap: 6},
		{Kind: Global},
	}
	for _, wf := range windowings {
		for _, lateness := range []int64{0, 7} {
			r := Rules{Windowing: wf, Lateness: lateness}
			var missed, latePanes int
			for seed := range uint64(100) {
				t.Run(fmt.Sprintf("%v/lateness=%d/seed=%d", wf, lateness, seed), func(t *testing.T) {
					m, l := checkStream(t, r, rand.New(rand.NewPCG(seed, 1)))
					missed, latePanes = missed+m, latePanes+l
				})
			}
			// The streams must exercise what is checked.
			if wf.Kind != Global && missed == 0 {
				t.Errorf("%v, lateness %d: no element missed a window", wf, lateness)
			}
			if wf.Kind != Global && lateness > 0 && latePanes == 0 {
				t.Errorf("%v, lateness %d: no late pane", wf, lateness)
			}
		}
	}
}

// arrival is what the test knows of an element.
type arrival struct {
	side       match.Side
	ts         int64
	wm         int64 // the watermark when it arrived
	progress   int64 // the latest firing on the key when it arrived
	missed     map[Window]bool
	newIn      map[Window]int // panes in which it was new, by window
	panes      int            // panes in which it was new (sessions)
	withOther  bool           // shared a pane with the other side
	left       int            // times it left the state
	matched    bool
	firstPanes []Window // windows whose first pane held it
}

// checkStream plays one stream and checks it. It returns how many windows
// elements missed, and how many panes were late (not a window's first).
func checkStream(t *testing.T, r Rules, rng *rand.Rand) (missedWindows, latePanes int) {
	t.Helper()
	k := newKey(r)
	var all []*arrival
	byName := map[string]*arrival{}
	seen := map[Window]bool{} // windows that have had a pane
	keyProgress := NoTime
	wm := int64(-1)
	record := func(f Firing) {
		for _, m := range f.Missed {
			byName[string(m.Entry.Value)].missed[m.Window] = true
			missedWindows++
		}
		for _, e := range f.Late {
			byName[string(e.Value)].left++
		}
		for _, e := range f.Done {
			a := byName[string(e.Value)]
			a.left++
			a.matched = e.Matched
		}
		for _, p := range f.Panes {
			var sides [2]bool
			for _, e := range p.Entries {
				sides[e.Side] = true
			}
			first := !seen[p.Window]
			seen[p.Window] = true
			if !first {
				latePanes++
			}
			for i, e := range p.Entries {
				a := byName[string(e.Value)]
				if sides[1-e.Side] {
					a.withOther = true
				}
				if p.New[i] {
					a.newIn[p.Window]++
					a.panes++
				}
				if first {
					a.firstPanes = append(a.firstPanes, p.Window)
				}
			}
		}
	}
	fire := func(to int64) {
		for {
			next := NoTime
			for at := range k.timers {
				if at <= to && (next == NoTime || at < next) {
					next = at
				}
			}
			if next == NoTime {
				return
			}
			delete(k.timers, next)
			st, err := Decode(k.chunks)
			if err != nil {
				t.Fatal(err)
			}
			f := r.Fire(&st, next)
			record(f)
			switch {
			case f.Forget:
				k.chunks = nil
				keyProgress = NoTime
			case f.Write:
				k.chunks = [][]byte{st.Encode()}
				keyProgress = st.Progress
			}
			if f.Next != NoTime && !f.Forget {
				k.timers[f.Next] = true
			}
		}
	}
	for now := int64(0); now < 120; now++ {
		for range rng.IntN(3) {
			delay := int64(rng.IntN(4))
			if rng.IntN(5) == 0 {
				delay = int64(rng.IntN(40))
			}
			a := &arrival{side: match.Side(rng.IntN(2)), ts: now - delay, wm: wm, progress: keyProgress,
				missed: map[Window]bool{}, newIn: map[Window]int{}}
			name := fmt.Sprintf("e%d", len(all))
			all, byName[name] = append(all, a), a
			k.arrive(a.side, a.ts, name)
		}
		if now%3 == 0 {
			wm = max(wm, now-int64(rng.IntN(6)))
			fire(wm)
		}
	}
	fire(EndOfGlobal)
	if len(k.chunks) != 0 || len(k.timers) != 0 {
		t.Errorf("after the end of input: %d chunks, %d timers left", len(k.chunks), len(k.timers))
	}

	for i, a := range all {
		name := fmt.Sprintf("e%d@%d (arrived at watermark %d, progress %d)", i, a.ts, a.wm, a.progress)
		if a.left != 1 {
			t.Errorf("%s left the state %d times, want 1", name, a.left)
		}
		windows := r.Windowing.Assign(a.ts)
		for _, w := range windows {
			switch {
			case a.missed[w] && !r.Expired(w, a.wm):
				t.Errorf("%s missed %v, which had not expired by the watermark", name, w)
			case !a.missed[w] && r.Expired(w, a.progress):
				t.Errorf("%s was not missed for %v, which had expired by the key's progress", name, w)
			}
			if r.Windowing.Merging() {
				continue
			}
			want := 1
			if a.missed[w] {
				want = 0
			}
			if a.newIn[w] != want {
				t.Errorf("%s new in %d panes of %v, want %d", name, a.newIn[w], w, want)
			}
			if want == 1 && a.wm < r.FireAt(w) {
				found := false
				for _, fw := range a.firstPanes {
					found = found || fw == w
				}
				if !found {
					t.Errorf("%s arrived before %v fired, but is not in its first pane", name, w)
				}
			}
		}
		if r.Windowing.Merging() {
			want := 1
			if a.missed[windows[0]] {
				want = 0
			}
			if a.panes != want {
				t.Errorf("%s new in %d panes, want %d", name, a.panes, want)
			}
		}
		if a.matched != a.withOther {
			t.Errorf("%s matched %v, but shared a pane with the other side: %v", name, a.matched, a.withOther)
		}
	}
	return missedWindows, latePanes
}
