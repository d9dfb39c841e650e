package match

// Benchmarks of the matching core per arriving element, with a key holding
// a steady number of buffered elements, against a nested-loop join on the
// same stream (the oracle's match rule, oracleMatches, tried on every
// buffered element of the other side).

import (
	"fmt"
	"testing"
	"time"
)

// benchSpacing is the time between a key's elements. Sides alternate and
// the bounds are [0, benchSpacing], so each right element matches the left
// one just before it, and nothing else: one partner each.
const benchSpacing = 100

var benchRules = Rules{Bounds: Between(0, benchSpacing*time.Millisecond)}

func benchEntry(i int) Entry[int] {
	return Entry[int]{Side: Side(i % 2), Time: int64(i) * benchSpacing, Value: i}
}

// nestedLoop is the baseline: the buffered elements in arrival order, each
// arrival compared with every one of them, the oldest dropped past a size
// (in amortized constant time, so that the loop is all it pays for).
type nestedLoop struct {
	entries []Entry[int] // buffered: entries[head:]
	head    int
	size    int
}

func (n *nestedLoop) add(e Entry[int]) (partners int) {
	for _, x := range n.entries[n.head:] {
		if x.Side == e.Side {
			continue
		}
		l, r := e, x
		if e.Side == Right {
			l, r = x, e
		}
		if oracleMatches(benchRules.Bounds, l.Time, r.Time) {
			partners++
		}
	}
	n.entries = append(n.entries, e)
	if len(n.entries)-n.head > n.size {
		n.head++
	}
	if n.head > n.size {
		n.entries = n.entries[:copy(n.entries, n.entries[n.head:])]
		n.head = 0
	}
	return partners
}

// BenchmarkArrival is one key's arrivals in a steady state of 1, 100 and
// 10,000 buffered elements, each with exactly one partner: the core
// (Buffer.Add, then Buffer.Evict back to the size) and the nested loop.
func BenchmarkArrival(b *testing.B) {
	for _, buffered := range []int{1, 100, 10_000} {
		b.Run(fmt.Sprintf("buffered=%d/core", buffered), func(b *testing.B) {
			buf := NewBuffer[int]()
			for i := range buffered {
				buf.Add(benchRules, benchEntry(i))
			}
			b.ReportAllocs()
			b.ResetTimer()
			pairs := 0
			for i := range b.N {
				pairs += len(buf.Add(benchRules, benchEntry(buffered+i)).Partners)
				buf.Evict(benchRules, buffered)
			}
			b.StopTimer()
			checkPairs(b, pairs, buffered)
			if buf.Len() != buffered {
				b.Fatalf("%d buffered, want %d", buf.Len(), buffered)
			}
		})
		b.Run(fmt.Sprintf("buffered=%d/nested-loop", buffered), func(b *testing.B) {
			n := &nestedLoop{size: buffered}
			for i := range buffered {
				n.add(benchEntry(i))
			}
			b.ReportAllocs()
			b.ResetTimer()
			pairs := 0
			for i := range b.N {
				pairs += n.add(benchEntry(buffered + i))
			}
			b.StopTimer()
			checkPairs(b, pairs, buffered)
		})
	}
}

// checkPairs checks that every right arrival found its one partner: half
// the arrivals, give or take the first.
func checkPairs(b *testing.B, pairs, buffered int) {
	b.Helper()
	if want := b.N / 2; pairs < want || pairs > want+1 {
		b.Fatalf("%d pairs from %d arrivals with %d buffered, want about %d", pairs, b.N, buffered, want)
	}
}
