package join_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.Function3x0(keepKeyC)
}

// keepKeyC keeps the elements of key "c".
func keepKeyC(k, v string, emit func(string, string)) {
	if k == "c" {
		emit(k, v)
	}
}

// fateLine is a fate as describeFate writes it.
func fateLine(side join.Side, key string, ms int64, o join.Outcome) string {
	return fmt.Sprintf("%s %s %s %s", side, key, since(time.UnixMilli(ms)), o)
}

// TestIntervalFates runs one stream through the interval join of every
// type and emission mode, streaming (in both layouts) and bounded, with
// TrackFates, and
// checks each element's fate record on Prism: matched for a pair's
// elements whatever the emission, unmatched on an outer side and expired
// on an inner one for the elements without a partner, late for the element
// behind its key's cleanup, evicted under MaxBufferedPerKey; and per side
// the fates add up to the elements in.
func TestIntervalFates(t *testing.T) {
	const a1, a2, a3, late1, c1, c2 = 1000, 10_000, 19_000, 1500, 30_000, 30_500
	script := onTime(l(a1, "a", "a1"), r(2000, "a", "ra1"), r(5000, "b", "rb1"), l(a2, "a", "a2"), l(a3, "a", "a3"))
	// a3 keeps key a's state; the cleanups up to 20 s have removed ra1,
	// so late1's partner range [1.5s, 3.5s] is behind the key's progress.
	script = append(script, wm(20_000), l(late1, "a", "late1"))
	script = append(script, onTime(l(c1, "c", "c1"), l(c2, "c", "c2"))...)
	inputs := []string{"left", "left", "left", "left", "left", "left", "right", "right"}

	// want is the fates under join type typ; bounded: the bounded path,
	// which sorts the input by time, so late1 is in time for ra1.
	want := func(typ join.Type, bounded bool) []string {
		leftOuter := typ == join.LeftOuter || typ == join.FullOuter
		rightOuter := typ == join.RightOuter || typ == join.FullOuter
		alone := func(outer bool) join.Outcome {
			if outer {
				return join.OutcomeUnmatched
			}
			return join.OutcomeExpired
		}
		lateFate := join.OutcomeLate
		if bounded {
			lateFate = join.OutcomeMatched
		}
		return sortedList([]string{
			fateLine(join.Left, "a", a1, join.OutcomeMatched),
			fateLine(join.Right, "a", 2000, join.OutcomeMatched),
			fateLine(join.Right, "b", 5000, alone(rightOuter)),
			fateLine(join.Left, "a", a2, alone(leftOuter)),
			fateLine(join.Left, "a", a3, alone(leftOuter)),
			fateLine(join.Left, "a", late1, lateFate),
			fateLine(join.Left, "c", c1, alone(leftOuter)),
			fateLine(join.Left, "c", c2, alone(leftOuter)),
		})
	}

	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, script)
	type run struct {
		name   string
		got    func() []string
		want   []string
		inputs []string // the sides of the elements the join reads
	}
	var runs []run
	types := []join.Type{join.Inner, join.LeftOuter, join.RightOuter, join.FullOuter}
	for _, typ := range types {
		for _, emit := range []join.Emit{join.EmitImmediate, join.EmitFinal, join.EmitRetract} {
			name := fmt.Sprintf("%v/%v", typ, emit)
			out := join.Interval[string, string, string](s.Scope(name), left, right, join.Between(0, 2*time.Second), typ, emit, join.TrackFates())
			runs = append(runs, run{name, gather(s, beam.ParDo(s, describeFate, out.Fates)), want(typ, false), inputs})
		}
		name := fmt.Sprintf("%v/bounded", typ)
		out := join.Interval[string, string, string](s.Scope(name), left, right, join.Between(0, 2*time.Second), typ, join.EmitFinal, join.Bounded(), join.TrackFates())
		runs = append(runs, run{name, gather(s, beam.ParDo(s, describeFate, out.Fates)), want(typ, true), inputs})
		// 1 s buckets: key a's elements fall in five buckets, and a1, ra1
		// and late1 each sit in one bucket and probe a neighbour; each
		// fate must still be decided once, by the element's own bucket.
		// The split layout in 1 s buckets: each fate decided once, by the
		// element's own bucket.
		name = fmt.Sprintf("%v/split-1s-buckets", typ)
		out = join.Interval[string, string, string](s.Scope(name), left, right, join.Between(0, 2*time.Second), typ, join.EmitRetract, join.SplitKeys(time.Second), join.TrackFates())
		runs = append(runs, run{name, gather(s, beam.ParDo(s, describeFate, out.Fates)), want(typ, false), inputs})
		name = fmt.Sprintf("%v/bounded-1s-buckets", typ)
		out = join.Interval[string, string, string](s.Scope(name), left, right, join.Between(0, 2*time.Second), typ, join.EmitFinal, join.Bounded(), join.BoundedBucket(time.Second), join.TrackFates())
		runs = append(runs, run{name, gather(s, beam.ParDo(s, describeFate, out.Fates)), want(typ, true), inputs})
	}
	// MaxBufferedPerKey(1) on key c: c2's arrival evicts c1.
	cl, cr := beam.ParDo(s.Scope("c"), keepKeyC, left), beam.ParDo(s.Scope("c"), keepKeyC, right)
	capped := join.Interval[string, string, string](s.Scope("capped"), cl, cr, join.Between(0, 2*time.Second), join.LeftOuter, join.MaxBufferedPerKey(1), join.TrackFates())
	runs = append(runs, run{"LeftOuter/MaxBufferedPerKey(1)", gather(s, beam.ParDo(s, describeFate, capped.Fates)),
		sortedList([]string{fateLine(join.Left, "c", c1, join.OutcomeEvicted), fateLine(join.Left, "c", c2, join.OutcomeUnmatched)}), []string{"left", "left"}})

	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		got := r.got()
		if diff := cmp.Diff(r.want, got); diff != "" {
			t.Errorf("%s: fates (-want +got):\n%s", r.name, diff)
		}
		if err := checkEquation(r.inputs, got); err != nil {
			t.Errorf("%s: %v", r.name, err)
		}
	}
}

// TestIntervalFatesOption: without TrackFates, Interval returns no fates.
func TestIntervalFatesOption(t *testing.T) {
	_, s := beam.NewPipelineWithRoot()
	left, right := play(s, onTime(l(0, "a", "x")))
	if out := join.Interval[string, string, string](s, left, right, join.Between(0, time.Second)); out.Fates.IsValid() {
		t.Error("Interval without TrackFates returned Outputs.Fates")
	}
	if err := join.RouteInterval.Check(join.Between(0, time.Second), join.TrackFates()); err != nil {
		t.Errorf("RouteInterval.Check(TrackFates): %v", err)
	}
}
