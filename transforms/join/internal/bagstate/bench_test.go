package bagstate

// Benchmarks of the interval join's state format: the bytes a buffered
// element costs in state against the size of its encoded value, and the
// time to append and decode entries.

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// BenchmarkStateBytes encodes string values of 16, 100 and 1000
// characters the way the join does (Element with the string coder) and
// buffers them in each of the state shapes: appended one per bag element
// (an arrival), rewritten into one chunk (cleanup, or a bucket's value).
// It reports bytes per element: the value as Beam encodes it (encoded-B),
// and what state holds for it (appended-B, rewritten-B), including the
// length prefix Beam's bag coder puts before each []byte bag element.
func BenchmarkStateBytes(b *testing.B) {
	_, s := beam.NewPipelineWithRoot()
	e, err := coders.KVValue(beam.AddFixedKey(s, beam.Create(s, "x")))
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{16, 100, 1000} {
		b.Run(fmt.Sprintf("value=%d", size), func(b *testing.B) {
			v, err := e.Encode(strings.Repeat("v", size))
			if err != nil {
				b.Fatal(err)
			}
			const n = 1000
			entries := make([]match.Entry[[]byte], n)
			for i := range entries {
				entries[i] = match.Entry[[]byte]{Side: match.Side(i % 2), Time: 1_700_000_000_000 + int64(i)*1000, Value: v}
			}
			var appended, rewritten int
			b.ReportAllocs()
			for range b.N {
				appended = 0
				for _, x := range entries {
					chunk := AppendEntry(nil, x)
					appended += len(chunk) + bagPrefix(chunk)
				}
				chunk := EncodeState(1_700_000_000_000, nil, entries)
				rewritten = len(chunk) + bagPrefix(chunk)
				if _, err := DecodeState([][]byte{chunk}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(v)), "encoded-B")
			b.ReportMetric(float64(appended)/n, "appended-B")
			b.ReportMetric(float64(rewritten)/n, "rewritten-B")
		})
	}
}

// bagPrefix is the length prefix Beam's bytes coder writes before a bag
// element.
func bagPrefix(chunk []byte) int {
	return len(binary.AppendUvarint(nil, uint64(len(chunk))))
}
