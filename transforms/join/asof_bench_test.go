package join_test

// The as-of join's pipeline benchmark beside the interval join's, on the
// same generated input (genSpec, pipeline_bench_test.go).

import (
	"fmt"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// asofBenchCase is the as-of join on the benchmark input: each left element
// joins its key's latest right element at or before it. On standard(n)
// that is the right element of the key's previous pair, 6 s before; the
// key's first left element has none.
func asofBenchCase(name string, opts ...join.Option) pipelineCase {
	outer := false
	for _, o := range opts {
		if o == join.LeftOuter {
			outer = true
		}
	}
	return pipelineCase{
		name: name,
		build: func(s beam.Scope, left, right beam.PCollection) {
			res := join.AsOf[string, string, string](s, left, right, opts...).Records
			beam.ParDo0(s, countResultsFn{}, res)
		},
		want: func(g genSpec) int64 { return asofBenchWant(g, outer) },
	}
}

// asofBenchWant counts the records the as-of join makes on g: one per left
// element with an earlier right element of its key (j >= 2, its key's
// previous pair), and under LeftOuter one for every left element.
func asofBenchWant(g genSpec, outer bool) int64 {
	var n int64
	for i := int64(0); i < g.N; i++ {
		if g.left(i) && (outer || i/g.Keys >= 2) {
			n++
		}
	}
	return n
}

// BenchmarkAsOfPipeline runs the interval join and the as-of join, back to
// back, on the same generated input (standard: 1000 keys, a left element
// and 2 s later a right one, pairs 8 s apart), so that their elem/s ratio
// is of runs under the same load. The interval join has ±5 s bounds and
// one partner per element; the as-of join matches each left element with
// its key's previous right element.
//
//	go test ./transforms/join -run '^$' -bench 'BenchmarkAsOfPipeline' -benchtime 1x -count 3
func BenchmarkAsOfPipeline(b *testing.B) {
	cases := []pipelineCase{
		intervalCase("interval-inner", benchBounds),
		asofBenchCase("asof-inner"),
		asofBenchCase("asof-left-final", join.LeftOuter, join.EmitFinal),
	}
	for _, n := range []int64{10_000, 100_000} {
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/N=%d", c.name, n), func(b *testing.B) {
				for range b.N {
					runPipeline(b, standard(n), c, 0)
				}
			})
		}
	}
}
