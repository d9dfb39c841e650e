package interval

// What one hot key costs in state, measured over the in-memory backend of
// harness_test.go rather than a runner (Prism's own counters are not
// exact): the bytes of state read and written per element, the state
// calls per element, and the largest value one call writes, as the key's
// buffer grows at a fixed density. BenchmarkHotKey (package join's
// pipeline_bench_test.go) gives the wall time of the same input on Prism.

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// hotKeyInput is the hot key benchmarks' input (package join's
// pipeline_bench_test.go's hotKey): one key, a left element every 20 ms of event time and a right
// one 5 ms after it, bounds ±10 ms, so that each element has one partner;
// the allowed lateness makes the key buffer about buffered elements.
type hotKeyInput struct {
	buffered int
}

func (in hotKeyInput) rules() match.Rules {
	return match.Rules{Bounds: match.Between(-10*time.Millisecond, 10*time.Millisecond),
		Lateness: time.Duration(in.buffered/100-1) * time.Second}
}

// element is the i-th element: its side, time and value (16 bytes).
func (hotKeyInput) element(i int) (match.Side, int64, string) {
	t := int64(1_700_000_000_000) + int64(i/2)*20 + int64(i%2)*5
	side := match.Left
	if i%2 == 1 {
		side = match.Right
	}
	return side, t, fmt.Sprintf("%016d", i)
}

// stateCost is what a run cost over its measured elements.
type stateCost struct {
	elements                       int
	calls, readBytes, writtenBytes int64
	largestWrite                   int64
	elapsed                        time.Duration
}

func (c stateCost) report(b *testing.B) {
	n := float64(c.elements)
	b.ReportMetric(float64(c.readBytes)/n, "read-B/elem")
	b.ReportMetric(float64(c.writtenBytes)/n, "written-B/elem")
	b.ReportMetric(float64(c.readBytes+c.writtenBytes)/n, "state-B/elem")
	b.ReportMetric(float64(c.calls)/n, "calls/elem")
	b.ReportMetric(float64(c.largestWrite), "largest-write-B")
	b.ReportMetric(float64(c.elapsed.Nanoseconds())/n, "cpu-ns/elem")
}

// runHotKey drives the join h holds through fill elements of in, then
// measured more, in bundles of bundle elements; before each bundle the
// watermark reaches a millisecond before the bundle's first element and
// every timer due fires, in bundles of its own (fireUpTo). It returns the
// cost of the measured elements and their firings, over every runner key
// (the split layout's buckets and first stage together).
func runHotKey(h *harness, in hotKeyInput, fill, measured, bundle int) stateCost {
	const key = "hot"
	var start stateCost
	var t0 time.Time
	for i := 0; i < fill+measured; i += bundle {
		if i >= fill && t0.IsZero() {
			calls, read, written, _ := h.totals()
			start = stateCost{calls: int64(calls), readBytes: read, writtenBytes: written}
			t0 = time.Now()
		}
		_, first, _ := in.element(i)
		h.fireUpTo(first - 1)
		h.startBundle()
		for j := i; j < min(i+bundle, fill+measured); j++ {
			side, t, v := in.element(j)
			h.element(side, t, key, v)
		}
		h.finishBundle()
	}
	calls, read, written, largest := h.totals()
	return stateCost{
		elements:     measured,
		calls:        int64(calls) - start.calls,
		readBytes:    read - start.readBytes,
		writtenBytes: written - start.writtenBytes,
		largestWrite: largest,
		elapsed:      time.Since(t0),
	}
}

// defaultHotAfter is join.DefaultHotKeyThreshold, the threshold the
// default layout detects hot keys at (package join imports this one).
const defaultHotAfter = 10_000

// hotLayout is a layout the in-memory benchmarks run a join in.
type hotLayout struct {
	name     string
	noCache  bool
	split    bool // SplitKeys
	hotAfter int  // the default layout's hot-key threshold (0: none)
	most     int  // the largest buffer the layout is run at
	// noWriteBehind: every append a state call of its own
	// (joiner.NoWriteBehind).
	noWriteBehind bool
}

// harness returns a harness for the layout, of a join with these rules
// and CleanupEvery of every.
func (l hotLayout) harness(b *testing.B, rules match.Rules, every time.Duration) *harness {
	cache := int64(0)
	if l.noCache {
		cache = -1
	}
	switch {
	case l.split:
		return newSplitHarness(b, rules, every, 0, cache)
	case l.hotAfter > 0:
		h := newHotHarness(b, rules, every, l.hotAfter, cache)
		h.j.NoWriteBehind = l.noWriteBehind
		return h
	}
	return newLayoutHarness(b, joiner{Rules: rules, CleanupEvery: every.Milliseconds(), NoWriteBehind: l.noWriteBehind}, cache)
}

// BenchmarkHotKeyState measures one hot key's state traffic per element
// once its buffer has filled, in each layout: state-B/elem (read and
// written) and calls/elem against the buffer's size (buffered), and
// largest-write-B, the largest value one state call wrote over the run;
// cpu-ns/elem is the in-memory run's own time, a measure of the DoFns'
// work without a runner's round trips. "bag" is the default layout
// without hot-key detection (join.NoHotKeyDetection), "detect" the
// default layout at the default threshold, "split" SplitKeys. Bundles
// hold 100 elements, as the Prism benchmark's generator reports its
// watermark every 100. `make bench` runs buffered 1000, 10,000 and
// 100,000; the sizes between are where the default threshold was chosen
// (docs/performance.md). Run with -benchtime 1x.
func BenchmarkHotKeyState(b *testing.B) {
	layouts := []hotLayout{
		{name: "bag", most: 100_000},
		{name: "bag-nocache", noCache: true, most: 10_000},
		{name: "detect", hotAfter: defaultHotAfter, most: 100_000},
		{name: "split", split: true, most: 100_000},
		{name: "split-nocache", noCache: true, split: true, most: 100_000},
	}
	for _, buffered := range []int{1000, 2000, 5000, 10_000, 20_000, 100_000} {
		for _, l := range layouts {
			if buffered > l.most {
				continue
			}
			b.Run(fmt.Sprintf("%s/buffered=%d", l.name, buffered), func(b *testing.B) {
				in := hotKeyInput{buffered: buffered}
				for range b.N {
					h := l.harness(b, in.rules(), time.Second)
					c := runHotKey(h, in, buffered+2000, 2000, 100)
					c.report(b)
				}
			})
		}
	}
}

// mixedInput is the input of the benchmarks of one hot key among ordinary
// ones (package join's pipeline_bench_test.go's hotAmongOrdinary, whose
// generator it mirrors): in each period of 8 s of event time, each of
// 1000 ordinary keys has a pair (BenchmarkPipeline's density), the keys
// 8 ms apart, and the key "hot" a pair every hotPair ms; a pair's right
// element has its left's time, bounds ±1 ms, so that each element has one
// partner. The join's allowed lateness is fixed (mixedRules: 98 s, and
// CleanupEvery 1 s), so the ordinary keys buffer the same at every size
// (about 25 elements each) and the hot key's density alone sets its
// buffer: 98 to 99 s of its elements, 9,800 to 9,900 at a pair every
// 20 ms ("10,000", just under the default threshold, so that the key
// stays in the bag layout on every schedule) and 98,000 to 99,000 at a
// pair every 2 ms ("100,000") (mixedAt).
type mixedInput struct {
	buffered int
	hotPair  int64 // ms between the hot key's pairs
	slots    []mixedSlot
}

// Per period of mixedPeriod ms: mixedKeys ordinary pairs, each right
// mixedGap after its left.
const mixedKeys, mixedPeriod, mixedGap = 1000, 8000, 0

// mixedAt is the mixed input whose hot key buffers about buffered
// elements: a hot pair every 200,000/buffered ms (20 ms at 10,000).
func mixedAt(buffered int) mixedInput {
	in := mixedInput{buffered: buffered, hotPair: int64(200_000 / buffered)}
	in.slots = in.periodSlots()
	return in
}

// mixedRules are the mixed input's rules at every size.
func mixedRules() match.Rules {
	return match.Rules{Bounds: match.Between(-time.Millisecond, time.Millisecond), Lateness: 98 * time.Second}
}

// perPeriod is how many elements a period holds, hotPerPeriod how many of
// them are the hot key's.
func (in mixedInput) perPeriod() int    { return 2*mixedKeys + in.hotPerPeriod() }
func (in mixedInput) hotPerPeriod() int { return int(2 * mixedPeriod / in.hotPair) }

// mixedSlot is one element of a period: its time in the period, its key
// (mixedKeys: the hot one) and side.
type mixedSlot struct {
	at   int64
	key  int
	left bool
}

// periodSlots is a period's elements in event-time order (on a tie, the
// hot key first, then by key, left first).
func (in mixedInput) periodSlots() []mixedSlot {
	var out []mixedSlot
	for k := range mixedKeys {
		at := int64(k) * mixedPeriod / mixedKeys
		out = append(out, mixedSlot{at, k, true}, mixedSlot{at + mixedGap, k, false})
	}
	for at := int64(0); at < mixedPeriod; at += in.hotPair {
		out = append(out, mixedSlot{at, mixedKeys, true}, mixedSlot{at + mixedGap, mixedKeys, false})
	}
	slices.SortStableFunc(out, func(a, b mixedSlot) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(b.key, a.key), cmp.Compare(boolInt(b.left), boolInt(a.left)))
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// element is the i-th element: its side, time, key and value (16 bytes).
func (in mixedInput) element(i int) (match.Side, int64, string, string) {
	n := in.perPeriod()
	s := in.slots[i%n]
	side, key := match.Right, "hot"
	if s.left {
		side = match.Left
	}
	if s.key < mixedKeys {
		key = fmt.Sprintf("key-%05d", s.key)
	}
	return side, int64(1_700_000_000_000) + int64(i/n)*mixedPeriod + s.at, key, fmt.Sprintf("%016d", i)
}

// mixedSkip and mixedMeasured are the periods before the measured ones
// and the measured ones: at 100,000 buffered the hot key goes hot at
// about 10 s of event time (10,000 buffered), its buffer is full at about
// 99 s, and what it buffered before the cut-over expires one join memory
// (98 s) and a cleanup (1 s) after it, by about 110 s; at 10,000 it never
// goes hot. The measurement starts at 112 s (14 periods), once only the
// split part is left, and lasts 24 s (3 periods).
const mixedSkip, mixedMeasured = 14, 3

// fill and measured are how many elements come before the measured ones
// and how many are measured.
func (in mixedInput) fill() int     { return mixedSkip * in.perPeriod() }
func (in mixedInput) measured() int { return mixedMeasured * in.perPeriod() }

// BenchmarkHotKeyAmongOrdinaryState measures one hot key among 1000
// ordinary ones (mixedInput: the same lateness and ordinary keys at both
// sizes, the hot key 10 times denser at 100,000 buffered) once the hot
// key's buffer has filled and its cut-over has settled, over the
// in-memory backend, in the default layout with hot-key detection at the
// default threshold ("detect") and without it ("bag",
// join.NoHotKeyDetection): hot-state-B/elem is the state bytes read and
// written by the hot key's runner keys (its first stage and its buckets)
// per element of the hot key, the figure whose growth from 10,000 to
// 100,000 buffered issue 50 bounds; state-B/elem, calls/elem and
// cpu-ns/elem are over every key and element. Bundles hold 100 elements,
// as the Prism benchmark's generator reports its watermark every 100. Run
// with -benchtime 1x.
func BenchmarkHotKeyAmongOrdinaryState(b *testing.B) {
	for _, buffered := range []int{10_000, 100_000} {
		for _, l := range []hotLayout{{name: "detect", hotAfter: defaultHotAfter}, {name: "bag"}} {
			b.Run(fmt.Sprintf("%s/buffered=%d", l.name, buffered), func(b *testing.B) {
				in := mixedAt(buffered)
				for range b.N {
					h := l.harness(b, mixedRules(), time.Second)
					fill, measured := in.fill(), in.measured()
					var start stateCost
					var hotStart [3]int64
					var t0 time.Time
					hotElements := 0
					for i := 0; i < fill+measured; i += 100 {
						if i >= fill && t0.IsZero() {
							calls, read, written, _ := h.totals()
							start = stateCost{calls: int64(calls), readBytes: read, writtenBytes: written}
							c, r, w := h.keyTotals("hot")
							hotStart = [3]int64{int64(c), r, w}
							t0 = time.Now()
						}
						_, first, _, _ := in.element(i)
						h.fireUpTo(first - 1)
						h.startBundle()
						for j := i; j < min(i+100, fill+measured); j++ {
							side, t, key, v := in.element(j)
							h.element(side, t, key, v)
							if key == "hot" && !t0.IsZero() {
								hotElements++
							}
						}
						h.finishBundle()
					}
					elapsed := time.Since(t0)
					calls, read, written, largest := h.totals()
					stateCost{
						elements:     measured,
						calls:        int64(calls) - start.calls,
						readBytes:    read - start.readBytes,
						writtenBytes: written - start.writtenBytes,
						largestWrite: largest,
						elapsed:      elapsed,
					}.report(b)
					_, r, w := h.keyTotals("hot")
					b.ReportMetric(float64(r-hotStart[1]+w-hotStart[2])/float64(hotElements), "hot-state-B/elem")
					b.ReportMetric(float64(h.counter("hot_keys")), "hot-keys")
				}
			})
		}
	}
}

// playInBundles plays elements 0 to n-1 (element gives each one's side,
// time, key and value) through h in bundles of 1000, firing the timers due
// before each bundle's first element between bundles, and every timer
// left at the end.
func playInBundles(h *harness, n int, element func(int) (match.Side, int64, string, string)) {
	for i := 0; i < n; i += 1000 {
		_, first, _, _ := element(i)
		h.fireUpTo(first - 1)
		h.startBundle()
		for j := i; j < min(i+1000, n); j++ {
			side, t, key, v := element(j)
			h.element(side, t, key, v)
		}
		h.finishBundle()
	}
	h.fireUpTo(1 << 62)
}

// BenchmarkOrdinaryKeysState measures the state traffic per element of
// ordinary keys, BenchmarkPipeline's shape (1000 keys, a pair per key every
// 8 s of event time, the right element 2 s after the left, bounds ±5 s,
// default CleanupEvery), in each layout, over the in-memory backend, in
// bundles of 1000 elements: calls/elem is what the split layout costs where
// no key is hot, and what hot-key detection ("detect", the default layout
// at the default threshold) costs against the default layout without it
// ("bag", join.NoHotKeyDetection).
func BenchmarkOrdinaryKeysState(b *testing.B) {
	const keys, n = 1000, 100_000
	rules := match.Rules{Bounds: match.Between(-5*time.Second, 5*time.Second)}
	every := 2500 * time.Millisecond // CleanupEvery's default for these bounds
	element := func(i int) (match.Side, int64, string, string) {
		k, j := i%keys, i/keys
		t := int64(1_700_000_000_000) + int64(j/2)*8000 + int64(j%2)*2000 + int64(k)*2000/keys
		side := match.Left
		if j%2 == 1 {
			side = match.Right
		}
		return side, t, fmt.Sprintf("key-%05d", k), fmt.Sprintf("%016d", i)
	}
	layouts := []hotLayout{{name: "bag"}, {name: "detect", hotAfter: defaultHotAfter}, {name: "split", split: true}}
	for _, l := range layouts {
		b.Run(l.name, func(b *testing.B) {
			for range b.N {
				h := l.harness(b, rules, every)
				start := time.Now()
				playInBundles(h, n, element)
				calls, read, written, largest := h.totals()
				b.ReportMetric(float64(calls)/n, "calls/elem")
				b.ReportMetric(float64(read+written)/n, "state-B/elem")
				b.ReportMetric(float64(largest), "largest-write-B")
				b.ReportMetric(float64(time.Since(start).Nanoseconds())/n, "cpu-ns/elem")
			}
		})
	}
}
