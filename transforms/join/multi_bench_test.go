package join_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beammetrics "github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	register.Function2x2(copyKV)
	register.Function2x0(anchorOfPair)
	register.Emitter3[beam.EventTime, string, string]()
	register.DoFn1x0[join.MultiResult[string, string]](&countMultiFn{})
}

func copyKV(k, v string) (string, string) { return k, v }

// anchorOfPair keys a pair of the first of two chained joins for the
// second, at its left (anchor) element's time, so that the second join's
// bounds are relative to the anchor as Multi's are.
func anchorOfPair(r join.Result[string, string, string], emit func(beam.EventTime, string, string)) {
	emit(beam.EventTime(r.LeftTime.UnixMilli()), r.Key, *r.Left+"|"+*r.Right)
}

type countMultiFn struct{}

func (*countMultiFn) ProcessElement(join.MultiResult[string, string]) {
	consumed.Add(2)
	results.add()
}

// BenchmarkMulti compares a three-way join (impressions, clicks,
// conversions: here the standard input's left, its right, and a copy of
// its right) in one Multi step against the same join as two chained
// Interval joins, on the same input, in two shapes: "one" (bounds of
// ±5 s: each element has one partner in each input) and "wide" (bounds of
// ±21 s: each impression has five clicks and five conversions, 25 rows,
// and the chained joins' first step hands five pairs per impression to
// the second, which buffers them). It reports elements/s, rows, and the
// most elements buffered per key (the chained joins' two steps added), a
// proxy of the state each holds.
func BenchmarkMulti(b *testing.B) {
	shapes := []struct {
		name  string
		bound time.Duration
		n     []int64
	}{{"one", 5 * time.Second, []int64{20_000, 100_000}}, {"wide", 21 * time.Second, []int64{20_000}}}
	for _, sh := range shapes {
		bounds := join.Between(-sh.bound, sh.bound)
		want := func(g genSpec) int64 { return multiRows(g, sh.bound.Milliseconds()) }
		cases := []pipelineCase{
			{name: "multi-3way", want: want,
				build: func(s beam.Scope, left, right beam.PCollection) {
					third := beam.ParDo(s, copyKV, right)
					rows := join.Multi[string, string](s, left, []join.MultiInput{join.Required(right, bounds), join.Required(third, bounds)}).Records
					beam.ParDo0(s, &countMultiFn{}, rows)
				}},
			{name: "multi-3way-appendeach", want: want, // an append per arrival, as before write-behind
				build: func(s beam.Scope, left, right beam.PCollection) {
					third := beam.ParDo(s, copyKV, right)
					rows := join.Multi[string, string](s, left, []join.MultiInput{join.Required(right, bounds), join.Required(third, bounds)}, join.NoWriteBehind()).Records
					beam.ParDo0(s, &countMultiFn{}, rows)
				}},
			{name: "chained-interval", want: want,
				build: func(s beam.Scope, left, right beam.PCollection) {
					third := beam.ParDo(s, copyKV, right)
					first := join.Interval[string, string, string](s.Scope("first"), left, right, bounds).Records
					keyed := beam.ParDo(s, anchorOfPair, first)
					second := join.Interval[string, string, string](s.Scope("second"), keyed, third, bounds).Records
					beam.ParDo0(s, countResultsFn{}, second)
				}},
		}
		for _, n := range sh.n {
			for _, c := range cases {
				b.Run(fmt.Sprintf("%s/%s/N=%d", sh.name, c.name, n), func(b *testing.B) {
					for range b.N {
						pr := runPipeline(b, standard(n), c, 0)
						var held int64
						for _, name := range []string{"buffered_per_key", "multi_buffered_per_key"} {
							for _, d := range pr.Metrics().Query(func(r beammetrics.SingleResult) bool { return r.Name() == name }).Distributions() {
								held += d.Result().Max
							}
						}
						b.ReportMetric(float64(held), "max-buffered/key")
						b.ReportMetric(float64(results.n.Load()), "rows")
					}
				})
			}
		}
	}
}

// multiRows is the number of rows of the three-way join of g's input
// with the same bounds ±bound (ms) for its two further inputs: for each
// left element, the square of the number of right elements of its key
// within the bounds.
func multiRows(g genSpec, bound int64) int64 {
	var rows int64
	for i := int64(0); i < g.N; i++ {
		if !g.left(i) {
			continue
		}
		var m int64
		for j := i % g.Keys; j < g.N; j += g.Keys {
			if d := g.time(j) - g.time(i); !g.left(j) && d >= -bound && d <= bound {
				m++
			}
		}
		rows += m * m
	}
	return rows
}
