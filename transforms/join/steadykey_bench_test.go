package join_test

// What a join buffers per key under steady traffic, against what the join
// span requires: the hand-written join beside join.Interval at its
// default settings.

import (
	"fmt"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/transforms/join"
)

// steadyKey is the input of BenchmarkSteadyKey: one key, a pair every
// 500 ms of event time (a right 100 ms after its left), the watermark
// reported every 10 elements (2.5 s), unpaced (its pairs far outnumber its
// elements, so consumed would not pace it). With the bounds ±5 s each element
// has about twenty partners, and the key never pauses for longer than the
// span.
func steadyKey(n int64) genSpec {
	return genSpec{N: n, Keys: 1, Pair: 500, Gap: 100, Value: 16, Every: 10}
}

// spanNeeds is the most elements one key of g must hold at once under the
// bounds [lower, upper] with exact cleanup: at each arrival, the elements
// of its key that arrived before it (and itself) whose expiry (see
// match.Rules.Expiry) is after the arrival's time. An element of either
// side can be matched only while it has not expired, so no join can buffer
// less and be right.
func spanNeeds(g genSpec, lower, upper time.Duration) int64 {
	keep := [2]int64{max(upper.Milliseconds(), 0), max(-lower.Milliseconds(), 0)} // left, right
	live := map[int64][]int64{}                                                   // key -> expiries of what it holds
	var peak int64
	for i := range g.N {
		k, t := i%g.Keys, g.time(i)
		side := 1
		if g.left(i) {
			side = 0
		}
		kept := live[k][:0]
		for _, e := range live[k] {
			if e > t {
				kept = append(kept, e)
			}
		}
		live[k] = append(kept, t+keep[side]+1)
		peak = max(peak, int64(len(live[k])))
	}
	return peak
}

// steadyKeyCases are the joins BenchmarkSteadyKey compares.
var steadyKeyCases = []pipelineCase{
	handWritten("handwritten-inner", -5*time.Second, 5*time.Second),
	intervalCase("interval-inner", benchBounds),
	intervalCase("interval-left-final", benchBounds, join.LeftOuter, join.EmitFinal),
}

// BenchmarkSteadyKey reports each join's peak buffered elements on a key
// with steady traffic (max-buffered/key), what the span requires
// (span-needs/key) and their ratio (buffered/needs): the hand-written join
// grows with the input, join.Interval must not.
func BenchmarkSteadyKey(b *testing.B) {
	for _, n := range []int64{2000} {
		g := steadyKey(n)
		needs := spanNeeds(g, -5*time.Second, 5*time.Second)
		for _, c := range steadyKeyCases {
			c.want = func(genSpec) int64 { return -1 } // each element has many partners
			b.Run(fmt.Sprintf("%s/N=%d", c.name, n), func(b *testing.B) {
				for range b.N {
					pr := runPipeline(b, g, c, 0)
					m := maxBuffered(pr)
					b.ReportMetric(float64(m), "max-buffered/key")
					b.ReportMetric(float64(needs), "span-needs/key")
					b.ReportMetric(float64(m)/float64(needs), "buffered/needs")
				}
			})
		}
	}
}
