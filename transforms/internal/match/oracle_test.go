package match

// The brute-force oracle of the property and fuzz tests, and the harness
// that plays an input through a Buffer and checks what it did against the
// oracle. The oracle shares no code with the core: it reads the bounds
// field by field, at Duration precision, and compares every left element
// with every right one.

import (
	"fmt"
	"slices"
	"time"
)

// oracleMatches is the match rule of SPEC §2.1 written from scratch:
// lower <= ts(r) - ts(l) <= upper, with > or < for an exclusive end.
func oracleMatches(b Bounds, leftTs, rightTs int64) bool {
	d := time.Duration(rightTs-leftTs) * time.Millisecond
	aboveLower := d >= b.Lower
	if b.LowerExclusive {
		aboveLower = d > b.Lower
	}
	belowUpper := d <= b.Upper
	if b.UpperExclusive {
		belowUpper = d < b.Upper
	}
	return aboveLower && belowUpper
}

// item is one input element of a run. Its identity is its index in the
// run's input, which is also the Value of its Entry.
type item struct {
	Side Side
	Time int64
}

// pair names a left and a right element by their indexes.
type pair struct{ L, R int }

// oraclePairs returns every matching pair of the elements of the input
// that are present, sorted.
func oraclePairs(b Bounds, in []item, present []bool) []pair {
	var out []pair
	for i, l := range in {
		if l.Side != Left || !present[i] {
			continue
		}
		for j, r := range in {
			if r.Side == Right && present[j] && oracleMatches(b, l.Time, r.Time) {
				out = append(out, pair{i, j})
			}
		}
	}
	return out
}

func comparePairs(a, b pair) int {
	if a.L != b.L {
		return a.L - b.L
	}
	return a.R - b.R
}

// sortedPairs returns a sorted copy of pairs.
func sortedPairs(pairs []pair) []pair {
	out := slices.Clone(pairs)
	slices.SortFunc(out, comparePairs)
	return out
}

// hasPartnerIn reports, per element, whether it is in any of the pairs.
func hasPartnerIn(pairs []pair, n int) []bool {
	out := make([]bool, n)
	for _, p := range pairs {
		out[p.L], out[p.R] = true, true
	}
	return out
}

// noWatermark in a run's watermark list means: no cleanup before this
// arrival.
const noWatermark = NoProgress

// run is one play of an input through a Buffer: the arrival order, and the
// watermark at which cleanup (Expire) runs before each arrival.
type run struct {
	rules Rules
	in    []item
	order []int   // indexes into in, in arrival order
	marks []int64 // per arrival, the cleanup time before it, or noWatermark
	// persist rebuilds the buffer before every call the way the Beam join
	// keeps it in state: an arrival is appended with the Matched flag it
	// had then, and older entries are rewritten only by cleanup.
	persist bool
	// flush runs a final cleanup after the last arrival that removes
	// everything.
	flush bool
	// mayBeLate: the watermarks may run ahead of the data, so some
	// arrivals may be late. Without it, check requires that none is.
	mayBeLate bool
	// maxBuffered, if not 0, is a size cap applied with Evict after each
	// arrival, which (like the Beam join) then rewrites the state.
	maxBuffered int
}

// removal is an element leaving the buffer by cleanup or eviction.
type removal struct {
	Index     int
	Matched   bool
	Unmatched bool // reported unmatched on removal (Rules.UnmatchedOnRemoval)
	Evicted   bool
}

// outcome is everything the buffer said during a run.
type outcome struct {
	Pairs     []pair // in emission order
	Late      []int
	LateAt    []int64 // the key's progress when each late element came
	Unmatched []int   // reported unmatched on arrival
	Retracted []int
	Removed   []removal
	Left      int // elements still buffered at the end
}

// play runs r and returns what the buffer said.
func (r run) play() (outcome, error) {
	var (
		out       outcome
		b         = NewBuffer[int]()
		persisted []Entry[int]
	)
	restore := func() {
		if r.persist {
			b = Restore(slices.Clone(persisted), b.Progress)
		}
	}
	cleanup := func(now int64) {
		restore()
		for _, x := range b.Expire(r.rules, now) {
			out.Removed = append(out.Removed, removal{x.Value, x.Matched, r.rules.UnmatchedOnRemoval(x.Side, x.Matched), false})
		}
		persisted = b.Entries()
	}
	for k, i := range r.order {
		if w := r.marks[k]; w != noWatermark {
			cleanup(w)
		}
		restore()
		e := Entry[int]{Side: r.in[i].Side, Time: r.in[i].Time, Value: i}
		a := b.Add(r.rules, e)
		if a.Late {
			out.Late = append(out.Late, i)
			out.LateAt = append(out.LateAt, b.Progress)
			continue
		}
		partners := map[int]bool{}
		for _, p := range a.Partners {
			if p.Side == e.Side {
				return out, fmt.Errorf("arrival of %d: partner %d is on its own side", i, p.Value)
			}
			partners[p.Value] = true
			if e.Side == Left {
				out.Pairs = append(out.Pairs, pair{i, p.Value})
			} else {
				out.Pairs = append(out.Pairs, pair{p.Value, i})
			}
		}
		for _, x := range a.Retracted {
			if !partners[x.Value] {
				return out, fmt.Errorf("arrival of %d: retracted %d, which is not among its partners", i, x.Value)
			}
			out.Retracted = append(out.Retracted, x.Value)
		}
		if a.Unmatched {
			out.Unmatched = append(out.Unmatched, i)
		}
		if r.maxBuffered > 0 && b.Len() > r.maxBuffered {
			for _, x := range b.Evict(r.rules, r.maxBuffered) {
				out.Removed = append(out.Removed, removal{x.Value, x.Matched, r.rules.UnmatchedOnRemoval(x.Side, x.Matched), true})
			}
			if b.Len() != r.maxBuffered {
				return out, fmt.Errorf("arrival of %d: %d elements buffered after Evict to %d", i, b.Len(), r.maxBuffered)
			}
			persisted = b.Entries()
			continue
		}
		e.Matched = len(a.Partners) > 0
		persisted = append(persisted, e)
	}
	if r.flush {
		lo, hi := r.rules.Bounds.Lower.Milliseconds(), r.rules.Bounds.Upper.Milliseconds()
		end := int64(0)
		for _, x := range r.in {
			end = max(end, x.Time)
		}
		cleanup(end + max(hi, 0) + max(-lo, 0) + r.rules.Lateness.Milliseconds() + 2)
	}
	restore()
	out.Left = b.Len()
	return out, nil
}

// check plays r and compares the result with the oracle. Unless
// r.mayBeLate, the watermarks must keep every arrival on time (no element
// behind the cleanup time before it by more than the allowed lateness), and
// then no element may be judged late. Elements judged late must be behind
// the key's progress by more than the lateness, and are left out of the
// oracle's input: everything else is checked on the rest, so that a late
// element never costs a pair between elements that were not late.
func (r run) check() error {
	got, err := r.play()
	if err != nil {
		return err
	}
	present := slices.Repeat([]bool{true}, len(r.in))
	if len(got.Late) > 0 && !r.mayBeLate {
		return fmt.Errorf("elements %v judged late, though none is behind the watermark by more than the lateness", got.Late)
	}
	for k, i := range got.Late {
		present[i] = false
		if x := r.in[i]; x.Time+r.rules.Lateness.Milliseconds() >= got.LateAt[k] {
			return fmt.Errorf("element %d (%v at %d) judged late at progress %d, though it is not behind it by more than the lateness %v", i, x.Side, x.Time, got.LateAt[k], r.rules.Lateness)
		}
	}
	want := oraclePairs(r.rules.Bounds, r.in, present)
	partnered := hasPartnerIn(want, len(r.in))
	pairs := sortedPairs(got.Pairs)
	if r.maxBuffered == 0 {
		if !slices.Equal(pairs, want) {
			return fmt.Errorf("pairs differ from the oracle's:\n got  %v\n want %v", pairs, want)
		}
	} else {
		// Eviction may cost pairs, but never makes one up or repeats one.
		for k, p := range pairs {
			if _, ok := slices.BinarySearchFunc(want, p, comparePairs); !ok {
				return fmt.Errorf("pair %v is not a match", p)
			}
			if k > 0 && pairs[k-1] == p {
				return fmt.Errorf("pair %v emitted twice", p)
			}
		}
	}
	// emitted: the element was in a pair the buffer produced. Without a
	// size cap, that is the oracle's partnered.
	emitted := hasPartnerIn(pairs, len(r.in))

	// On arrival (Immediate and Retract): unmatched iff outer and no partner
	// arrived before it. Eviction may have removed that partner, so this
	// holds only without a size cap.
	var wantUnmatched []int
	if r.maxBuffered == 0 {
		arrived := make([]bool, len(r.in))
		for _, i := range r.order {
			if !present[i] {
				continue
			}
			earlier := false
			for _, p := range want {
				if (p.L == i && arrived[p.R]) || (p.R == i && arrived[p.L]) {
					earlier = true
				}
			}
			arrived[i] = true
			if !earlier && r.rules.UnmatchedOnArrival(r.in[i].Side, false) {
				wantUnmatched = append(wantUnmatched, i)
			}
		}
		if !slices.Equal(got.Unmatched, wantUnmatched) {
			return fmt.Errorf("unmatched on arrival %v, want %v (outer elements with no earlier partner)", got.Unmatched, wantUnmatched)
		}
	}

	// Retract: each element reported unmatched on arrival that later
	// matched is retracted exactly once, and nothing else is.
	var wantRetracted []int
	if r.rules.Emit == Retract {
		for _, i := range got.Unmatched {
			if emitted[i] {
				wantRetracted = append(wantRetracted, i)
			}
		}
	}
	retracted := slices.Sorted(slices.Values(got.Retracted))
	slices.Sort(wantRetracted)
	if !slices.Equal(retracted, wantRetracted) {
		return fmt.Errorf("retracted %v, want %v", retracted, wantRetracted)
	}

	// Cleanup and eviction: each element leaves once, knowing whether it
	// ever matched; Final reports exactly the outer elements that did not.
	seen := make([]bool, len(r.in))
	for _, x := range got.Removed {
		if seen[x.Index] {
			return fmt.Errorf("element %d removed twice", x.Index)
		}
		seen[x.Index] = true
		if !present[x.Index] {
			return fmt.Errorf("element %d was judged late but buffered", x.Index)
		}
		if x.Matched != emitted[x.Index] {
			return fmt.Errorf("element %d (%v at %d) removed with Matched=%v, but was in a pair: %v (has a partner in the input: %v)", x.Index, r.in[x.Index].Side, r.in[x.Index].Time, x.Matched, emitted[x.Index], partnered[x.Index])
		}
		wantReport := r.rules.Emit == Final && r.rules.Type.Outer(r.in[x.Index].Side) && !emitted[x.Index]
		if x.Unmatched != wantReport {
			return fmt.Errorf("element %d (%v at %d) reported unmatched on removal: %v, want %v", x.Index, r.in[x.Index].Side, r.in[x.Index].Time, x.Unmatched, wantReport)
		}
	}
	if r.flush {
		if got.Left != 0 {
			return fmt.Errorf("%d elements still buffered after the final cleanup", got.Left)
		}
	}
	if r.flush && r.rules.Emit != Immediate {
		// Retract's changelog nets to Final's result: exactly the outer
		// elements that never matched, which without a size cap are those
		// without a partner in the input. (Immediate's does not: it never
		// takes back an unmatched record.)
		net := map[int]bool{}
		for _, i := range got.Unmatched {
			net[i] = true
		}
		for _, i := range got.Retracted {
			delete(net, i)
		}
		for _, x := range got.Removed {
			if x.Unmatched {
				net[x.Index] = true
			}
		}
		for i, x := range r.in {
			if want := present[i] && r.rules.Type.Outer(x.Side) && !emitted[i]; net[i] != want {
				return fmt.Errorf("element %d (%v at %d): net unmatched %v, want %v", i, x.Side, x.Time, net[i], want)
			}
		}
	}
	return nil
}

// watermarks returns, for an arrival order, a monotone cleanup time before
// each arrival that never puts a later arrival behind it by more than the
// lateness: before arrival k the watermark is at most
// min(ts of arrivals k..) + lateness. step(k) in [0, 1] says how far
// towards that limit it moves; a negative step means no cleanup before
// arrival k.
func watermarks(in []item, order []int, lateness time.Duration, step func(k int) float64) []int64 {
	limit := make([]int64, len(order)+1)
	limit[len(order)] = 1 << 62
	for k := len(order) - 1; k >= 0; k-- {
		limit[k] = min(limit[k+1], in[order[k]].Time+lateness.Milliseconds())
	}
	marks := make([]int64, len(order))
	w := int64(noWatermark)
	for k := range order {
		f := step(k)
		if f < 0 {
			marks[k] = noWatermark
			continue
		}
		if w == noWatermark {
			w = limit[k] - 50 // somewhere behind the first arrival
		}
		if limit[k] > w {
			w += int64(f * float64(limit[k]-w))
		}
		marks[k] = w
	}
	return marks
}
