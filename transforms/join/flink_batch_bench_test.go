package join_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/beamjoin/beamjoin/internal/flinkrun"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// BenchmarkFlinkBatchInterval joins bounded input on Flink's batch mode
// (make bench-flink): the streaming path, whose state Flink's batch mode
// fills with all of a key's elements before it fires the key's cleanup
// timers one bundle at a time (Streaming), against the bounded path,
// which bounded input takes by itself. N
// elements, half a side, on 4 keys, one every millisecond per key,
// Between(0, 10ms): about five partners each; on a stream a key buffers a few dozen elements at a time, in batch mode all of them.
func BenchmarkFlinkBatchInterval(b *testing.B) {
	js := flinkrun.Shared(b)
	for _, n := range []int{20_000, 80_000} {
		var lines []string
		for i := range n {
			side := "0"
			if (i/4)%2 == 1 {
				side = "1"
			}
			lines = append(lines, fmt.Sprintf("%d %s k%d v%d", 1_000_000+int64(i/4), side, i%4, i))
		}
		for _, path := range []string{"streaming", "bounded"} {
			b.Run(fmt.Sprintf("path=%s/N=%d", path, n), func(b *testing.B) {
				for range b.N {
					p, s := beam.NewPipelineWithRoot()
					left, right := beam.ParDo2(s, &splitLineFn{}, beam.ParDo(s, timestampedLine, beam.CreateList(s, lines)))
					opts := []join.Option{join.Between(0, 10*time.Millisecond), join.Streaming()}
					if path == "bounded" {
						opts = []join.Option{join.Between(0, 10*time.Millisecond)} // bounded input takes it by itself
					}
					j := join.Interval[string, string, string](s, left, right, opts...)
					stats.Count(s, beam.ParDo(s, formatResult, j.Records))
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
					start := time.Now()
					if _, err := flinkrun.Execute(ctx, p, flinkrun.Options{Endpoint: js.Endpoint}); err != nil {
						cancel()
						b.Fatal(err)
					}
					cancel()
					b.ReportMetric(float64(n)/time.Since(start).Seconds(), "elem/s")
				}
			})
		}
	}
}
