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
		return newHotHarness(b, rules, every, l.hotAfter, cache)
	}
	return newLayoutHarness(b, joiner{Rules: rules, CleanupEvery: every.Milliseconds()}, cache)
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
// 8 ms apart, and the key "hot" a pair every 20 ms (hotKeyInput's
// density), 800 elements a period against the ordinary keys' 2000; a
// right element comes 5 ms after its left, bounds ±10 ms, so that each
// element has one partner. The allowed lateness makes the hot key buffer
// about buffered elements, and each ordinary key about buffered/400 (25
// at 10,000).
type mixedInput struct {
	buffered int
}

// Per period of mixedPeriod ms: mixedKeys ordinary pairs, a hot pair
// every mixedHotPair ms, each right mixedGap after its left.
const (
	mixedKeys, mixedPeriod, mixedHotPair, mixedGap = 1000, 8000, 20, 5
	mixedPerPeriod                                 = 2*mixedKeys + 2*mixedPeriod/mixedHotPair
)

func (in mixedInput) rules() match.Rules { return hotKeyInput(in).rules() }

// mixedSlot is one element of a period: its time in the period, its key
// (mixedKeys: the hot one) and side.
type mixedSlot struct {
	at   int64
	key  int
	left bool
}

// mixedPeriodSlots is a period's elements in event-time order (on a tie,
// the hot key first, then by key, left first).
var mixedPeriodSlots = func() []mixedSlot {
	var out []mixedSlot
	for k := range mixedKeys {
		at := int64(k) * mixedPeriod / mixedKeys
		out = append(out, mixedSlot{at, k, true}, mixedSlot{at + mixedGap, k, false})
	}
	for at := int64(0); at < mixedPeriod; at += mixedHotPair {
		out = append(out, mixedSlot{at, mixedKeys, true}, mixedSlot{at + mixedGap, mixedKeys, false})
	}
	slices.SortStableFunc(out, func(a, b mixedSlot) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(b.key, a.key), cmp.Compare(boolInt(b.left), boolInt(a.left)))
	})
	return out
}()

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// element is the i-th element: its side, time, key and value (16 bytes).
func (mixedInput) element(i int) (match.Side, int64, string, string) {
	s := mixedPeriodSlots[i%mixedPerPeriod]
	side, key := match.Right, "hot"
	if s.left {
		side = match.Left
	}
	if s.key < mixedKeys {
		key = fmt.Sprintf("key-%05d", s.key)
	}
	return side, int64(1_700_000_000_000) + int64(i/mixedPerPeriod)*mixedPeriod + s.at, key, fmt.Sprintf("%016d", i)
}

// fill is how many elements of the input come before the hot key's
// buffered-th.
func (in mixedInput) fill() int {
	return in.buffered * mixedPerPeriod / (2 * mixedPeriod / mixedHotPair)
}

// BenchmarkHotKeyAmongOrdinaryState measures one hot key among 1000
// ordinary ones (mixedInput) once the hot key's buffer has filled, over the
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
				in := mixedInput{buffered: buffered}
				for range b.N {
					h := l.harness(b, in.rules(), time.Second)
					fill, measured := in.fill(), 2000*mixedPerPeriod/(2*mixedPeriod/mixedHotPair)
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
				for i := 0; i < n; i += 1000 {
					_, first, _, _ := element(i)
					h.fireUpTo(first - 1)
					h.startBundle()
					for j := i; j < i+1000; j++ {
						side, t, key, v := element(j)
						h.element(side, t, key, v)
					}
					h.finishBundle()
				}
				h.fireUpTo(1 << 62)
				calls, read, written, largest := h.totals()
				b.ReportMetric(float64(calls)/n, "calls/elem")
				b.ReportMetric(float64(read+written)/n, "state-B/elem")
				b.ReportMetric(float64(largest), "largest-write-B")
				b.ReportMetric(float64(time.Since(start).Nanoseconds())/n, "cpu-ns/elem")
			}
		})
	}
}
