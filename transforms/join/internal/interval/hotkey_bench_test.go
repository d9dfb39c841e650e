package interval

// What one hot key costs in state, measured over the in-memory backend of
// harness_test.go rather than a runner (Prism's own counters are not
// exact): the bytes of state read and written per element, the state
// calls per element, and the largest value one call writes, as the key's
// buffer grows at a fixed density. BenchmarkHotKey (package join's
// pipeline_bench_test.go) gives the wall time of the same input on Prism.

import (
	"fmt"
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

// BenchmarkHotKeyState measures one hot key's state traffic per element
// once its buffer has filled, in each layout: state-B/elem (read and
// written) and calls/elem against the buffer's size (buffered), and
// largest-write-B, the largest value one state call wrote over the run.
// Bundles hold 100 elements, as the Prism benchmark's generator reports
// its watermark every 100. Run with -benchtime 1x.
func BenchmarkHotKeyState(b *testing.B) {
	layouts := []struct {
		name    string
		noCache bool
		split   bool
		most    int // the largest buffer the layout is run at
	}{
		{"bag", false, false, 100_000},
		{"bag-nocache", true, false, 10_000},
		{"split", false, true, 100_000},
		{"split-nocache", true, true, 100_000},
	}
	for _, buffered := range []int{1000, 10_000, 100_000} {
		for _, l := range layouts {
			if buffered > l.most {
				continue
			}
			b.Run(fmt.Sprintf("%s/buffered=%d", l.name, buffered), func(b *testing.B) {
				in := hotKeyInput{buffered: buffered}
				for range b.N {
					cache := int64(0)
					if l.noCache {
						cache = -1
					}
					h := newLayoutHarness(b, joiner{Rules: in.rules(), CleanupEvery: 1000}, cache)
					if l.split {
						h = newSplitHarness(b, in.rules(), time.Second, 0, cache)
					}
					c := runHotKey(h, in, buffered+2000, 2000, 100)
					c.report(b)
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
// no key is hot.
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
	for _, layout := range []string{"bag", "split"} {
		b.Run(layout, func(b *testing.B) {
			for range b.N {
				h := newLayoutHarness(b, joiner{Rules: rules, CleanupEvery: every.Milliseconds()}, 0)
				h.j.AppendCleanup = appendable(rules)
				if layout == "split" {
					h = newSplitHarness(b, rules, every, 0, 0)
				}
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
