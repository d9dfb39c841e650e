package streamjoiner

// Benchmarks of the StreamJoiner in its steady state, against the
// nested-loop reference (reference_test.go) on the same stream.

import (
	"fmt"
	"github.com/beamjoin/beamjoin/transforms/join"
	"testing"
	"time"
)

// benchStream is a stream in which every key keeps perKey elements
// buffered and every arriving element has exactly one partner buffered:
// per key, left and right elements alternate, spacing apart, and the
// window reaches exactly one neighbour back. Keys take turns, so every
// arrival past the warm-up evicts one element (MaxStateSize is
// keys*perKey; the retention is long enough not to interfere).
type benchStream struct {
	keys, perKey int
	names        []string
}

const benchSpacing = 100 // milliseconds between a key's elements

func newBenchStream(keys, perKey int) *benchStream {
	s := &benchStream{keys: keys, perKey: perKey}
	for k := range keys {
		s.names = append(s.names, fmt.Sprint("key-", k))
	}
	return s
}

func (s *benchStream) config() joinerConfig {
	cfg := config(join.Inner, -benchSpacing*time.Millisecond, benchSpacing*time.Millisecond)
	cfg.MaxStateSize = s.keys * s.perKey
	cfg.StateRetention = 1000 * time.Hour
	return cfg
}

// element returns the i-th element of the stream and whether it is a left
// one.
func (s *benchStream) element(i int) (ev, bool) {
	n := i / s.keys // the element's position within its key
	return ev{Key: s.names[i%s.keys], At: int64(n) * benchSpacing, Name: "x"}, n%2 == 0
}

func (s *benchStream) warmUp() int { return s.keys * (s.perKey + 1) }

// benchShapes are the steady states measured: buffered elements per key,
// and the number of keys.
var benchShapes = []struct{ keys, perKey int }{
	{1000, 1},
	{100, 100},
	{2, 10000},
}

// BenchmarkStreamJoiner runs the StreamJoiner ("joiner") and the
// nested-loop reference ("nested-loop") on the same streams, side by side.
func BenchmarkStreamJoiner(b *testing.B) {
	for _, shape := range benchShapes {
		name := fmt.Sprintf("keys=%d/buffered=%d", shape.keys, shape.perKey)
		b.Run(name+"/joiner", func(b *testing.B) { benchJoiner(b, shape.keys, shape.perKey) })
		b.Run(name+"/nested-loop", func(b *testing.B) { benchNestedLoop(b, shape.keys, shape.perKey) })
	}
}

func benchJoiner(b *testing.B, keys, perKey int) {
	s := newBenchStream(keys, perKey)
	j, err := newJoiner(s.config(), func(l, r *ev) (int64, error) { return l.At + r.At, nil })
	if err != nil {
		b.Fatal(err)
	}
	feed := func(i int) int {
		e, left := s.element(i)
		var out []int64
		if left {
			out, err = j.ProcessLeft(e)
		} else {
			out, err = j.ProcessRight(e)
		}
		if err != nil {
			b.Fatal(err)
		}
		return len(out)
	}
	for i := range s.warmUp() {
		feed(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	pairs := 0
	for i := range b.N {
		pairs += feed(s.warmUp() + i)
	}
	b.StopTimer()
	if pairs != b.N {
		b.Fatalf("%d pairs from %d elements, want one each", pairs, b.N)
	}
	if got := j.LeftBufferSize() + j.RightBufferSize(); got != keys*perKey {
		b.Fatalf("%d buffered, want %d", got, keys*perKey)
	}
}

// benchNestedLoop is the baseline: the reference joiner on the same stream.
func benchNestedLoop(b *testing.B, keys, perKey int) {
	s := newBenchStream(keys, perKey)
	ref := newReference(s.config())
	feed := func(i int) int {
		e, left := s.element(i)
		return len(ref.process(refElem{left: left, ev: e}))
	}
	for i := range s.warmUp() {
		feed(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	pairs := 0
	for i := range b.N {
		pairs += feed(s.warmUp() + i)
	}
	b.StopTimer()
	if pairs != b.N {
		b.Fatalf("%d pairs from %d elements, want one each", pairs, b.N)
	}
}
