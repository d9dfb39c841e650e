package join_test

// This file tests join.AsOf on Prism against a brute-force oracle: random
// streams of left elements and versions on a few keys, arriving shuffled
// under random watermark plans, with late elements placed where the join
// must judge them late, under each join type, emission mode, max age and
// strictness. The oracle is written from the contract (SPEC §9) alone:
// each on-time left element at t joins, among all on-time versions of its
// key, the one with the greatest time valid at t and, on equal times, the
// greatest value (the test's values of one side all have the same length,
// so their order as strings is the order of their encodings).

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.Function1x2(asofNetEntry)
	register.Function3x0(onTimeValue)
}

// asofSpec is a case's options in the oracle's words; times are ms.
type asofSpec struct {
	Outer, Retract, Strict bool
	MaxAge                 int64 // negative: none
}

func (sp asofSpec) options() []join.Option {
	var opts []join.Option
	if sp.Outer {
		opts = append(opts, join.LeftOuter)
	}
	if sp.Retract {
		opts = append(opts, join.EmitRetract)
	}
	if sp.Strict {
		opts = append(opts, join.Strict())
	}
	if sp.MaxAge >= 0 {
		opts = append(opts, join.MaxAge(time.Duration(sp.MaxAge)*time.Millisecond))
	}
	return opts
}

func (sp asofSpec) String() string {
	return fmt.Sprintf("outer=%v retract=%v strict=%v maxAge=%d", sp.Outer, sp.Retract, sp.Strict, sp.MaxAge)
}

// asofOracle is the records and late elements the contract requires of
// script: every element is on time but those marked late.
func asofOracle(sp asofSpec, script []event, late map[int]bool) (records, lateOut []string) {
	versions := map[string][]event{}
	var lefts []event
	for i, e := range script {
		switch {
		case e.watermark:
		case late[i]:
			lateOut = append(lateOut, fmt.Sprintf("late %v %s %s@%d", e.side, e.key, e.val, e.time))
		case e.side == join.Right:
			versions[e.key] = append(versions[e.key], e)
		default:
			lefts = append(lefts, e)
		}
	}
	for _, l := range lefts {
		var best *event
		for _, v := range versions[l.key] {
			ok := v.time <= l.time && !(sp.Strict && v.time == l.time) && (sp.MaxAge < 0 || l.time-v.time <= sp.MaxAge)
			if ok && (best == nil || v.time > best.time || (v.time == best.time && v.val > best.val)) {
				best = &v
			}
		}
		switch {
		case best != nil:
			records = append(records, fmt.Sprintf("pair %s %s@%d %s@%d t=%d", l.key, l.val, l.time, best.val, best.time, l.time))
		case sp.Outer:
			records = append(records, fmt.Sprintf("unmatched %s %s@%d - t=%d", l.key, l.val, l.time, l.time))
		}
	}
	slices.Sort(records)
	slices.Sort(lateOut)
	return records, lateOut
}

// asofCase generates a random case: on 3 keys, 3 to 6 versions (some at
// the same time as another) and 3 to 6 left elements each, within 200 ms,
// shuffled; before an arrival, now and then, the watermark moves up to
// the earliest time still to come (less a little), so no generated
// element is behind it; and now and then a late element: one at or before
// a left element of its key that arrived before a watermark step past it,
// with a further step since (so the key's timer for it has fired).
func asofCase(seed uint64) (script []event, late map[int]bool) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	var elems []event
	n := 0
	for k := range 3 {
		key := fmt.Sprintf("k%d", k)
		var vt []int64
		for range 3 + rng.IntN(4) {
			t := 1000 + rng.Int64N(200)
			if len(vt) > 0 && rng.IntN(3) == 0 {
				t = vt[rng.IntN(len(vt))] // a tie
			}
			vt = append(vt, t)
			n++
			elems = append(elems, r(t, key, fmt.Sprintf("v%03d", n)))
		}
		for range 3 + rng.IntN(4) {
			t := 1000 + rng.Int64N(220)
			if rng.IntN(3) == 0 {
				t = vt[rng.IntN(len(vt))] // at a version's time
			}
			n++
			elems = append(elems, l(t, key, fmt.Sprintf("l%03d", n)))
		}
	}
	rng.Shuffle(len(elems), func(i, j int) { elems[i], elems[j] = elems[j], elems[i] })
	late = map[int]bool{}
	w := int64(0)
	type step struct {
		w     int64
		lefts []event // arrived before this step, final by it
	}
	var steps []step
	var arrived []event
	for i, e := range elems {
		if rng.IntN(5) < 2 {
			low := e.time
			for _, x := range elems[i+1:] {
				low = min(low, x.time)
			}
			if nw := low - rng.Int64N(6); nw > w {
				w = nw
				var final []event
				for _, a := range arrived {
					if a.side == join.Left && a.time+1 <= w {
						final = append(final, a)
					}
				}
				steps = append(steps, step{w: w, lefts: final})
				script = append(script, wm(w))
			}
		}
		if len(steps) >= 2 && len(steps[len(steps)-2].lefts) > 0 && rng.IntN(6) == 0 {
			cands := steps[len(steps)-2].lefts
			u := cands[rng.IntN(len(cands))]
			n++
			x := u.time - rng.Int64N(30)
			lateElem := l(x, u.key, fmt.Sprintf("x%03d", n))
			if rng.IntN(2) == 0 {
				lateElem = r(x, u.key, fmt.Sprintf("x%03d", n))
			}
			late[len(script)] = true
			script = append(script, lateElem)
		}
		script = append(script, e)
		arrived = append(arrived, e)
	}
	return script, late
}

// asofNetEntry counts a record +1 and a retraction -1 of the record it
// withdraws (a pair if it carries a right value, else unmatched).
func asofNetEntry(r join.Result[string, string, string]) (string, int) {
	if r.Kind == join.KindRetract {
		r.Kind = join.KindUnmatched
		if r.Right != nil {
			r.Kind = join.KindPair
		}
		return formatResult(r), -1
	}
	return formatResult(r), 1
}

// netRecords is records net of retractions: each record once, with " xN"
// if it nets to N other than 1, and not at all if it nets to 0.
func netRecords(s beam.Scope, records beam.PCollection) beam.PCollection {
	sums := stats.SumPerKey(s, beam.ParDo(s, asofNetEntry, records))
	return beam.ParDo(s, nonZero, beam.ParDo(s, formatNet, sums))
}

// onTimeValue keeps an element whose value is not a late one's ("x…").
func onTimeValue(k, v string, emit func(string, string)) {
	if !strings.HasPrefix(v, "x") {
		emit(k, v)
	}
}

// TestAsOfAgainstOracle runs random cases under every combination of join
// type, emission mode, max age and strictness, streaming and bounded in
// one pipeline: the streaming path's records (net of retractions under
// EmitRetract) and late elements, and the bounded path's records on the
// on-time elements (also with every key in one shard and each value
// handed on alone, and as the path AsOf takes by itself, without Bounded,
// on the on-time elements as a bounded input), are exactly the oracle's.
func TestAsOfAgainstOracle(t *testing.T) {
	seed := uint64(1)
	lates := 0
	for _, outer := range []bool{false, true} {
		for _, retract := range []bool{false, true} {
			for _, mod := range []string{"plain", "max_age", "strict"} {
				sp := asofSpec{Outer: outer, Retract: retract, Strict: mod == "strict", MaxAge: -1}
				if mod == "max_age" {
					sp.MaxAge = 40
				}
				for range 2 {
					seed++
					script, late := asofCase(seed)
					lates += len(late)
					want, wantLate := asofOracle(sp, script, late)
					t.Run(fmt.Sprintf("%s/seed%d", strings.ReplaceAll(sp.String(), " ", "_"), seed), func(t *testing.T) {
						p, s := beam.NewPipelineWithRoot()
						left, right := play(s, script)
						out := join.AsOf[string, string, string](s, left, right, sp.options()...)
						got := beam.ParDo(s, formatResult, out.Records)
						if sp.Retract {
							got = netRecords(s, out.Records)
						}
						passert.Equals(s.Scope("streaming"), got, toAny(want)...)
						passert.Equals(s.Scope("late"), beam.ParDo(s, formatLate, out.Late), toAny(wantLate)...)
						bounded := join.AsOf[string, string, string](s.Scope("bounded"),
							beam.ParDo(s, onTimeValue, left), beam.ParDo(s, onTimeValue, right), append(sp.options(), join.Bounded())...)
						passert.Equals(s.Scope("bounded"), beam.ParDo(s, formatResult, bounded.Records), toAny(want)...)
						// Every key in one shard, each value handed on alone:
						// a firing joins many keys, each from many parts.
						shared := join.AsOf[string, string, string](s.Scope("one_shard"),
							beam.ParDo(s, onTimeValue, left), beam.ParDo(s, onTimeValue, right), append(sp.options(), join.Bounded(), join.BoundedShards(1), join.GatherBytes(1))...)
						passert.Equals(s.Scope("one_shard"), beam.ParDo(s, formatResult, shared.Records), toAny(want)...)
						var onTime []event
						for i, e := range script {
							if !late[i] {
								onTime = append(onTime, e)
							}
						}
						bl, br := batch(s.Scope("bounded_input"), onTime)
						chosen := join.AsOf[string, string, string](s.Scope("bounded_input"), bl, br, sp.options()...)
						passert.Equals(s.Scope("bounded_input"), beam.ParDo(s, formatResult, chosen.Records), toAny(want)...)
						passert.Empty(s.Scope("bounded_input_late"), chosen.Late)
						if err := ptest.Run(p); err != nil {
							t.Fatalf("%v\nscript %v\nlate %v", err, script, late)
						}
					})
				}
			}
		}
	}
	if lates == 0 {
		t.Error("no case has a late element")
	}
}

// TestAsOfRetractChangelog: under EmitRetract a left element's record is
// made at once, and a version arriving later that is valid at its time
// retracts it (an unmatched record, then a pair) before the new pair.
func TestAsOfRetractChangelog(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, []event{
		wm(0), l(100, "k", "l"), wm(10), r(50, "k", "v50"), wm(20), r(80, "k", "v80"), wm(30), r(120, "k", "v120"),
	})
	out := join.AsOf[string, string, string](s, left, right, join.LeftOuter, join.EmitRetract)
	passert.Equals(s, beam.ParDo(s, formatResult, out.Records),
		"unmatched k l@100 - t=100", "retract k l@100 - t=100", "pair k l@100 v50@50 t=100",
		"retract k l@100 v50@50 t=100", "pair k l@100 v80@80 t=100")
	passert.Empty(s, out.Late)
	ptest.RunAndValidate(t, p)
}

// TestAsOfAcrossWindows: windowed inputs join in event time across window
// boundaries, and each record is in the window of its own time.
func TestAsOfAcrossWindows(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, onTime(r(500, "k", "v500"), l(1500, "k", "l1500"), r(1700, "k", "v1700"), l(2100, "k", "l2100")))
	fixed := window.NewFixedWindows(time.Second)
	left, right = beam.WindowInto(s, fixed, left), beam.WindowInto(s, fixed, right)
	out := join.AsOf[string, string, string](s, left, right)
	counts := stats.Count(s, beam.ParDo(s, formatResult, out.Records)) // per window
	passert.Equals(s, beam.WindowInto(s, window.NewGlobalWindows(), beam.ParDo(s, formatCount, counts)),
		"pair k l1500@1500 v500@500 t=1500:1", "pair k l2100@2100 v1700@1700 t=2100:1")
	ptest.RunAndValidate(t, p)
}

// TestAsOfOptionErrors: AsOf refuses options it does not take and values
// no as-of join can use, naming them.
func TestAsOfOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		opts []join.Option
		want string
	}{
		{[]join.Option{join.RightOuter}, "beamjoin: join.AsOf takes Inner or LeftOuter, not right"},
		{[]join.Option{join.EmitImmediate}, "beamjoin: join.AsOf takes EmitFinal or EmitRetract, not immediate"},
		{[]join.Option{join.MaxAge(-time.Second)}, "beamjoin: join.AsOf: max age -1s is negative"},
		{[]join.Option{join.MaxAge(time.Microsecond)}, "beamjoin: join.AsOf: max age 1µs is finer than a millisecond, the precision of event time"},
		{[]join.Option{join.Between(0, time.Second)}, "beamjoin: join.AsOf does not take Between"},
	} {
		err := join.RouteAsOf.Check(tc.opts...)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("Check(%v) = %q, want it to start with %q", tc.opts, got, tc.want)
		}
	}
	if d := cmp.Diff("asof", join.RouteAsOf.String()); d != "" {
		t.Error(d)
	}
}
