package join_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp/cmpopts"

	gocmp "github.com/google/go-cmp/cmp"
)

func init() {
	register.Function3x0(splitBatchEvent)
}

// TestIntervalBoundedSuite runs the interval suite's tests whose inputs
// arrive in event-time order again under Bounded: the bounded path must
// give exactly the records (and counts) the streaming path gives. The
// suite's other tests are about data that arrives behind the watermark,
// which the bounded path does not have (see TestIntervalBoundedNothingLate),
// or about watermark holds, which it does not set (see Bounded).
func TestIntervalBoundedSuite(t *testing.T) {
	inOrder := map[string]bool{
		"BoundShapes":         true, // both arrival orders: the bounded path sorts
		"TypesAndModes":       true, // every type under every emission mode
		"StateBounded":        true, // the sweep cleans up as event time passes
		"MaxBufferedPerKey":   true, // eviction, oldest first
		"StructValuesIntKeys": true,
	}
	ran := 0
	for _, tc := range intervalSuite {
		if inOrder[tc.name] {
			ran++
			t.Run(tc.name, func(t *testing.T) { tc.test(t, join.Bounded()) })
		}
	}
	if ran != len(inOrder) {
		t.Errorf("ran %d of the suite's tests, want %d: a test was renamed", ran, len(inOrder))
	}
}

// TestIntervalBoundedNothingLate plays the input of TestIntervalLate, whose
// late elements are late because the watermark passed them, through the
// bounded path: there the elements arrive in event-time order, so none is
// late, and r1 and l0 join as they would have on time.
func TestIntervalBoundedNothingLate(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	left, right := batch(s, []event{
		l(10_000, "a", "l1"), l(14_000, "a", "l2"), r(12_000, "a", "r1"),
		r(15_500, "a", "r2"), l(5_000, "a", "l0"), r(1_000, "b", "rb"),
	})
	res, late := join.Interval[string, string, string](s, left, right,
		join.Between(-5*time.Second, 5*time.Second), join.LeftOuter, join.CleanupEvery(time.Millisecond), join.Bounded())
	passert.Equals(s, beam.ParDo(s, formatResult, res),
		"unmatched a l0@5000 - t=5000",
		"unmatched a l1@10000 - t=10000",
		"pair a l1@10000 r1@12000 t=12000",
		"pair a l2@14000 r1@12000 t=14000",
		"pair a l2@14000 r2@15500 t=15500")
	passert.Empty(s, late)
	pr := ptest.RunAndValidate(t, p)
	checkAccounting(t, pr)
}

// batch returns the elements of script as bounded, timestamped inputs,
// PCollection<KV<string,string>> each (watermark steps are ignored).
func batch(s beam.Scope, script []event) (left, right beam.PCollection) {
	var lines []string
	for _, e := range script {
		if !e.watermark {
			side := "L"
			if e.side == join.Right {
				side = "R"
			}
			lines = append(lines, fmt.Sprintf("%s %d %s %s", side, e.time, e.key, e.val))
		}
	}
	return beam.ParDo2(s, splitBatchEvent, beam.CreateList(s, lines))
}

func splitBatchEvent(line string, left, right func(beam.EventTime, string, string)) {
	var side, key, val string
	var ts int64
	fmt.Sscan(line, &side, &ts, &key, &val)
	if side == "L" {
		left(beam.EventTime(ts), key, val)
	} else {
		right(beam.EventTime(ts), key, val)
	}
}

// bruteForce is the interval join of one key's elements, written from SPEC
// §2 with nested loops, when the elements arrive in the bounded path's
// order (by time, left before right on equal times) and nothing is evicted.
// lo and hi are the inclusive range of ts(r) - ts(l) in ms. It returns the
// records as join.Sweep writes them, and the counts.
func bruteForce(elements []join.SweepElement, lo, hi int64, typ join.Type, emit join.Emit) ([]string, map[string]int64) {
	es := slices.Clone(elements)
	slices.SortStableFunc(es, func(a, b join.SweepElement) int {
		if c := cmp.Compare(a.Time, b.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Side, b.Side)
	})
	outer := func(s join.Side) bool {
		return typ == join.FullOuter || (typ == join.LeftOuter && s == join.Left) || (typ == join.RightOuter && s == join.Right)
	}
	partners := func(a, b join.SweepElement) bool {
		if a.Side == b.Side {
			return false
		}
		if a.Side == join.Right {
			a, b = b, a
		}
		d := b.Time - a.Time
		return lo <= d && d <= hi
	}
	var records []string
	counts := map[string]int64{}
	for i, x := range es {
		counts[x.Side.String()+"_in"]++
		matched, alone := false, true
		for j, y := range es {
			if partners(x, y) {
				matched = true
				if j < i {
					alone = false
				}
				if x.Side == join.Left {
					records = append(records, fmt.Sprintf("pair %s@%d %s@%d t=%d", x.Value, x.Time, y.Value, y.Time, max(x.Time, y.Time)))
					counts["pairs_out"]++
				}
			}
		}
		single := func(kind string) string {
			if x.Side == join.Left {
				return fmt.Sprintf("%s %s@%d - t=%d", kind, x.Value, x.Time, x.Time)
			}
			return fmt.Sprintf("%s - %s@%d t=%d", kind, x.Value, x.Time, x.Time)
		}
		switch {
		case matched:
			counts[x.Side.String()+"_matched"]++
		case outer(x.Side):
			counts[x.Side.String()+"_unmatched"]++
		default:
			counts[x.Side.String()+"_expired"]++
		}
		if !outer(x.Side) {
			continue
		}
		if emit == join.EmitFinal && !matched || emit != join.EmitFinal && alone {
			records = append(records, single("unmatched"))
			counts[x.Side.String()+"_unmatched_out"]++
		}
		if emit == join.EmitRetract && alone && matched {
			records = append(records, single("retract"))
			counts["retractions_out"]++
		}
	}
	return records, counts
}

// boundShape is a bound shape, as options, and its inclusive range of
// ts(r) - ts(l) in ms.
type boundShape struct {
	opts   []join.Option
	lo, hi int64
}

// randomShape returns bounds within ±4 s with random exclusive ends,
// never empty.
func randomShape(rng *rand.Rand) boundShape {
	for {
		a, b := rng.Int64N(17)-8, rng.Int64N(17)-8 // half seconds
		lower, upper := min(a, b)*500, max(a, b)*500
		sh := boundShape{opts: []join.Option{join.Between(time.Duration(lower)*time.Millisecond, time.Duration(upper)*time.Millisecond)}, lo: lower, hi: upper}
		if rng.IntN(3) == 0 {
			sh.opts, sh.lo = append(sh.opts, join.LowerExclusive()), sh.lo+1
		}
		if rng.IntN(3) == 0 {
			sh.opts, sh.hi = append(sh.opts, join.UpperExclusive()), sh.hi-1
		}
		if sh.lo <= sh.hi {
			return sh
		}
	}
}

// randomElements returns n elements of one key within 10 s, on a 250 ms
// grid so that equal times are common, with distinct values.
func randomElements(rng *rand.Rand, n int) []join.SweepElement {
	out := make([]join.SweepElement, n)
	for i := range out {
		side := join.Side(rng.IntN(2))
		out[i] = join.SweepElement{Side: side, Time: rng.Int64N(41) * 250, Value: fmt.Sprintf("%c%03d", "lr"[side], i)}
	}
	return out
}

var (
	allTypes = []join.Type{join.Inner, join.LeftOuter, join.RightOuter, join.FullOuter}
	allEmits = []join.Emit{join.EmitImmediate, join.EmitFinal, join.EmitRetract}
)

// TestBoundedSweepMatchesBruteForce checks the bounded path's sweep, in
// plain Go, against the nested loops on random keys: every type under
// every emission mode, random bounds with exclusive ends, random cleanup
// granularity and lateness, and many equal times. Records and counts must
// be equal, nothing late, and nothing left buffered.
func TestBoundedSweepMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 1))
	cleanups := []time.Duration{time.Millisecond, 300 * time.Millisecond, time.Second, 7 * time.Second}
	for i := range 3000 {
		sh := randomShape(rng)
		typ, emit := allTypes[rng.IntN(4)], allEmits[rng.IntN(3)]
		elements := randomElements(rng, rng.IntN(30))
		opts := append(slices.Clone(sh.opts), typ, emit, join.CleanupEvery(cleanups[rng.IntN(len(cleanups))]),
			join.AllowedLateness(time.Duration(rng.IntN(3))*time.Second))
		got, late, counts, err := join.Sweep(elements, opts...)
		if err != nil {
			t.Fatal(err)
		}
		delete(counts, "buffered_per_key")
		want, wantCounts := bruteForce(elements, sh.lo, sh.hi, typ, emit)
		if diff := gocmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b }), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("case %d: [%d,%d] %v %v on %v: records (-want +got):\n%s", i, sh.lo, sh.hi, typ, emit, elements, diff)
		}
		if len(late) > 0 {
			t.Fatalf("case %d: late %v, want none", i, late)
		}
		if diff := gocmp.Diff(wantCounts, counts); diff != "" {
			t.Fatalf("case %d: [%d,%d] %v %v on %v: counts (-want +got):\n%s", i, sh.lo, sh.hi, typ, emit, elements, diff)
		}
	}
}

// TestBoundedSweepOrder checks that the sweep's result does not depend on
// the order in which the grouping delivers a key's elements, eviction
// included.
func TestBoundedSweepOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2))
	for i := range 500 {
		sh := randomShape(rng)
		opts := append(slices.Clone(sh.opts), allTypes[rng.IntN(4)], allEmits[rng.IntN(3)], join.MaxBufferedPerKey(1+rng.IntN(6)))
		elements := randomElements(rng, rng.IntN(30))
		first, _, firstCounts, err := join.Sweep(elements, opts...)
		if err != nil {
			t.Fatal(err)
		}
		rng.Shuffle(len(elements), func(i, j int) { elements[i], elements[j] = elements[j], elements[i] })
		again, _, againCounts, _ := join.Sweep(elements, opts...)
		if diff := gocmp.Diff(first, again); diff != "" {
			t.Fatalf("case %d: records depend on input order (-first +shuffled):\n%s", i, diff)
		}
		if diff := gocmp.Diff(firstCounts, againCounts); diff != "" {
			t.Fatalf("case %d: counts depend on input order (-first +shuffled):\n%s", i, diff)
		}
	}
}
