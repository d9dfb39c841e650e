package join

// What one hot key costs in state, measured over the in-memory backend of
// interval_harness_test.go rather than a runner (Prism's own counters are
// not exact): the bytes of state read and written per element, the state
// calls per element, and the largest value one call writes, as the key's
// buffer grows at a fixed density. BenchmarkHotKey (pipeline_bench_test.go)
// gives the wall time of the same input on Prism.

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// hotKeyInput is the hot key benchmarks' input (pipeline_bench_test.go's
// hotKey): one key, a left element every 20 ms of event time and a right
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
func (hotKeyInput) element(i int) (Side, int64, string) {
	t := int64(1_700_000_000_000) + int64(i/2)*20 + int64(i%2)*5
	side := Left
	if i%2 == 1 {
		side = Right
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
// every timer due fires, in the bundle. It returns the cost of the
// measured elements and their firings.
func runHotKey(h *harness, in hotKeyInput, fill, measured, bundle int) stateCost {
	const key = "hot"
	var start stateCost
	var t0 time.Time
	for i := 0; i < fill+measured; i += bundle {
		if i >= fill && t0.IsZero() {
			st := h.states[key]
			start = stateCost{calls: int64(st.calls), readBytes: st.readBytes, writtenBytes: st.writtenBytes, largestWrite: st.largestWrite}
			t0 = time.Now()
		}
		_, first, _ := in.element(i)
		h.startBundle()
		h.fireDue(key, first-1)
		for j := i; j < min(i+bundle, fill+measured); j++ {
			side, t, v := in.element(j)
			h.element(side, t, key, v)
		}
		h.finishBundle()
	}
	st := h.states[key]
	return stateCost{
		elements:     measured,
		calls:        int64(st.calls) - start.calls,
		readBytes:    st.readBytes - start.readBytes,
		writtenBytes: st.writtenBytes - start.writtenBytes,
		largestWrite: st.largestWrite,
		elapsed:      time.Since(t0),
	}
}

// fireDue fires the key's timers that the watermark wm has passed, in
// time order, in the open bundle.
func (h *harness) fireDue(key string, wm int64) {
	h.t.Helper()
	for range 1 << 20 {
		_, tp := h.stores(key)
		var next *timers.TimerMap
		for _, t := range tp {
			if t.FireTimestamp.Milliseconds() <= wm && (next == nil || t.FireTimestamp < next.FireTimestamp) {
				next = &t
			}
		}
		if next == nil {
			return
		}
		h.fire(key, *next)
	}
	h.t.Fatalf("key %s: timers keep firing at watermark %d", key, wm)
}

// BenchmarkHotKeyState measures one hot key's state traffic per element
// once its buffer has filled, in each layout: state-B/elem (read and
// written) and calls/elem against the buffer's size (buffered), and
// largest-write-B, the largest value one state call wrote over the run.
// Bundles hold 100 elements, as the Prism benchmark's generator reports
// its watermark every 100. Run with -benchtime 1x.
func BenchmarkHotKeyState(b *testing.B) {
	layouts := []struct {
		name     string
		noCache  bool
		bucketed bool
		most     int // the largest buffer the layout is run at
	}{
		{"bag", false, false, 100_000},
		{"bag-nocache", true, false, 10_000},
		{"buckets", false, true, 100_000},
	}
	for _, buffered := range []int{1000, 10_000, 100_000} {
		for _, l := range layouts {
			if buffered > l.most {
				continue
			}
			b.Run(fmt.Sprintf("%s/buffered=%d", l.name, buffered), func(b *testing.B) {
				in := hotKeyInput{buffered: buffered}
				for range b.N {
					j := joiner{Rules: in.rules(), CleanupEvery: 1000}
					if l.bucketed {
						j.BucketAbove = 1
					}
					cache := int64(0)
					if l.noCache {
						cache = -1
					}
					h := newLayoutHarness(b, j, cache)
					c := runHotKey(h, in, buffered+2000, 2000, 100)
					c.report(b)
				}
			})
		}
	}
}
