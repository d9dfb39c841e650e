package join_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp/cmpopts"

	gocmp "github.com/google/go-cmp/cmp"
)

func init() {
	register.Function3x0(splitBatchEvent)
	register.Function1x2(keyLineForCollect)
	register.Function1x2(markCollect)
	register.DoFn2x0[int, func(*string) bool](&collectFn{})
}

// collected holds the lines each collectFn received, by name. Prism runs in
// process, so a DoFn can hand its input back through a variable.
var collected = struct {
	sync.Mutex
	lines map[string][]string
	n     int
}{lines: map[string][]string{}}

// collect adds a sink for lines, a PCollection<string>, and returns a
// function that, once the pipeline has run, returns the lines sorted. The
// lines are grouped and stored by one call that replaces what an earlier
// attempt stored, so a run that prismrun starts again does not count them
// twice.
func collect(s beam.Scope, lines beam.PCollection) func() []string {
	collected.Lock()
	collected.n++
	name := fmt.Sprint("collect", collected.n)
	collected.Unlock()
	s = s.Scope(name)
	all := beam.Flatten(s, beam.ParDo(s, markCollect, beam.Impulse(s)),
		beam.ParDo(s, keyLineForCollect, beam.WindowInto(s, window.NewGlobalWindows(), lines)))
	beam.ParDo0(s, &collectFn{Name: name}, beam.GroupByKey(s, all))
	return func() []string {
		collected.Lock()
		defer collected.Unlock()
		return slices.Clone(collected.lines[name])
	}
}

// collectMarker is the value that makes collectFn run even when there are
// no lines; no line holds a newline.
const collectMarker = "\n"

func markCollect([]byte) (int, string)         { return 0, collectMarker }
func keyLineForCollect(l string) (int, string) { return 0, l }

type collectFn struct{ Name string }

func (f *collectFn) ProcessElement(_ int, lines func(*string) bool) {
	got := []string{}
	var l string
	for lines(&l) {
		if l != collectMarker {
			got = append(got, l)
		}
	}
	slices.Sort(got)
	collected.Lock()
	defer collected.Unlock()
	collected.lines[f.Name] = got
}

// TestIntervalBoundedSuite runs the interval suite's tests whose inputs
// arrive in event-time order again under Bounded: the bounded path must
// give exactly the records (and counts) the streaming path gives, and
// hold the output watermark for them as that does (FinalNotLateDownstream).
// The suite's other tests are about data that arrives behind the
// watermark, which the bounded path does not have (see
// TestIntervalBoundedNothingLate), or about the streaming path's own
// timers.
func TestIntervalBoundedSuite(t *testing.T) {
	inOrder := map[string]bool{
		"BoundShapes":         true, // both arrival orders: the bounded path sorts
		"TypesAndModes":       true, // every type under every emission mode
		"StateBounded":        true, // the sweep cleans up as event time passes
		"MaxBufferedPerKey":   true, // eviction, oldest first
		"StructValuesIntKeys": true,
		// Records emitted at the end are counted in their windows.
		"FinalNotLateDownstream": true,
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

// TestIntervalBoundedGathered runs the in-order suite again with the bounded
// path handing on each value alone rather than gathered by key, so that a
// key's values reach the sweep in many parts, and with every key in one
// shard, so that a firing sweeps many keys' groups: the records must not
// change.
func TestIntervalBoundedGathered(t *testing.T) {
	for _, tc := range intervalSuite {
		if tc.name == "TypesAndModes" || tc.name == "MaxBufferedPerKey" || tc.name == "StructValuesIntKeys" {
			t.Run(tc.name+"/alone", func(t *testing.T) { tc.test(t, join.Bounded(), join.GatherBytes(1)) })
			t.Run(tc.name+"/one_shard", func(t *testing.T) { tc.test(t, join.Bounded(), join.BoundedShards(1)) })
		}
	}
}

// TestIntervalBoundedNothingLate plays the input of intervalLate, whose
// late elements are late because the watermark passed them, through the
// bounded path: there the elements arrive in event-time order, so none is
// late, and r1 and l0 join as they would have on time.
func TestIntervalBoundedNothingLate(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	left, right := batch(s, []event{
		l(10_000, "a", "l1"), l(14_000, "a", "l2"), r(12_000, "a", "r1"),
		r(15_500, "a", "r2"), l(5_000, "a", "l0"), r(1_000, "b", "rb"),
	})
	joined := join.Interval[string, string, string](s, left, right,
		join.Between(-5*time.Second, 5*time.Second), join.LeftOuter, join.CleanupEvery(time.Millisecond), join.Bounded())
	res, late := joined.Records, joined.Late
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
// grid so that equal times are common (unless distinct), with distinct
// values.
func randomElements(rng *rand.Rand, n int, distinct bool) []join.SweepElement {
	slots := rng.Perm(41)
	out := make([]join.SweepElement, n)
	for i := range out {
		side := join.Side(rng.IntN(2))
		slot := int64(rng.IntN(41))
		if distinct {
			slot = int64(slots[i%len(slots)])
		}
		out[i] = join.SweepElement{Side: side, Time: slot * 250, Value: fmt.Sprintf("%c%03d", "lr"[side], i)}
	}
	return out
}

var (
	allTypes = []join.Type{join.Inner, join.LeftOuter, join.RightOuter, join.FullOuter}
	allEmits = []join.Emit{join.EmitImmediate, join.EmitFinal, join.EmitRetract}
)

// TestBoundedSweepMatchesBruteForce checks the bounded path's sweeps, in
// plain Go, against the nested loops on random keys: every type under
// every emission mode, random bounds with exclusive ends, random cleanup
// granularity and lateness, many equal times, and buckets from narrower
// than the bounds (a key in tens of groups, most elements context of
// several) to wider than the key. Records and counts must be equal:
// every pair, unmatched and retract record made once, by one bucket, and
// every element counted once; nothing late, and nothing left buffered.
func TestBoundedSweepMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 1))
	cleanups := []time.Duration{time.Millisecond, 300 * time.Millisecond, time.Second, 7 * time.Second}
	widths := []time.Duration{0, 250 * time.Millisecond, 750 * time.Millisecond, time.Second, 3 * time.Second, time.Minute}
	for i := range 3000 {
		sh := randomShape(rng)
		typ, emit := allTypes[rng.IntN(4)], allEmits[rng.IntN(3)]
		elements := randomElements(rng, rng.IntN(30), false)
		opts := append(slices.Clone(sh.opts), typ, emit, join.CleanupEvery(cleanups[rng.IntN(len(cleanups))]),
			join.AllowedLateness(time.Duration(rng.IntN(3))*time.Second))
		if w := widths[rng.IntN(len(widths))]; w > 0 {
			opts = append(opts, join.BoundedBucket(w))
		}
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
// and narrow buckets included.
func TestBoundedSweepOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2))
	for i := range 500 {
		sh := randomShape(rng)
		opts := append(slices.Clone(sh.opts), allTypes[rng.IntN(4)], allEmits[rng.IntN(3)])
		if i%2 == 0 {
			opts = append(opts, join.MaxBufferedPerKey(1+rng.IntN(6)))
		} else {
			opts = append(opts, join.BoundedBucket(time.Duration(1+rng.IntN(2000))*time.Millisecond))
		}
		elements := randomElements(rng, rng.IntN(30), false)
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

// TestIntervalBoundedGraph checks which path a join takes: the bounded
// path collects each group in its own stateful DoFn (sweepFn, or
// asofSweepFn for AsOf), whose timers hold the records' event times, and
// groups nothing with a GroupByKey, whose output would carry the end of
// the window; the streaming path is one stateful DoFn (intervalFn,
// asofFn). Bounded inputs (beam.Create) take the bounded path by
// themselves, and the streaming path under Streaming; an unbounded input
// (a TestStream) takes the streaming path, and the bounded one under
// Bounded.
func TestIntervalBoundedGraph(t *testing.T) {
	for _, tc := range []struct {
		name    string
		asof    bool
		input   func(beam.Scope, []event) (beam.PCollection, beam.PCollection)
		opts    []join.Option
		bounded bool
	}{
		{"interval/bounded_input", false, batch, nil, true},
		{"interval/bounded_input/Streaming", false, batch, []join.Option{join.Streaming()}, false},
		{"interval/bounded_input/Bounded", false, batch, []join.Option{join.Bounded()}, true},
		{"interval/bounded_input/SplitKeys", false, batch, []join.Option{join.SplitKeys(0)}, true},
		{"interval/unbounded_input", false, play, nil, false},
		{"interval/unbounded_input/Bounded", false, play, []join.Option{join.Bounded()}, true},
		{"asof/bounded_input", true, batch, nil, true},
		{"asof/bounded_input/Streaming", true, batch, []join.Option{join.Streaming()}, false},
		{"asof/unbounded_input", true, play, nil, false},
		{"asof/unbounded_input/Bounded", true, play, []join.Option{join.Bounded()}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			left, right := tc.input(s, []event{l(1, "k", "a"), r(2, "k", "b")})
			if tc.asof {
				join.AsOf[string, string, string](s, left, right, tc.opts...)
			} else {
				join.Interval[string, string, string](s, left, right, append(tc.opts, join.Between(0, time.Second))...)
			}
			edges, _, err := p.Build()
			if err != nil {
				t.Fatal(err)
			}
			var groups, streaming, sweeps int
			for _, e := range edges {
				switch {
				case e.Op == graph.CoGBK:
					groups++
				case e.DoFn == nil:
				case strings.HasSuffix(e.DoFn.Name(), "intervalFn"), strings.HasSuffix(e.DoFn.Name(), "hotFn"), strings.HasSuffix(e.DoFn.Name(), "asofFn"):
					streaming++
				case strings.HasSuffix(e.DoFn.Name(), "sweepFn"), strings.HasSuffix(e.DoFn.Name(), "asofSweepFn"):
					sweeps++
				}
			}
			want := [3]int{0, 1, 0}
			if tc.bounded {
				want = [3]int{0, 0, 1}
			}
			if got := [3]int{groups, streaming, sweeps}; got != want {
				t.Errorf("%d groupings, %d streaming and %d bounded stateful DoFns, want %v", groups, streaming, sweeps, want)
			}
		})
	}
}

// TestIntervalBoundedDifferential runs random multi-key inputs through the
// bounded path (the one a bounded input takes by itself), the streaming
// path and the nested loops, under every type and emission mode, some
// size caps, a cap with AllowedLateness and SplitKeys: the bounded path's
// records and late
// output must equal the streaming path's when the elements arrive in
// event-time order (left first on equal times), whether the watermark
// follows them (onTime) or jumps to infinity at the end only, and the
// nested loops' for the joins without a cap. (With a cap, only the first
// applies: with the watermark held back, the streaming path cleans
// nothing up until the end, so its cap evicts more.) No two elements of a
// key share a time here: Prism does not always keep the TestStream's order
// of a key's elements with equal times, and the streaming path's changelog
// and evictions depend on it. TestBoundedSweepMatchesBruteForce covers
// equal times.
func TestIntervalBoundedDifferential(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(14, 100+seed))
			sh := randomShape(rng)
			common := append(slices.Clone(sh.opts), join.CleanupEvery([]time.Duration{time.Millisecond, time.Second}[rng.IntN(2)]))
			type namedJoin struct {
				name string
				opts []join.Option
				cap  bool
			}
			var joins []namedJoin
			for _, typ := range allTypes {
				for _, emit := range allEmits {
					joins = append(joins, namedJoin{name: typ.String() + "/" + emit.String(), opts: []join.Option{typ, emit}})
				}
			}
			for i, n := range []int{1, 3, 5} {
				typ, emit := allTypes[(int(seed)+i)%4], allEmits[i%3]
				joins = append(joins, namedJoin{name: fmt.Sprintf("%v/%v/cap=%d", typ, emit, n), opts: []join.Option{typ, emit, join.MaxBufferedPerKey(n)}, cap: true})
			}
			// The options a bounded input's default path must honour as the
			// stream does: AllowedLateness, which keeps elements (and so
			// counts them against the cap) longer, and SplitKeys, which the
			// bounded path has no use for.
			typ, emit := allTypes[int(seed)%4], allEmits[int(seed)%3]
			joins = append(joins,
				namedJoin{name: fmt.Sprintf("%v/%v/cap=3/lateness", typ, emit), opts: []join.Option{typ, emit, join.MaxBufferedPerKey(3), join.AllowedLateness(750 * time.Millisecond)}, cap: true},
				namedJoin{name: fmt.Sprintf("%v/%v/SplitKeys", typ, emit), opts: []join.Option{typ, emit, join.SplitKeys(0)}})

			// Four keys; values numbered in arrival order, of one width so
			// that their encoded order is their arrival order too.
			type keyed struct {
				key string
				join.SweepElement
			}
			var all []keyed
			for k := range 4 {
				for _, e := range randomElements(rng, 10+rng.IntN(10), true) {
					all = append(all, keyed{fmt.Sprint("k", k), e})
				}
			}
			slices.SortStableFunc(all, func(a, b keyed) int {
				if c := cmp.Compare(a.Time, b.Time); c != 0 {
					return c
				}
				return cmp.Compare(a.Side, b.Side)
			})
			var script []event
			perKey := map[string][]join.SweepElement{}
			for i, e := range all {
				e.Value = fmt.Sprintf("%c%03d", "lr"[e.Side], i)
				script = append(script, event{side: e.Side, key: e.key, val: e.Value, time: e.Time})
				perKey[e.key] = append(perKey[e.key], e.SweepElement)
			}

			run := func(inputs func(beam.Scope) (beam.PCollection, beam.PCollection), caps bool, extra ...join.Option) map[string][2][]string {
				p, s := beam.NewPipelineWithRoot()
				left, right := inputs(s)
				got := map[string][2]func() []string{}
				for _, j := range joins {
					if j.cap && !caps {
						continue
					}
					joined := join.Interval[string, string, string](s, left, right, append(append(slices.Clone(common), j.opts...), extra...)...)
					res, late := joined.Records, joined.Late
					got[j.name] = [2]func() []string{collect(s, beam.ParDo(s, formatResult, res)), collect(s, beam.ParDo(s, formatLate, late))}
				}
				ptest.RunAndValidate(t, p)
				out := map[string][2][]string{}
				for name, g := range got {
					out[name] = [2][]string{g[0](), g[1]()}
				}
				return out
			}
			// The bounded input takes the bounded path by itself
			// (TestIntervalBoundedGraph).
			bounded := run(func(s beam.Scope) (beam.PCollection, beam.PCollection) { return batch(s, script) }, true)
			followed := run(func(s beam.Scope) (beam.PCollection, beam.PCollection) { return play(s, onTime(script...)) }, true)
			atEnd := run(func(s beam.Scope) (beam.PCollection, beam.PCollection) { return play(s, script) }, false)

			for _, j := range joins {
				if diff := gocmp.Diff(followed[j.name], bounded[j.name], cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: streaming with the watermark following (-) vs bounded (+):\n%s", j.name, diff)
				}
				if j.cap {
					continue
				}
				if diff := gocmp.Diff(atEnd[j.name], bounded[j.name], cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: streaming with the watermark at the end (-) vs bounded (+):\n%s", j.name, diff)
				}
				var want []string
				for key, es := range perKey {
					records, _ := bruteForce(es, sh.lo, sh.hi, j.opts[0].(join.Type), j.opts[1].(join.Emit))
					for _, rec := range records {
						kind, rest, _ := strings.Cut(rec, " ")
						want = append(want, kind+" "+key+" "+rest)
					}
				}
				slices.Sort(want)
				if diff := gocmp.Diff(want, bounded[j.name][0], cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: nested loops (-) vs bounded (+):\n%s", j.name, diff)
				}
			}
		})
	}
}
