package join_test

// This file tests what a pipeline author does after an event-time join
// on bounded input: aggregate its records in event-time windows. The
// records of the bounded paths (Interval's and AsOf's Bounded) must reach
// a downstream windowed aggregation on time, as the streaming path's do.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	register.Function1x2(countOne)
	register.DoFn3x1[beam.Window, string, int, string](&formatWindowCountFn{})
}

// countOne keys a formatted record by its kind, counting it once.
func countOne(record string) (string, int) { return strings.Fields(record)[0], 1 }

// formatWindowCountFn writes a count of a kind in a fixed window of Width
// ms as "kind@window:n", the window counted from the epoch.
type formatWindowCountFn struct{ Width int64 }

func (f *formatWindowCountFn) ProcessElement(w beam.Window, kind string, n int) string {
	return fmt.Sprintf("%s@%d:%d", kind, w.MaxTimestamp().Milliseconds()/f.Width, n)
}

// windowCounts counts formatted records (PCollection<string>, with their
// timestamps) per kind in fixed windows of width, as a user's downstream
// aggregation would (beam.WindowInto, then stats.SumPerKey), and moves the
// counts into the global window for passert.
func windowCounts(s beam.Scope, records beam.PCollection, width time.Duration) beam.PCollection {
	counted := beam.WindowInto(s, window.NewFixedWindows(width), beam.ParDo(s, countOne, records))
	return beam.WindowInto(s, window.NewGlobalWindows(),
		beam.ParDo(s, &formatWindowCountFn{Width: width.Milliseconds()}, stats.SumPerKey(s, counted)))
}

// wantWindowCounts counts records written "kind ... t=ms" per kind and
// fixed window of width, as windowCounts writes them.
func wantWindowCounts(records []string, width time.Duration) []any {
	counts := map[string]int{}
	for _, rec := range records {
		_, at, _ := strings.Cut(rec, " t=")
		var ms int64
		fmt.Sscan(at, &ms)
		counts[fmt.Sprintf("%s@%d", strings.Fields(rec)[0], ms/width.Milliseconds())]++
	}
	var out []string
	for k, n := range counts {
		out = append(out, fmt.Sprintf("%s:%d", k, n))
	}
	slices.Sort(out)
	return toAny(out)
}

// hourlyScript is a bounded input over five hours of event time, from
// 2023-11-14: on each of four keys, left elements and right elements at
// distinct times, some a few minutes apart, some far from any partner.
func hourlyScript(seed uint64) []event {
	const base = int64(1_700_000_000_000) // ms
	rng := rand.New(rand.NewPCG(seed, 0x686f7572))
	var script []event
	used := map[int64]bool{}
	for i := range 300 {
		t := base + rng.Int64N(5*time.Hour.Milliseconds())
		for used[t] {
			t++
		}
		used[t] = true
		key := fmt.Sprint("k", rng.IntN(4))
		if rng.IntN(2) == 0 {
			script = append(script, l(t, key, fmt.Sprintf("l%03d", i)))
		} else {
			script = append(script, r(t, key, fmt.Sprintf("r%03d", i)))
		}
	}
	return script
}

// TestBoundedRecordsSurviveHourlyCounts joins a bounded input stamped
// with event times (beam.Create) on the bounded paths, Interval's and
// AsOf's, then counts the records per hour downstream: the counts must be
// exactly those of the nested loops (Interval) and the as-of oracle
// (AsOf), none of the records dropped as late by the hourly grouping.
func TestBoundedRecordsSurviveHourlyCounts(t *testing.T) {
	script := hourlyScript(1)
	perKey := map[string][]join.SweepElement{}
	for _, e := range script {
		perKey[e.key] = append(perKey[e.key], join.SweepElement{Side: e.side, Time: e.time, Value: e.val})
	}
	intervalWant := func(typ join.Type, emit join.Emit) []any {
		var records []string
		for _, es := range perKey {
			recs, _ := bruteForce(es, 0, (15 * time.Minute).Milliseconds(), typ, emit)
			records = append(records, recs...)
		}
		return wantWindowCounts(records, time.Hour)
	}
	asofWant := func(sp asofSpec) []any {
		records, _ := asofOracle(sp, script, nil)
		return wantWindowCounts(records, time.Hour)
	}
	for _, tc := range []struct {
		name string
		run  func(s beam.Scope, left, right beam.PCollection) beam.PCollection
		want []any
	}{
		{"interval_left_outer_final", func(s beam.Scope, left, right beam.PCollection) beam.PCollection {
			return join.Interval[string, string, string](s, left, right,
				join.Between(0, 15*time.Minute), join.LeftOuter, join.EmitFinal, join.Bounded()).Records
		}, intervalWant(join.LeftOuter, join.EmitFinal)},
		{"interval_inner", func(s beam.Scope, left, right beam.PCollection) beam.PCollection {
			return join.Interval[string, string, string](s, left, right,
				join.Between(0, 15*time.Minute), join.Bounded()).Records
		}, intervalWant(join.Inner, join.EmitImmediate)},
		{"interval_full_outer_retract", func(s beam.Scope, left, right beam.PCollection) beam.PCollection {
			return join.Interval[string, string, string](s, left, right,
				join.Between(0, 15*time.Minute), join.FullOuter, join.EmitRetract, join.Bounded()).Records
		}, intervalWant(join.FullOuter, join.EmitRetract)},
		{"asof_left_outer", func(s beam.Scope, left, right beam.PCollection) beam.PCollection {
			return join.AsOf[string, string, string](s, left, right, join.LeftOuter, join.Bounded()).Records
		}, asofWant(asofSpec{Outer: true, MaxAge: -1})},
		{"asof_inner_max_age", func(s beam.Scope, left, right beam.PCollection) beam.PCollection {
			return join.AsOf[string, string, string](s, left, right, join.MaxAge(20*time.Minute), join.Bounded()).Records
		}, asofWant(asofSpec{MaxAge: (20 * time.Minute).Milliseconds()})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.want) == 0 {
				t.Fatal("the case expects no records: it would show nothing")
			}
			p, s := beam.NewPipelineWithRoot()
			left, right := batch(s, script)
			records := beam.ParDo(s, formatResult, tc.run(s, left, right))
			passert.Equals(s, windowCounts(s, records, time.Hour), tc.want...)
			ptest.RunAndValidate(t, p)
		})
	}
}
