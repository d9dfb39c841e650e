package join_test

// The cost of Window's late-data design (one stateful DoFn per key in the
// global window, firing each window with a timer) against the design it
// replaced, Beam's own windowing and CoGroupByKey, which drops late data
// silently, on pipeline_bench_test.go's generated stream. Run with
// -benchtime=1x; `make bench` runs N=100000.

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	register.DoFn3x0[string, func(*string) bool, func(*string) bool](&gbkPairsFn{})
	register.Iter1[string]()
	register.DoFn1x0[join.Fate[string]](&countFatesFn{})
}

// gbkPairsFn is the inner window join the way Window used to run: the
// nested loop over a key's values in one window after CoGroupByKey.
type gbkPairsFn struct{}

func (gbkPairsFn) ProcessElement(_ string, lefts, rights func(*string) bool) {
	var ls, rs []string
	var v string
	for lefts(&v) {
		ls = append(ls, v)
	}
	for rights(&v) {
		rs = append(rs, v)
	}
	for range ls {
		for range rs {
			consumed.Add(2)
			results.add()
		}
	}
}

// countFatesFn consumes fates.
type countFatesFn struct{}

func (countFatesFn) ProcessElement(join.Fate[string]) {}

// windowLateCases are the window joins BenchmarkWindowLate compares, in
// 8 s fixed windows.
var windowLateCases = []pipelineCase{
	{
		name: "window-gbk",
		build: func(s beam.Scope, left, right beam.PCollection) {
			fixed := window.NewFixedWindows(8 * time.Second)
			grouped := beam.CoGroupByKey(s, beam.WindowInto(s, fixed, left), beam.WindowInto(s, fixed, right))
			beam.ParDo0(s, gbkPairsFn{}, grouped)
		},
		want: func(g genSpec) int64 { return g.N / 2 },
	},
	{
		name: "window-late",
		build: func(s beam.Scope, left, right beam.PCollection) {
			out := join.Window[string, string, string](s, left, right, join.WindowInto(window.NewFixedWindows(8*time.Second)), join.ReportLate())
			beam.ParDo0(s, countWindowResultsFn{}, out.Records)
		},
		want: func(g genSpec) int64 { return g.N / 2 },
	},
	{
		name: "window-fates",
		build: func(s beam.Scope, left, right beam.PCollection) {
			out := join.Window[string, string, string](s, left, right, join.WindowInto(window.NewFixedWindows(8*time.Second)), join.ReportLate(), join.TrackFates())
			beam.ParDo0(s, countWindowResultsFn{}, out.Records)
			beam.ParDo0(s, countFatesFn{}, out.Fates)
		},
		want: func(g genSpec) int64 { return g.N / 2 },
	},
}

// BenchmarkWindowLate runs each of windowLateCases on the standard input
// (1000 keys, one partner each): elem/s, and their ratios at the same N,
// are the comparison.
func BenchmarkWindowLate(b *testing.B) {
	for _, n := range []int64{10_000, 100_000} {
		for _, c := range windowLateCases {
			b.Run(fmt.Sprintf("%s/N=%d", c.name, n), func(b *testing.B) {
				for range b.N {
					runPipeline(b, standard(n), c, 0)
				}
			})
		}
	}
}
