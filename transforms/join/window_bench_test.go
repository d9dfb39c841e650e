package join_test

// The window join's two paths against the same join written by hand with
// Beam's CoGroupByKey and a nested loop (window-gbk, which counts the
// pairs; window-gbk-records, which makes a record of each pair holding
// what Window's do), on the bounded input of BenchmarkBounded
// (genBoundedFn), 8 s fixed windows: the
// default path (window-grouped, CoGroupByKey plus Window's records) and
// the late-counting path (window-late, window-fates: one stateful DoFn per
// key in the global window, firing each window with a timer). Run with
// -benchtime=1x; `make bench` runs N=100000, three rounds, each case in
// turn, so that the ratios pair runs under the same load.

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
	register.Function3x2(stampString)
	register.DoFn5x0[beam.Window, string, func(*stampedString) bool, func(*stampedString) bool, func(beam.EventTime, handRecord)](&gbkRecordsFn{})
	register.Iter1[stampedString]()
	register.Emitter2[beam.EventTime, handRecord]()
	register.DoFn1x0[handRecord](&countHandRecordsFn{})
}

// gbkPairsFn is the inner window join written by hand: the nested loop
// over a key's values in one window after CoGroupByKey.
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

// stampedString, stampString, gbkRecordsFn and handRecord are the inner
// window join written by hand to make what Window's records hold (both
// values, their event times, the window), with types of its own instead
// of reflection: a value stamped with its event time before
// CoGroupByKey, and a record per pair after it.
type stampedString struct {
	Time  int64
	Value string
}

func stampString(et beam.EventTime, k, v string) (string, stampedString) {
	return k, stampedString{Time: et.Milliseconds(), Value: v}
}

type handRecord struct {
	Key, Left, Right                            string
	LeftTime, RightTime, WindowStart, WindowEnd time.Time
}

type gbkRecordsFn struct{}

func (gbkRecordsFn) ProcessElement(w beam.Window, k string, lefts, rights func(*stampedString) bool, emit func(beam.EventTime, handRecord)) {
	var ls, rs []stampedString
	var v stampedString
	for lefts(&v) {
		ls = append(ls, v)
	}
	for rights(&v) {
		rs = append(rs, v)
	}
	iw := w.(window.IntervalWindow)
	for _, l := range ls {
		for _, r := range rs {
			emit(w.MaxTimestamp(), handRecord{Key: k, Left: l.Value, Right: r.Value,
				LeftTime: time.UnixMilli(l.Time), RightTime: time.UnixMilli(r.Time), WindowStart: iw.Start.ToTime(), WindowEnd: iw.End.ToTime()})
		}
	}
}

// countHandRecordsFn counts gbkRecordsFn's records, as countWindowResultsFn
// counts Window's.
type countHandRecordsFn struct{}

func (countHandRecordsFn) ProcessElement(handRecord) {
	consumed.Add(2)
	results.add()
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
		name: "window-gbk-records",
		build: func(s beam.Scope, left, right beam.PCollection) {
			fixed := window.NewFixedWindows(8 * time.Second)
			stamped := func(col beam.PCollection) beam.PCollection {
				return beam.ParDo(s, stampString, beam.WindowInto(s, fixed, col))
			}
			grouped := beam.CoGroupByKey(s, stamped(left), stamped(right))
			beam.ParDo0(s, countHandRecordsFn{}, beam.ParDo(s, gbkRecordsFn{}, grouped))
		},
		want: func(g genSpec) int64 { return g.N / 2 },
	},
	{
		name: "window-grouped",
		build: func(s beam.Scope, left, right beam.PCollection) {
			out := join.Window[string, string, string](s, left, right, join.WindowInto(window.NewFixedWindows(8*time.Second)))
			beam.ParDo0(s, countWindowResultsFn{}, out.Records)
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
// (1000 keys, one partner each), bounded: elem/s, and their ratios at the
// same N, are the comparison.
func BenchmarkWindowLate(b *testing.B) {
	for _, n := range []int64{10_000, 100_000} {
		for _, c := range windowLateCases {
			b.Run(fmt.Sprintf("%s/N=%d", c.name, n), func(b *testing.B) {
				for range b.N {
					runBounded(b, standard(n), c)
				}
			})
		}
	}
}
