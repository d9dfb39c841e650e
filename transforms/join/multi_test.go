package join_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func init() {
	join.RegisterMultiTypes[string, string]()
	register.Function4x0(splitMulti)
	register.Emitter2[beam.EventTime, string]()
	register.Function2x0(stampMulti)
	register.Function1x1(formatMultiRow)
	register.Function1x1(formatMultiLate)
	register.Function1x1(formatMultiFate)
	register.Function2x1(windowOfRow)
	register.Function2x1(formatRowCount)
}

// multiEvent is an element of input in (0: the anchor) at ms.
type multiEvent struct {
	in       int
	key, val string
	ms       int64
}

func (e multiEvent) line() string { return fmt.Sprintf("%d %s %s %d", e.in, e.key, e.val, e.ms) }

// The impressions (anchor), clicks (0 to 10 s after) and conversions (0 to
// 30 s after, optional) of the tests, in arrival order: elements exactly at
// the bounds, a click too late for its impression (c3), an impression
// with no click (imp2), one without conversion (imp3).
var multiEvents = []multiEvent{
	{0, "u1", "imp1", 0}, {1, "u1", "c1", 5_000}, {0, "u2", "imp2", 2_000}, {0, "u3", "imp3", 4_000},
	{1, "u3", "c4", 4_000}, {1, "u1", "c2", 10_000}, {1, "u2", "c3", 13_000}, {2, "u1", "v1", 30_000},
}

// lateClick comes after the watermark has passed 100 s: impressions it
// could belong to are gone.
var lateClick = multiEvent{1, "u1", "c5", 1_000}

// multiStream plays the events through one TestStream, the watermark kept
// at the earliest time still to come, then at 100 s before lateClick,
// and splits it into the three keyed inputs.
func multiStream(s beam.Scope) []beam.PCollection {
	c := teststream.NewConfig()
	wm := int64(-1)
	for i, e := range multiEvents {
		low := e.ms
		for _, x := range multiEvents[i+1:] {
			low = min(low, x.ms)
		}
		if low > wm {
			must(c.AdvanceWatermark(low))
			wm = low
		}
		must(c.AddElements(e.ms, e.line()))
	}
	must(c.AdvanceWatermark(100_000))
	must(c.AddElements(lateClick.ms, lateClick.line()))
	must(c.AdvanceWatermarkToInfinity())
	return beam.ParDoN(s, splitMulti, teststream.Create(s, c))
}

// multiBounded is the same events (less the late click) from beam.Create,
// stamped with their times.
func multiBounded(s beam.Scope) []beam.PCollection {
	var lines []any
	for _, e := range multiEvents {
		lines = append(lines, e.line())
	}
	return beam.ParDoN(s, splitMulti, beam.ParDo(s, stampMulti, beam.Create(s, lines...)))
}

func stampMulti(line string, emit func(beam.EventTime, string)) {
	var e multiEvent
	fmt.Sscanf(line, "%d %s %s %d", &e.in, &e.key, &e.val, &e.ms)
	emit(beam.EventTime(e.ms), line)
}

func splitMulti(line string, imp, click, conv func(string, string)) {
	f := strings.Fields(line)
	[]func(string, string){imp, click, conv}[f[0][0]-'0'](f[1], f[2])
}

func formatMultiRow(r join.MultiResult[string, string]) string {
	vals := []string{r.Kind.String(), r.Key}
	for i, v := range r.Values {
		if v == nil {
			if !r.Times[i].IsZero() {
				vals = append(vals, "BAD-TIME")
			}
			vals = append(vals, "-")
			continue
		}
		vals = append(vals, fmt.Sprintf("%s@%d", *v, r.Times[i].UnixMilli()))
	}
	return strings.Join(vals, " ") + fmt.Sprintf(" t=%d", r.Time.UnixMilli())
}

func formatMultiLate(e join.MultiLateElement[string, string]) string {
	return fmt.Sprintf("late %d %s %s@%d", e.Input, e.Key, e.Value, e.Time.UnixMilli())
}

func formatMultiFate(f join.MultiFate[string]) string {
	return fmt.Sprintf("%d %s %d %v", f.Input, f.Key, f.Time.UnixMilli(), f.Outcome)
}

// windowOfRow names the window a row is counted in downstream.
func windowOfRow(w beam.Window, r join.MultiResult[string, string]) string {
	iw := w.(window.IntervalWindow)
	return fmt.Sprintf("[%d,%d)", iw.Start.Milliseconds(), iw.End.Milliseconds())
}

func formatRowCount(w string, n int) string { return fmt.Sprintf("%s %d", w, n) }

// The three-way join's expected rows, fates and downstream counts
// (TestMulti, TestFlinkMulti): EmitFinal's rows, equal to the SQL join's;
// EmitImmediate's, which keep rows whose optional element came later; every
// element's fate.
var (
	finalRows = []string{
		"pair u1 imp1@0 c1@5000 v1@30000 t=30000",
		"pair u1 imp1@0 c2@10000 v1@30000 t=30000",
		"pair u3 imp3@4000 c4@4000 - t=4000",
	}
	immediateRows = []string{
		"pair u1 imp1@0 c1@5000 - t=5000",
		"pair u1 imp1@0 c1@5000 v1@30000 t=30000",
		"pair u1 imp1@0 c2@10000 - t=10000",
		"pair u1 imp1@0 c2@10000 v1@30000 t=30000",
		"pair u3 imp3@4000 c4@4000 - t=4000",
	}
	allFates = []string{
		"0 u1 0 matched", "0 u2 2000 expired", "0 u3 4000 matched",
		"1 u1 10000 matched", "1 u1 1000 late", "1 u1 5000 matched", "1 u2 13000 expired", "1 u3 4000 matched",
		"2 u1 30000 matched",
	}
	finalCounts = []string{"[0,10000) 1", "[30000,40000) 2"}
)

// TestMulti runs the three-way join of impressions, clicks and
// conversions on Prism, streaming and bounded, in each emission mode, and
// compares whole outputs: rows, late elements, fates, and the rows counted
// per 10 s window downstream (EmitFinal's rows are on time there).
func TestMulti(t *testing.T) {
	for _, tc := range []struct {
		name    string
		bounded bool
		opts    []join.Option
		rows    []string
		late    []string
		counts  []string
		fates   []string
	}{
		{name: "final_equals_sql", opts: []join.Option{join.EmitFinal}, rows: finalRows, late: []string{"late 1 u1 c5@1000"},
			counts: finalCounts, fates: allFates},
		{name: "immediate_keeps_rows_with_absent_optional", opts: []join.Option{join.EmitImmediate}, rows: immediateRows, late: []string{"late 1 u1 c5@1000"}},
		{name: "retract_withdraws_rows_with_absent_optional", opts: []join.Option{join.EmitRetract},
			rows: append([]string{"retract u1 imp1@0 c1@5000 - t=5000", "retract u1 imp1@0 c2@10000 - t=10000"}, immediateRows...),
			late: []string{"late 1 u1 c5@1000"}},
		{name: "bounded_equals_sql", bounded: true, opts: []join.Option{join.Bounded()}, rows: finalRows,
			counts: finalCounts},
		{name: "bounded_inputs_take_the_bounded_path", bounded: true, opts: []join.Option{join.EmitImmediate}, rows: finalRows,
			counts: finalCounts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			var in []beam.PCollection
			if tc.bounded {
				in = multiBounded(s)
			} else {
				in = multiStream(s)
			}
			opts := append([]join.Option{join.TrackFates()}, tc.opts...)
			out := join.Multi[string, string](s, in[0], []join.MultiInput{
				join.Required(in[1], join.Between(0, 10*time.Second)),
				join.Optional(in[2], join.Between(0, 30*time.Second)),
			}, opts...)
			rows := gather(s, beam.ParDo(s, formatMultiRow, out.Records))
			late := gather(s, beam.ParDo(s, formatMultiLate, out.Late))
			fates := gather(s, beam.ParDo(s, formatMultiFate, out.Fates))
			windowed := beam.WindowInto(s, window.NewFixedWindows(10*time.Second), out.Records)
			counts := gather(s, beam.ParDo(s, formatRowCount, stats.Count(s, beam.ParDo(s, windowOfRow, windowed))))
			if err := ptest.Run(p); err != nil {
				t.Fatal(err)
			}
			check := func(what string, want, got []string) {
				t.Helper()
				if want == nil {
					return
				}
				if d := cmp.Diff(sorted(want), got, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("%s (-want +got):\n%s", what, d)
				}
			}
			check("rows", tc.rows, rows())
			if tc.late == nil {
				tc.late = []string{}
			}
			check("late", tc.late, late())
			check("rows per window", tc.counts, counts())
			wantFates := tc.fates
			if tc.bounded {
				wantFates = withoutLate(allFates)
			}
			check("fates", wantFates, fates())
		})
	}
}

func sorted(xs []string) []string {
	out := append([]string{}, xs...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func withoutLate(fates []string) []string {
	var out []string
	for _, f := range fates {
		if !strings.HasSuffix(f, " late") {
			out = append(out, f)
		}
	}
	return out
}

// TestMultiOptions checks Multi's construction errors.
func TestMultiOptions(t *testing.T) {
	_, s := beam.NewPipelineWithRoot()
	in := beam.ParDoN(s, splitMulti, beam.Create(s, "0 k v 0"))
	between := join.Between(0, time.Second)
	for _, tc := range []struct {
		name   string
		inputs []join.MultiInput
		opts   []join.Option
		want   string
	}{
		{"two_inputs_is_interval", []join.MultiInput{join.Required(in[1], between)}, nil,
			"beamjoin: join.Multi takes the anchor and 2 to 63 further inputs, not 1: join two inputs with join.Interval"},
		{"input_needs_bounds", []join.MultiInput{join.Required(in[1], between), join.Optional(in[2])}, nil,
			"beamjoin: join.Multi input 3 needs bounds relative to the anchor: add join.Between(lower, upper)"},
		{"input_two_betweens", []join.MultiInput{join.Required(in[1], between, join.Between(0, time.Minute)), join.Optional(in[2], between)}, nil,
			"beamjoin: join.Multi input 2: Between(0s, 1s) and Between(0s, 1m0s) contradict each other: give one of them"},
		{"final_and_retract", []join.MultiInput{join.Required(in[1], between), join.Optional(in[2], between)}, []join.Option{join.EmitFinal, join.EmitRetract},
			"beamjoin: join.Multi: EmitFinal and EmitRetract contradict each other: give one of them"},
		{"join_type", []join.MultiInput{join.Required(in[1], between), join.Optional(in[2], between)}, []join.Option{join.LeftOuter},
			"beamjoin: join.Multi does not take a join type: say per input whether it is Required or Optional"},
		{"empty_bounds", []join.MultiInput{join.Required(in[1], join.Between(0, 0), join.LowerExclusive()), join.Optional(in[2], between)}, nil,
			"beamjoin: join.Multi input 2: bounds (0s, 0s] match nothing: the interval is empty once its exclusive ends are removed"},
		{"option_of_the_join_on_an_input", []join.MultiInput{join.Required(in[1], between, join.EmitFinal), join.Optional(in[2], between)}, nil,
			"beamjoin: join.Multi input 2 does not take an emission mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := join.TryMulti[string, string](s, in[0], tc.inputs, tc.opts...)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("TryMulti = %q, want %q", got, tc.want)
			}
		})
	}
	if err := join.RouteMulti.Check(join.EmitFinal, join.AllowedLateness(time.Second)); err != nil {
		t.Errorf("RouteMulti.Check = %v, want nil", err)
	}
}
