package join_test

// This file holds the differential test's workload generator: random
// two-stream cases of a few keys, with duplicate and boundary timestamps,
// shuffled arrival, every bound shape, all join types and emission modes,
// sometimes a size cap, allowed lateness or coarse cleanup, and watermark
// advances that make some elements late.

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// dCase is one generated case: the join's options and a script of
// elements and watermark advances.
type dCase struct {
	Seed   uint64
	Spec   oSpec
	Script []oStep
	// Unstepped plays the script as written, without the watermark steps
	// after each element: no key's arrival order is then known.
	Unstepped bool
	// OnTime says that the script is on time by construction (onTimeCase):
	// at every element's arrival the watermark is at or below the deadline
	// of its earliest potential partner, whatever the runner's order. No
	// element may be late, and every key is checked as classOnTime.
	OnTime bool
	// BucketsReordered says that the runner may deliver an element to its
	// partners' buckets in another order than to its own (Flink, where a
	// split layout's two stages run apart): the split layout's EmitImmediate
	// and EmitRetract changelogs are then per bucket (see SplitKeys) and
	// need fit no single order of arrival.
	BucketsReordered bool
}

// caseSeed derives the seed of the i-th case of a run from the run's seed
// (splitmix64), so that a case can be replayed alone.
func caseSeed(run uint64, i int) uint64 {
	z := run + uint64(i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// genCase makes the case of a seed.
func genCase(seed uint64) dCase {
	rng := rand.New(rand.NewPCG(seed, 0x6a6f696e))
	pick := func(xs ...int64) int64 { return xs[rng.IntN(len(xs))] }

	var sp oSpec
	u := pick(1, 2, 10, 100, 250, 1000) // the case's unit of time
	a, b := (1+rng.Int64N(5))*u, rng.Int64N(4)*u
	switch rng.IntN(8) {
	case 0: // both bounds at or below zero
		sp.Lower, sp.Upper = -a-b, -b
	case 1: // around zero
		sp.Lower, sp.Upper = -a, b
	case 2: // both at or above zero
		sp.Lower, sp.Upper = b, a+b
	case 3:
		sp.Lower, sp.Upper = 0, 0
	case 4: // one offset only
		c := (rng.Int64N(9) - 4) * u
		sp.Lower, sp.Upper = c, c
	case 5:
		sp.Lower, sp.Upper = -a, a
	case 6:
		sp.Lower, sp.Upper = 0, a
	case 7:
		sp.Lower, sp.Upper = -a, 0
	}
	sp.LowerExcl, sp.UpperExcl = rng.IntN(3) == 0, rng.IntN(3) == 0
	if lo, hi := sp.bounds(); lo > hi {
		sp.LowerExcl, sp.UpperExcl = false, false
	}
	sp.Type, sp.Emit = oType(rng.IntN(4)), oEmit(rng.IntN(3))
	if rng.IntN(10) < 3 {
		sp.Lateness = pick(1, u, 3*u)
	}
	if rng.IntN(4) == 0 {
		sp.MaxBuffered = 1 + rng.IntN(5)
	}
	switch x := rng.IntN(20); {
	case x < 10:
		sp.CleanupEvery = 1
	case x < 17: // the default, derived from the bounds
	default:
		sp.CleanupEvery = 250
	}
	switch rng.IntN(4) { // the split run's bucket width
	case 1: // half the partner range: an element's partners in up to three buckets
		lo, hi := sp.bounds()
		sp.Width = max((hi-lo+1)/2, 1)
	case 2:
		sp.Width = u
	case 3:
		sp.Width = 7*u + 13
	}

	// Elements: some at an end of another element's partner range (or a
	// millisecond either side), some at another element's time, the rest
	// anywhere in a stretch a few join spans long.
	lo, hi := sp.bounds()
	stretch := 2*(max(lo, -lo)+max(hi, -hi)) + 4*u + 10
	base := 10_000 + rng.Int64N(1000)
	nKeys, n := 1+rng.IntN(3), 3+rng.IntN(20)
	var elems []oElem
	for i := range n {
		e := oElem{Side: oSide(rng.IntN(2)), Key: fmt.Sprintf("k%d", rng.IntN(nKeys)), Time: base + rng.Int64N(stretch)}
		switch x := rng.IntN(10); {
		case x < 4 && len(elems) > 0:
			o := elems[rng.IntN(len(elems))]
			e.Side, e.Key = o.Side.other(), o.Key
			edge := pick(lo, hi)
			if o.Side == oLeft {
				e.Time = o.Time + edge
			} else {
				e.Time = o.Time - edge
			}
			e.Time += rng.Int64N(3) - 1
		case x < 5 && len(elems) > 0:
			e.Time = elems[rng.IntN(len(elems))].Time
		}
		e.Val = fmt.Sprintf("%c%d", "lr"[e.Side], i)
		elems = append(elems, e)
	}

	// Arrival order: by time with a jitter from none to a full shuffle.
	jitter := pick(0, 0, stretch/4, stretch, 1<<40)
	arrival := make(map[string]int64, n)
	for _, e := range elems {
		arrival[e.Val] = e.Time + rng.Int64N(jitter+1)
	}
	slices.SortStableFunc(elems, func(x, y oElem) int { return cmp.Compare(arrival[x.Val], arrival[y.Val]) })

	// The watermark, in one of three regimes (see checkCase for what each
	// lets the test check):
	//   - prompt: before each element it reaches at least a millisecond
	//     before the element's time, so that no element is ahead of it;
	//   - trailing: it stays at or below the earliest deadline any element's
	//     potential partners have, so that no element can be late;
	//   - free: anywhere.
	// On top of that, advances before some arrivals: trailing the elements
	// still to come, at the next element's lateness boundary or an arrived
	// element's cleanup boundary (a millisecond either side), or jumping
	// past elements still to come.
	regime := rng.IntN(20)
	prompt, trailing := regime < 11, regime >= 11 && regime < 16
	ceiling := int64(1 << 62)
	if trailing {
		for _, e := range elems {
			ceiling = min(ceiling, sp.lateAfter(e.Side, e.Time))
		}
	}
	script := []oStep{{Watermark: 0}}
	w := int64(0)
	moveTo := func(to int64) {
		if to = min(to, ceiling); to > w {
			script = append(script, oStep{Watermark: to})
			w = to
		}
	}
	advance := []float64{0, 0.15, 0.4, 0.8}[rng.IntN(4)]
	for i, e := range elems {
		if rng.Float64() < advance {
			switch rng.IntN(7) {
			case 0, 1:
				to := e.Time
				for _, x := range elems[i:] {
					to = min(to, x.Time)
				}
				moveTo(to - rng.Int64N(u+1))
			case 2:
				moveTo(sp.lateAfter(e.Side, e.Time) + rng.Int64N(3) - 1)
			case 3:
				x := elems[rng.IntN(i+1)]
				moveTo(sp.removal(x.Side, x.Time) + rng.Int64N(3) - 1)
			case 4: // the trailing regime's boundary
				if trailing {
					moveTo(ceiling)
				}
			default:
				moveTo(e.Time + rng.Int64N(stretch+1))
			}
		}
		if prompt {
			moveTo(e.Time - 1)
		}
		script = append(script, oStep{Elem: &elems[i]})
	}
	// A quarter of the cases play without the watermark steps after each
	// element: Prism then processes what arrives between two watermark
	// advances together, several elements of a key in one bundle (in
	// timestamp order), which exercises the join's per-bundle cache.
	return dCase{Seed: seed, Spec: sp, Script: script, Unstepped: rng.IntN(4) == 0}
}

// events is the case's TestStream: its script with a watermark step of
// two milliseconds after each element, which makes Prism process the
// element then (see differential_test.go).
func (c dCase) events() []oStep {
	if c.Unstepped {
		return c.Script
	}
	var out []oStep
	w := noWatermark
	for _, st := range c.Script {
		out = append(out, st)
		if st.Elem == nil {
			w = max(w, st.Watermark)
			continue
		}
		w += 2
		out = append(out, oStep{Watermark: w})
	}
	return out
}

// arrivals lists the case's elements in the order the join receives them,
// each with the watermark up to which timers have fired when it does, for
// the elements that arrive at most a millisecond ahead of the watermark
// (see differential_test.go for why only those): in script order, each
// after every timer at or before the watermark the script has reached.
// ahead[i] says that element i arrived further ahead of the watermark;
// its order and watermark are then Prism's choice. wMax is the highest
// watermark of the script before infinity.
func (c dCase) arrivals() (arr []oArrival, ahead []bool, wMax int64) {
	w := noWatermark
	for _, st := range c.events() {
		if st.Elem == nil {
			w = max(w, st.Watermark)
			continue
		}
		arr = append(arr, oArrival{Index: len(arr), Elem: *st.Elem, Watermark: w, Cut: w})
		ahead = append(ahead, c.Unstepped || w == noWatermark || st.Elem.Time > w+1)
	}
	return arr, ahead, w
}

// String describes the case as a reproduction: its options, its script,
// and how to run it alone.
func (c dCase) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "case %#x (run alone: BEAMJOIN_DIFF_CASE=%#x go test ./transforms/join -run 'TestDifferential$' -v)\n", c.Seed, c.Seed)
	fmt.Fprintf(&b, "  options: %s; split run: SplitKeys(%dms)\n", c.Spec.describe(), c.Spec.Width)
	if c.Unstepped {
		b.WriteString("  stream (played as written):")
	} else {
		b.WriteString("  stream (a 2 ms watermark step follows each element):")
	}
	for i, st := range c.Script {
		if i > 0 {
			b.WriteString(";")
		}
		if st.Elem == nil {
			fmt.Fprintf(&b, " watermark %d", st.Watermark)
		} else {
			fmt.Fprintf(&b, " %v", *st.Elem)
		}
	}
	b.WriteString("; watermark ∞")
	return b.String()
}
