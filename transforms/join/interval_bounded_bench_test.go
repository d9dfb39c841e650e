package join_test

// Benchmarks of the interval join's bounded path (join.Bounded) on Prism,
// in process, against the window join and the streaming path on the same
// bounded input: the generator of pipeline_bench_test.go's genSpec, but
// emitting everything from one plain DoFn call, so that the inputs are
// bounded. Run with -benchtime=1x; `make bench` does.

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	beammetrics "github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	register.DoFn3x0[genSpec, func(beam.EventTime, string, string), func(beam.EventTime, string, string)](&genBoundedFn{})
}

// genBoundedFn emits a genSpec's elements, in order, from one call: a
// bounded source (a DoFn that cannot resume), unlike genFn.
type genBoundedFn struct{}

func (genBoundedFn) ProcessElement(g genSpec, left, right func(beam.EventTime, string, string)) {
	keys := make([]string, g.Keys)
	for k := range keys {
		keys[k] = fmt.Sprintf("key-%05d", k)
	}
	for i := range g.N {
		v := fmt.Sprintf("%d", i)
		for len(v) < g.Value {
			v += "v"
		}
		emit := right
		if g.left(i) {
			emit = left
		}
		emit(beam.EventTime(g.time(i)), keys[i%g.Keys], v)
	}
}

// boundedCases are the pipelines BenchmarkBounded compares on one bounded
// input: the bounded path, the window join, and the streaming path (what
// join.Interval does with a bounded input without join.Bounded).
var boundedCases = []pipelineCase{
	intervalCase("interval-bounded-inner", benchBounds, join.Bounded()),
	intervalCase("interval-bounded-left-final", benchBounds, join.LeftOuter, join.EmitFinal, join.Bounded()),
	{
		name: "window-tumbling",
		build: func(s beam.Scope, left, right beam.PCollection) {
			res := join.Window[string, string, string](s, left, right, join.WindowInto(window.NewFixedWindows(8*time.Second))).Records
			beam.ParDo0(s, countWindowResultsFn{}, res)
		},
		want: func(g genSpec) int64 { return g.N / 2 },
	},
	intervalCase("interval-inner", benchBounds),
}

// BenchmarkBounded runs each of boundedCases on the standard input
// (1000 keys, one partner each), bounded: elem/s and their ratios at the
// same N are the comparison; cpu-ns/elem is the steadier one on a busy
// machine.
func BenchmarkBounded(b *testing.B) {
	for _, n := range []int64{10_000, 100_000} {
		for _, c := range boundedCases {
			b.Run(fmt.Sprintf("%s/N=%d", c.name, n), func(b *testing.B) {
				for range b.N {
					runBounded(b, standard(n), c)
				}
			})
		}
	}
}

// BenchmarkBoundedHotKey runs the bounded path on a hot key's input (a
// pair every 20 ms of event time, bounds ±10 ms, each element with one
// partner): one key of 100k and of 1M elements, and 1000 keys of 1000
// elements each at the same density per key. sweep-held-max-B is the most
// one group's sweep held (values and entries, the bounded_group_bytes
// distribution's maximum): flat in the key's size if a key is swept by
// time bucket. elem/s of one key of 1M against 1000 keys of 1k is the
// cost of skew.
func BenchmarkBoundedHotKey(b *testing.B) {
	cases := []struct {
		name string
		g    genSpec
	}{
		{"keys=1/N=100000", boundedHot(100_000, 1)},
		{"keys=1/N=1000000", boundedHot(1_000_000, 1)},
		{"keys=1000/N=1000000", boundedHot(1_000_000, 1000)},
	}
	c := intervalCase("hot", join.Between(-10*time.Millisecond, 10*time.Millisecond), join.Bounded())
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				pr := runBounded(b, tc.g, c)
				held := int64(-1)
				for _, d := range pr.Metrics().Query(func(r beammetrics.SingleResult) bool { return r.Name() == "bounded_group_bytes" }).Distributions() {
					held = max(held, d.Result().Max)
				}
				b.ReportMetric(float64(held), "sweep-held-max-B")
			}
		})
	}
}

// boundedHot is the input of BenchmarkBoundedHotKey: n elements over keys
// keys, a pair every 20 ms of each key's event time.
func boundedHot(n, keys int64) genSpec {
	return genSpec{N: n, Keys: keys, Pair: 20, Gap: 5, Value: 16}
}

// runBounded runs one pipeline once on g's elements, bounded, and reports
// its metrics as runPipeline does, and returns the pipeline's result.
func runBounded(b *testing.B, g genSpec, c pipelineCase) beam.PipelineResult {
	b.Helper()
	p, s := beam.NewPipelineWithRoot()
	left, right := beam.ParDo2(s.Scope("generate"), &genBoundedFn{}, beam.Create(s, g))
	c.build(s, left, right)
	beamlog.SetupLogging("warn", "text")
	results.reset(0)
	stop := peakLive()
	cpu0 := cpuTime()
	start := time.Now()
	pr, err := ptest.RunWithMetrics(p)
	wall := time.Since(start)
	cpu := cpuTime() - cpu0
	peak := stop()
	if err != nil {
		b.Fatal(err)
	}
	if want := c.want(g); want >= 0 && results.n.Load() != want {
		b.Fatalf("%s: %d records, want %d", c.name, results.n.Load(), want)
	}
	b.ReportMetric(float64(g.N)/wall.Seconds(), "elem/s")
	b.ReportMetric(float64(wall.Nanoseconds())/float64(g.N), "ns/elem")
	b.ReportMetric(float64(peak)/(1<<20), "peak-live-MB")
	// CPU time (Prism's included: it runs in process) is steadier than
	// wall time on a busy machine.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(g.N), "cpu-ns/elem")
	return pr
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
