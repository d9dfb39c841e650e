package join_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.Function1x2(netEntry)
	register.Function2x1(formatNet)
	register.Function2x0(nonZero)
	register.Emitter1[string]()
	register.Function3x0(splitOrders)
	register.Emitter2[int, order]()
	register.Emitter2[int, payment]()
	register.Function1x1(formatOrderPayment)
	register.Function2x1(formatCount)
}

// probes returns the offsets ts(r) - ts(l) just outside, on and just inside
// each end of [lo, hi], without repeats.
func probes(lo, hi int64) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, d := range []int64{lo - 1, lo, lo + 1, hi - 1, hi, hi + 1} {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// intervalBoundShapes runs every bound shape end to end, the left
// element arriving first and then last, the watermark advancing with the
// arrivals and cleanup exact: both orders give the same pairs, exactly the
// offsets inside the bounds.
func intervalBoundShapes(t *testing.T, layout ...join.Option) {
	shapes := []struct {
		name   string
		opts   []join.Option
		lo, hi int64 // the inclusive range of ts(r) - ts(l), in ms
	}{
		{"negative_negative_inclusive", []join.Option{join.Between(-10*time.Second, -2*time.Second)}, -10_000, -2_000},
		{"negative_negative_exclusive", []join.Option{join.Between(-10*time.Second, -2*time.Second), join.LowerExclusive(), join.UpperExclusive()}, -9_999, -2_001},
		{"negative_positive_inclusive", []join.Option{join.Between(-5*time.Second, 5*time.Second)}, -5_000, 5_000},
		{"negative_positive_exclusive_lower", []join.Option{join.Between(-5*time.Second, 5*time.Second), join.LowerExclusive()}, -4_999, 5_000},
		{"negative_positive_exclusive_upper", []join.Option{join.Between(-5*time.Second, 5*time.Second), join.UpperExclusive()}, -5_000, 4_999},
		{"positive_positive_inclusive", []join.Option{join.Between(2*time.Second, 10*time.Second)}, 2_000, 10_000},
		{"positive_positive_exclusive", []join.Option{join.Between(2*time.Second, 10*time.Second), join.LowerExclusive(), join.UpperExclusive()}, 2_001, 9_999},
		{"zero_width", []join.Option{join.Between(0, 0)}, 0, 0},
		{"zero_width_at_offset", []join.Option{join.Between(3*time.Second, 3*time.Second)}, 3_000, 3_000},
	}
	const at = 100_000 // the left element's time
	for _, sh := range shapes {
		lo, hi := sh.lo, sh.hi
		var rights []event
		var want []string
		for _, d := range probes(lo, hi) {
			rights = append(rights, r(at+d, "k", fmt.Sprintf("r%+d", d)))
			if lo <= d && d <= hi {
				want = append(want, fmt.Sprintf("pair k l@%d r%+d@%d t=%d", at, d, at+d, max(at, at+d)))
			}
		}
		for _, order := range []string{"left_first", "right_first"} {
			t.Run(sh.name+"/"+order, func(t *testing.T) {
				arrivals := append([]event{l(at, "k", "l")}, rights...)
				if order == "right_first" {
					arrivals = append(append([]event(nil), rights...), l(at, "k", "l"))
				}
				p, s := beam.NewPipelineWithRoot()
				left, right := play(s, onTime(arrivals...))
				joined := join.Interval[string, string, string](s, left, right, append(append(sh.opts, join.CleanupEvery(time.Millisecond)), layout...)...)
				res, late := joined.Records, joined.Late
				passert.Equals(s, beam.ParDo(s, formatResult, res), toAny(want)...)
				passert.Empty(s, late)
				ptest.RunAndValidate(t, p)
			})
		}
	}
}

func toAny(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// The scenario of intervalTypesAndModes, bounds ±5 s, in arrival order:
//
//	a: l1 arrives alone; r1 matches it.
//	b: l2 never matches.       c: r2 never matches.
//	d: r3 arrives alone; l3 matches it.
//	e: l4 arrives alone; r4 is its first match, r5 its second.
var scenario = onTime(
	l(10_000, "a", "l1"), r(12_000, "a", "r1"),
	l(20_000, "b", "l2"),
	r(30_000, "c", "r2"),
	r(40_000, "d", "r3"), l(43_000, "d", "l3"),
	l(50_000, "e", "l4"), r(51_000, "e", "r4"), r(53_000, "e", "r5"),
)

var (
	scenarioPairs = []string{
		"pair a l1@10000 r1@12000 t=12000",
		"pair d l3@43000 r3@40000 t=43000",
		"pair e l4@50000 r4@51000 t=51000",
		"pair e l4@50000 r5@53000 t=53000",
	}
	// Outer elements that arrived with no partner buffered.
	aloneLeft  = []string{"unmatched a l1@10000 - t=10000", "unmatched b l2@20000 - t=20000", "unmatched e l4@50000 - t=50000"}
	aloneRight = []string{"unmatched c - r2@30000 t=30000", "unmatched d - r3@40000 t=40000"}
	// Outer elements that never matched.
	neverLeft  = []string{"unmatched b l2@20000 - t=20000"}
	neverRight = []string{"unmatched c - r2@30000 t=30000"}
	// Retractions of the alone elements that matched later.
	retractLeft  = []string{"retract a l1@10000 - t=10000", "retract e l4@50000 - t=50000"}
	retractRight = []string{"retract d - r3@40000 t=40000"}
)

func cat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// intervalTypesAndModes checks each join type under each emission mode
// on one scenario, against records written out by hand: Immediate gives the
// unmatched record and then the later pair; Final gives each never-matched
// outer element exactly once and nothing for the others; Retract adds a
// retraction before the first pair of an element reported unmatched, and
// its changelog nets to Final's result.
func intervalTypesAndModes(t *testing.T, layout ...join.Option) {
	tests := []struct {
		typ  join.Type
		emit join.Emit
		want []string
	}{
		{join.Inner, join.EmitImmediate, scenarioPairs},
		{join.Inner, join.EmitFinal, scenarioPairs},
		{join.Inner, join.EmitRetract, scenarioPairs},
		{join.LeftOuter, join.EmitImmediate, cat(scenarioPairs, aloneLeft)},
		{join.LeftOuter, join.EmitFinal, cat(scenarioPairs, neverLeft)},
		{join.LeftOuter, join.EmitRetract, cat(scenarioPairs, aloneLeft, retractLeft)},
		{join.RightOuter, join.EmitImmediate, cat(scenarioPairs, aloneRight)},
		{join.RightOuter, join.EmitFinal, cat(scenarioPairs, neverRight)},
		{join.RightOuter, join.EmitRetract, cat(scenarioPairs, aloneRight, retractRight)},
		{join.FullOuter, join.EmitImmediate, cat(scenarioPairs, aloneLeft, aloneRight)},
		{join.FullOuter, join.EmitFinal, cat(scenarioPairs, neverLeft, neverRight)},
		{join.FullOuter, join.EmitRetract, cat(scenarioPairs, aloneLeft, aloneRight, retractLeft, retractRight)},
	}
	final := map[join.Type][]string{}
	for _, tc := range tests {
		if tc.emit == join.EmitFinal {
			final[tc.typ] = tc.want
		}
	}
	for _, tc := range tests {
		t.Run(tc.typ.String()+"/"+tc.emit.String(), func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			left, right := play(s, scenario)
			joined := join.Interval[string, string, string](s, left, right, underLayout(layout,
				join.Between(-5*time.Second, 5*time.Second), tc.typ, tc.emit, join.CleanupEvery(time.Millisecond))...)
			res, late := joined.Records, joined.Late
			passert.Equals(s, beam.ParDo(s, formatResult, res), toAny(tc.want)...)
			passert.Empty(s, late)
			if tc.emit == join.EmitRetract {
				passert.Equals(s, net(s, res), toAny(final[tc.typ])...)
			}
			pr := ptest.RunAndValidate(t, p)
			checkAccountingIn(t, pr, layout)
		})
	}
}

// net applies a changelog: each retraction cancels one unmatched record of
// the same element. It returns the records that remain, formatted.
func net(s beam.Scope, results beam.PCollection) beam.PCollection {
	s = s.Scope("net")
	sums := stats.SumPerKey(s, beam.ParDo(s, netEntry, results))
	return beam.ParDo(s, nonZero, beam.ParDo(s, formatNet, sums))
}

func netEntry(r join.Result[string, string, string]) (string, int) {
	if r.Kind == join.KindRetract {
		r.Kind = join.KindUnmatched
		return formatResult(r), -1
	}
	return formatResult(r), 1
}

func formatNet(record string, n int) string {
	if n == 0 {
		return ""
	}
	if n != 1 {
		return fmt.Sprintf("%s x%d", record, n)
	}
	return record
}

func nonZero(s string, emit func(string)) {
	if s != "" {
		emit(s)
	}
}

// checkAccounting checks SPEC §6 for the join: every input element ends in
// exactly one fate, and no state is left once the watermark is at infinity.
func checkAccounting(t *testing.T, pr beam.PipelineResult) {
	t.Helper()
	c := counters(t, pr)
	for _, side := range []string{"left", "right"} {
		fates := c[side+"_matched"] + c[side+"_unmatched"] + c[side+"_expired"] + c[side+"_evicted"] + c[side+"_late"]
		if fates != c[side+"_in"] {
			t.Errorf("%s fates add up to %d, want %s_in = %d (counters %v)", side, fates, side, c[side+"_in"], c)
		}
	}
	if c["keys_with_state"] != 0 || c["buffered"] != 0 {
		t.Errorf("state outlived the data: keys_with_state = %d, buffered = %d, want 0 and 0", c["keys_with_state"], c["buffered"])
	}
}

// checkAccountingIn is checkAccounting in the default layout. In the
// split layout (SplitKeys) it checks nothing: Prism v2.77 loses counter
// increments when bundles report at once, which the split layout's many
// small bundles make likely; its counts are checked exactly over the
// in-memory backend (TestSplitKeysMatchesDefaultLayout) and by fate
// records on Prism (TestIntervalFates, TestIntervalBucketBoundaries).
func checkAccountingIn(t *testing.T, pr beam.PipelineResult, layout []join.Option) {
	t.Helper()
	if !split(layout) {
		checkAccounting(t, pr)
	}
}

// intervalLate checks SPEC §2.5: an element is late iff a potential
// partner may already have been cleaned up on its key; late elements go to
// the late output with their side and time, are never joined, and are
// counted; an element behind the watermark whose partners are all still
// buffered is not late.
func intervalLate(t *testing.T, layout ...join.Option) {
	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, []event{
		l(10_000, "a", "l1"),
		l(14_000, "a", "l2"),
		wm(16_000),           // l1 expires at 15 s + 1 ms: cleanup runs on key a; l2 stays
		r(12_000, "a", "r1"), // could have matched l1, now gone: late
		r(15_500, "a", "r2"), // behind the watermark, but its partners (from 10.5 s) cannot be gone: joins l2
		l(5_000, "a", "l0"),  // partners from 0 s may be gone: late
		r(1_000, "b", "rb"),  // key b has never been cleaned up: not late
	})
	joined := join.Interval[string, string, string](s, left, right, underLayout(layout,
		join.Between(-5*time.Second, 5*time.Second), join.LeftOuter, join.CleanupEvery(time.Millisecond))...)
	res, late := joined.Records, joined.Late
	passert.Equals(s, beam.ParDo(s, formatResult, res),
		"unmatched a l1@10000 - t=10000",
		"unmatched a l2@14000 - t=14000",
		"pair a l2@14000 r2@15500 t=15500")
	passert.Equals(s, beam.ParDo(s, formatLate, late),
		"late right a r1@12000",
		"late left a l0@5000")
	pr := ptest.RunAndValidate(t, p)
	if split(layout) {
		return // see checkAccountingIn
	}
	checkAccounting(t, pr)
	got := counters(t, pr)
	want := map[string]int64{
		"left_in": 3, "left_late": 1, "left_matched": 1, "left_unmatched": 1, "left_unmatched_out": 2,
		"right_in": 3, "right_late": 1, "right_matched": 1, "right_expired": 1,
		"pairs_out": 1, "buffered": 0, "keys_with_state": 0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counters (-want +got):\n%s", diff)
	}
}

// intervalForgetsProgressAfterASpan shows what happens once a key's
// buffers are empty: it keeps its progress in state for one join memory
// and the progress horizon, then clears its state. An element arriving
// within the horizon (the default, an hour) is judged late against the
// progress in state; with ProgressHorizon(0), the key's state is cleared
// at 25 s, before r1 comes, and r1 is joined as new: the documented rule
// beyond the horizon.
func intervalForgetsProgressAfterASpan(t *testing.T, layout ...join.Option) {
	for _, tc := range []struct {
		name   string
		memory []join.Option
		res    []any
		late   []any
	}{
		{"within_the_horizon", nil,
			[]any{"unmatched a l1@10000 - t=10000"},
			[]any{"late right a r1@12000"}},
		{"ProgressHorizon(0)", []join.Option{join.ProgressHorizon(0)},
			[]any{"unmatched a l1@10000 - t=10000", "unmatched a - r1@12000 t=12000"},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			left, right := play(s, []event{
				l(10_000, "a", "l1"),
				wm(30_000),           // l1 expires at 15 s; progress is forgotten at 25 s
				r(12_000, "a", "r1"), // late since 16 s
			})
			opts := append([]join.Option{join.Between(-5*time.Second, 5*time.Second), join.FullOuter, join.CleanupEvery(time.Millisecond)}, tc.memory...)
			joined := join.Interval[string, string, string](s, left, right, underLayout(layout, opts...)...)
			res, late := joined.Records, joined.Late
			passert.Equals(s, beam.ParDo(s, formatResult, res), tc.res...)
			passert.Equals(s, beam.ParDo(s, formatLate, late), tc.late...)
			checkAccountingIn(t, ptest.RunAndValidate(t, p), layout)
		})
	}
}

// TestIntervalRunTwice runs one pipeline twice in one process, as a
// retried job does (internal/prismrun reruns a job Prism failed): the
// second run starts with an empty memory of forgotten keys and gives the
// first run's records. Key a is forgotten at the end of the first run; had
// the second run recalled that progress, l1 would be judged late there.
func TestIntervalRunTwice(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, onTime(l(1_000, "a", "l1"), r(1_500, "a", "r1"), l(9_000, "a", "l2")))
	joined := join.Interval[string, string, string](s, left, right,
		join.Between(0, time.Second), join.LeftOuter, join.EmitFinal, join.CleanupEvery(time.Millisecond))
	res, late := joined.Records, joined.Late
	passert.Equals(s, beam.ParDo(s, formatResult, res),
		"pair a l1@1000 r1@1500 t=1500", "unmatched a l2@9000 - t=9000")
	passert.Empty(s, late)
	for run := 1; run <= 2; run++ {
		if err := ptest.Run(p); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
}

// TestIntervalRetractAsymmetricBounds retracts an unmatched element once
// under bounds that do not contain 0, so that a partner's partners lie outside
// the arrival's own partner range. r109 arrives after l6 has met r112, in
// another time bucket in the split layouts: l6 must not be retracted a
// second time. It runs under every buffer layout and the deprecated
// HotKeyBuckets(1), under whose map-state layout the join once read only
// the buckets around l6's partner range and missed r112.
func TestIntervalRetractAsymmetricBounds(t *testing.T) {
	layouts := append(bufferLayouts, bufferLayout{"HotKeyBuckets(1)", []join.Option{join.HotKeyBuckets(1)}})
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) { intervalRetractAsymmetricBounds(t, l.layout...) })
	}
}

func intervalRetractAsymmetricBounds(t *testing.T, layout ...join.Option) {
	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, []event{
		wm(2059), r(42354, "k0", "106"), l(43897, "k0", "l6"), r(48736, "k0", "112"), wm(3872), r(47000, "k0", "109"),
	})
	joined := join.Interval[string, string, string](s, left, right, underLayout(layout,
		join.Between(3000*time.Millisecond, 5000*time.Millisecond), join.LowerExclusive(),
		join.FullOuter, join.EmitRetract, join.CleanupEvery(time.Millisecond))...)
	res, late := joined.Records, joined.Late
	passert.Equals(s, beam.ParDo(s, formatResult, res),
		"unmatched k0 - 106@42354 t=42354", "unmatched k0 l6@43897 - t=43897", "retract k0 l6@43897 - t=43897",
		"pair k0 l6@43897 112@48736 t=48736", "pair k0 l6@43897 109@47000 t=47000")
	passert.Empty(s, late)
	ptest.RunAndValidate(t, p)
}

// intervalLateAfterForget checks that a very late element is not joined as
// new once its key's data is gone: r1 arrives behind the watermark W after
// its potential partner l0 was cleaned up. Prism delivers a key's elements
// and timer firings in event-time order, so r104 reaches the join only
// after the key's cleanup has emptied it. Whatever W, r1 is late against
// the key's progress, which state keeps for the progress horizon
// (ProgressHorizon, an hour by default) after one join memory.
func intervalLateAfterForget(t *testing.T, layout ...join.Option) {
	for _, w := range []int64{22000, 22001, 30000, 62914} {
		t.Run(fmt.Sprint("W=", w), func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			left, right := play(s, []event{
				r(4001, "k0", "106"), wm(10), r(56000, "k0", "104"), l(4001, "k0", "l0"), wm(7874), wm(w), r(4000, "k0", "1"),
			})
			joined := join.Interval[string, string, string](s, left, right, underLayout(layout,
				join.Between(-8999*time.Millisecond, 0), join.EmitFinal, join.CleanupEvery(time.Millisecond))...)
			res, late := joined.Records, joined.Late
			passert.Equals(s, beam.ParDo(s, formatResult, res), "pair k0 l0@4001 106@4001 t=4001")
			passert.Equals(s, beam.ParDo(s, formatLate, late), "late right k0 1@4000")
			ptest.RunAndValidate(t, p)
		})
	}
}

// intervalStateBounded runs a long stream through one key with the
// watermark advancing: the key's buffer stays bounded by the join span, and
// nothing is left at the end.
func intervalStateBounded(t *testing.T, layout ...join.Option) {
	const n = 400
	var elements []event
	var want []string
	for i := int64(0); i < n; i++ {
		ts := i * 1000
		if i%2 == 0 {
			elements = append(elements, l(ts, "k", fmt.Sprint("l", i)))
		} else {
			elements = append(elements, r(ts, "k", fmt.Sprint("r", i)))
			// Right i matches lefts i-1 (d=+1s) and, within ±2 s, i+1 (d=-1s).
			want = append(want, fmt.Sprintf("pair k l%d@%d r%d@%d t=%d", i-1, ts-1000, i, ts, ts))
			if i+1 < n {
				want = append(want, fmt.Sprintf("pair k l%d@%d r%d@%d t=%d", i+1, ts+1000, i, ts, ts+1000))
			}
		}
	}
	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, onTime(elements...))
	res := join.Interval[string, string, string](s, left, right, underLayout(layout, join.Between(-2*time.Second, 2*time.Second))...).Records
	passert.Equals(s, beam.ParDo(s, formatResult, res), toAny(want)...)
	pr := ptest.RunAndValidate(t, p)
	checkAccountingIn(t, pr, layout)
	dists := pr.Metrics().Query(func(r metrics.SingleResult) bool { return r.Name() == "buffered_per_key" }).Distributions()
	if len(dists) == 0 || len(dists) > 1 && !split(layout) {
		t.Fatalf("buffered_per_key: %d distributions, want 1 (a hot key's buckets report from a step of their own)", len(dists))
	}
	// An element lives 2 s + 1 ms past its time, plus up to the default
	// CleanupEvery less a millisecond (1 s for these bounds): at most 4
	// elements at one per second, plus the one arriving.
	for _, dist := range dists {
		if d := dist.Result(); (d.Count != n && !split(layout)) || d.Max > 5 {
			t.Errorf("buffered_per_key = %+v in %s, want %d arrivals with max <= 5", d, dist.Key.Step, n)
		}
	}
}

// intervalMaxBufferedPerKey checks eviction: oldest first across both
// sides, counted, and under EmitFinal an evicted outer element that never
// matched is reported unmatched.
func intervalMaxBufferedPerKey(t *testing.T, layout ...join.Option) {
	if split(layout) {
		t.Skip("the split layout does not take MaxBufferedPerKey (TestSplitKeysMisuse)")
	}
	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, onTime(
		// Key k: r1 matches l1..l3; the cap of 3 then evicts l1, and l4's
		// arrival evicts l2. Both had matched: no unmatched record.
		l(1_000, "k", "l1"), l(2_000, "k", "l2"), l(3_000, "k", "l3"), r(4_000, "k", "r1"), l(5_000, "k", "l4"),
		// Key m: m4's arrival evicts m1, which never matched.
		l(1_000, "m", "m1"), l(2_000, "m", "m2"), l(3_000, "m", "m3"), l(4_000, "m", "m4"),
	))
	res := join.Interval[string, string, string](s, left, right, underLayout(layout,
		join.Between(-100*time.Second, 100*time.Second), join.FullOuter, join.EmitFinal, join.MaxBufferedPerKey(3))...).Records
	passert.Equals(s, beam.ParDo(s, formatResult, res),
		"pair k l1@1000 r1@4000 t=4000",
		"pair k l2@2000 r1@4000 t=4000",
		"pair k l3@3000 r1@4000 t=4000",
		"pair k l4@5000 r1@4000 t=5000",
		"unmatched m m1@1000 - t=1000", // evicted
		"unmatched m m2@2000 - t=2000", // expired
		"unmatched m m3@3000 - t=3000",
		"unmatched m m4@4000 - t=4000")
	pr := ptest.RunAndValidate(t, p)
	checkAccounting(t, pr)
	c := counters(t, pr)
	if c["left_evicted"] != 3 || c["right_evicted"] != 0 {
		t.Errorf("evicted = left %d, right %d; want 3 (l1, l2, m1) and 0", c["left_evicted"], c["right_evicted"])
	}
}

// intervalFinalNotLateDownstream windows the join's EmitFinal output
// into fixed windows and counts per window: records emitted at cleanup carry
// their element's own (old) timestamp, and would be dropped as late by the
// downstream GroupByKey if the join did not hold the watermark.
func intervalFinalNotLateDownstream(t *testing.T, layout ...join.Option) {
	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, onTime(
		l(1_000, "a", "x"), l(2_000, "b", "y"), r(3_000, "a", "z"),
		// e expires at 80 s + 1 ms, after its window [0, 60 s) would close.
		l(50_000, "e", "u"),
		l(70_000, "c", "w"), r(200_000, "d", "v"),
	))
	res := join.Interval[string, string, string](s, left, right, underLayout(layout, join.Between(0, 30*time.Second), join.FullOuter, join.EmitFinal)...).Records
	windowed := beam.WindowInto(s, window.NewFixedWindows(time.Minute), beam.ParDo(s, formatResult, res))
	counts := stats.Count(s, beam.ParDo(s, kindOf, windowed))
	global := beam.WindowInto(s, window.NewGlobalWindows(), beam.ParDo(s, formatCount, counts))
	// Minute 0: the pair a, unmatched b and e; minute 1: unmatched c; minute
	// 3: unmatched d. None was dropped as late.
	passert.Equals(s, global, "pair:1", "unmatched:2", "unmatched:1", "unmatched:1")
	ptest.RunAndValidate(t, p)
}

func kindOf(record string) string { return strings.Fields(record)[0] }

func formatCount(k string, n int) string { return fmt.Sprintf("%s:%d", k, n) }

func init() { register.Function1x1(kindOf) }

// order and payment are struct values: anything with a Beam coder joins.
type order struct {
	ID     string
	Amount int
}

type payment struct {
	Ref    string
	Amount int
}

// splitOrders turns "L <id> <amount>" events into orders and "R …" into
// payments, keyed by an int customer number.
func splitOrders(line string, orders func(int, order), payments func(int, payment)) {
	var side, id string
	var customer, amount int
	fmt.Sscan(line, &side, &customer, &id, &amount)
	if side == "L" {
		orders(customer, order{ID: id, Amount: amount})
	} else {
		payments(customer, payment{Ref: id, Amount: amount})
	}
}

func formatOrderPayment(r join.Result[int, order, payment]) string {
	return fmt.Sprintf("%v %d %+v %+v", r.Kind, r.Key, *r.Left, *r.Right)
}

// intervalStructValuesIntKeys joins struct values under int keys.
func intervalStructValuesIntKeys(t *testing.T, layout ...join.Option) {
	p, s := beam.NewPipelineWithRoot()
	events := stream(s, onTime(
		l(1_000, "7", "o1 100"), r(2_000, "7", "p1 100"), l(3_000, "8", "o2 5"), r(4_000, "9", "p2 1"),
	))
	orders, payments := beam.ParDo2(s, splitOrders, events)
	res := join.Interval[int, order, payment](s, orders, payments, underLayout(layout, join.Between(0, time.Minute))...).Records
	passert.Equals(s, beam.ParDo(s, formatOrderPayment, res), "pair 7 {ID:o1 Amount:100} {Ref:p1 Amount:100}")
	ptest.RunAndValidate(t, p)
}

// TestTryIntervalErrors checks every construction error's message.
func TestTryIntervalErrors(t *testing.T) {
	tests := []struct {
		name string
		opts []join.Option
		swap bool // pass right as left
		want string
	}{
		{"no_bounds", []join.Option{join.LeftOuter}, false,
			"beamjoin: join.Interval needs bounds: add join.Between(lower, upper)"},
		{"lower_above_upper", []join.Option{join.Between(10*time.Minute, 5*time.Minute)}, false,
			"beamjoin: lower bound 10m0s is greater than upper bound 5m0s"},
		{"empty_after_exclusivity", []join.Option{join.Between(0, 0), join.LowerExclusive()}, false,
			"beamjoin: bounds (0s, 0s] match nothing: the interval is empty once its exclusive ends are removed"},
		{"window_option", []join.Option{join.Between(0, time.Second), join.WindowInto(window.NewFixedWindows(time.Second))}, false,
			"beamjoin: join.Interval does not take WindowInto"},
		{"negative_cap", []join.Option{join.Between(0, time.Second), join.MaxBufferedPerKey(-1)}, false,
			"beamjoin: join.Interval: MaxBufferedPerKey(-1) is negative"},
		{"negative_progress_horizon", []join.Option{join.Between(0, time.Second), join.ProgressHorizon(-time.Second)}, false,
			"beamjoin: join.Interval: ProgressHorizon(-1s) must be zero or a positive whole number of milliseconds"},
		{"zero_cleanup", []join.Option{join.Between(0, time.Second), join.CleanupEvery(0)}, false,
			"beamjoin: join.Interval: CleanupEvery(0s) must be a positive whole number of milliseconds"},
		{"negative_lateness", []join.Option{join.Between(0, time.Second), join.AllowedLateness(-time.Second)}, false,
			"beamjoin: allowed lateness -1s is negative"},
		{"unknown_type", []join.Option{join.Between(0, time.Second), join.Type(9)}, false,
			"beamjoin: join.Interval: unknown join type Type(9)"},
		{"unknown_emit", []join.Option{join.Between(0, time.Second), join.Emit(7)}, false,
			"beamjoin: join.Interval: unknown emission mode Emit(7)"},
		{"nil_option", []join.Option{join.Between(0, time.Second), nil}, false,
			"beamjoin: join.Interval: option 1 is nil"},
		{"wrong_type_arguments", []join.Option{join.Between(0, time.Second)}, true,
			"beamjoin: join.Interval: type argument L is join_test.order, but the left value type is join_test.payment"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			orders, payments := beam.ParDo2(s, splitOrders, beam.Create(s, "L 1 o 1"))
			if tc.swap {
				orders = payments
			}
			_, err := join.TryInterval[int, order, payment](s, orders, payments, tc.opts...)
			if err == nil {
				t.Fatalf("TryInterval() error = nil, want %q", tc.want)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			// CheckInterval says the same of the options, without inputs.
			if err := join.RouteInterval.Check(tc.opts...); !tc.swap && (err == nil || err.Error() != tc.want) {
				t.Errorf("RouteInterval.Check() error = %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("Interval_panics", func(t *testing.T) {
		defer func() {
			if r := recover(); r == nil || fmt.Sprint(r) != "beamjoin: join.Interval needs bounds: add join.Between(lower, upper)" {
				t.Errorf("Interval() panic = %v", r)
			}
		}()
		_, s := beam.NewPipelineWithRoot()
		orders, payments := beam.ParDo2(s, splitOrders, beam.Create(s, "L 1 o 1"))
		join.Interval[int, order, payment](s, orders, payments)
	})
}
