package join_test

// This file holds the routes' tests on Flink (make flink-test): every
// route, on bounded input (Flink's batch mode) and as a stream (Flink's
// streaming mode, fed by timedstream), with the options whose behaviour a
// runner decides, and the shapes users build downstream of a join. Each
// run's records must equal an oracle's and those of the same pipeline on
// Prism.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/beamjoin/beamjoin/internal/flinkrun"
	"github.com/beamjoin/beamjoin/internal/timedstream"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.Function2x0(timestampedLine)
	register.Function2x1(formatWindowResult)
	register.Function2x1(formatGroup)
	register.Function4x1(formatTagged)
	register.Function1x1(formatFate)
	register.DoFn2x0[string, func(string)](&tagLineFn{})
}

// flinkInputs are the two ways a route's input reaches it: as a stream
// (unbounded, played by timedstream: Flink's streaming mode) and read
// whole (bounded, from beam.Create: Flink's batch mode).
var flinkInputs = []struct {
	name string
	play func(beam.Scope, []event) (left, right beam.PCollection)
}{
	{"stream", func(s beam.Scope, script []event) (beam.PCollection, beam.PCollection) {
		return beam.ParDo2(s, splitEvent, timedstream.Create(s, timedScript(script)))
	}},
	{"bounded", func(s beam.Scope, script []event) (beam.PCollection, beam.PCollection) {
		var lines []string
		for _, e := range script {
			if !e.watermark {
				lines = append(lines, fmt.Sprintf("%d %s", e.time, eventLine(e)))
			}
		}
		return beam.ParDo2(s, splitEvent, beam.ParDo(s, timestampedLine, beam.CreateList(s, lines)))
	}},
}

// timedScript turns a stream_test.go script into a timedstream script of
// "L key value" and "R key value" lines.
func timedScript(script []event) timedstream.Script {
	var sc timedstream.Script
	for _, e := range script {
		if e.watermark {
			sc = sc.Advance(e.time)
			continue
		}
		sc = sc.Add(timedstream.Element{Time: e.time, Value: eventLine(e)})
	}
	return sc
}

func eventLine(e event) string {
	side := "L"
	if e.side == join.Right {
		side = "R"
	}
	return side + " " + e.key + " " + e.val
}

// timestampedLine turns "time rest" into rest at event time time.
func timestampedLine(line string, emit func(beam.EventTime, string)) {
	var t int64
	fmt.Sscan(line, &t)
	emit(beam.EventTime(t), line[strings.IndexByte(line, ' ')+1:])
}

// tagLineFn prefixes each line with the output's tag.
type tagLineFn struct{ Tag string }

func (f *tagLineFn) ProcessElement(line string, emit func(string)) { emit(f.Tag + ": " + line) }

func formatWindowResult(w beam.Window, r join.WindowResult[string, string, string]) string {
	side := func(v *string, t time.Time) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%s@%d", *v, t.UnixMilli())
	}
	return fmt.Sprintf("%v %s %s %s %s", r.Kind, r.Key, side(r.Left, r.LeftTime), side(r.Right, r.RightTime), windowOf(w))
}

func formatGroup(w beam.Window, g join.Group[string, string, string]) string {
	l, r := slices.Clone(g.Left), slices.Clone(g.Right)
	slices.Sort(l)
	slices.Sort(r)
	return fmt.Sprintf("%s %v %v %s", g.Key, l, r, windowOf(w))
}

func formatTagged(w beam.Window, et beam.EventTime, k string, v join.Tagged[string, string]) string {
	val := v.Left
	if v.Side == join.Right {
		val = v.Right
	}
	return fmt.Sprintf("%s %v %s@%d %s", k, v.Side, *val, int64(et), windowOf(w))
}

func formatFate(f join.Fate[string]) string {
	return fmt.Sprintf("%v %s %d %v", f.Side, f.Key, f.Time.UnixMilli(), f.Outcome)
}

// routeScript is the routes' workload: three keys, elements in and across
// one-second windows, some with no partner, on time.
var routeScript = onTime(
	l(100, "a", "l1"), r(300, "a", "r1"), r(900, "a", "r2"),
	l(1_200, "a", "l2"), r(1_950, "a", "r3"),
	l(400, "b", "l3"), l(2_500, "b", "l4"), r(2_600, "b", "r4"),
	r(700, "c", "r5"), l(3_100, "c", "l5"),
)

// routesPipeline runs every route on routeScript's inputs and writes each
// one's records, tagged, to dir.
func routesPipeline(play func(beam.Scope, []event) (beam.PCollection, beam.PCollection), dir string, bounded bool) *beam.Pipeline {
	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, routeScript)
	var outs []beam.PCollection
	tag := func(name string, col beam.PCollection) {
		outs = append(outs, inGlobal(s, beam.ParDo(s, &tagLineFn{Tag: name}, col)))
	}
	second := join.WindowInto(window.NewFixedWindows(time.Second))
	for _, typ := range []join.Type{join.Inner, join.LeftOuter, join.FullOuter} {
		tag(fmt.Sprintf("window %v", typ), beam.ParDo(s, formatWindowResult, join.Window[string, string, string](s, left, right, second, typ).Records))
		tag(fmt.Sprintf("window %v late-counting", typ), beam.ParDo(s, formatWindowResult, join.Window[string, string, string](s, left, right, second, typ, join.ReportLate()).Records))
	}
	tag("cogroup", beam.ParDo(s, formatGroup, join.CoGroup[string, string, string](s, left, right, second).Records))
	cg := join.CoGroup[string, string, string](s, left, right, second, join.TrackFates())
	tag("cogroup late-counting", beam.ParDo(s, formatGroup, cg.Records))
	tag("cogroup fates", beam.ParDo(s, formatFate, cg.Fates))
	tag("connect", beam.ParDo(s, formatTagged, join.Connect[string, string, string](s, left, right)))
	for _, typ := range []join.Type{join.Inner, join.LeftOuter} {
		tag(fmt.Sprintf("asof %v", typ), beam.ParDo(s, formatResult, join.AsOf[string, string, string](s, left, right, typ).Records))
	}
	between := join.Between(-500*time.Millisecond, time.Second)
	fates := join.Interval[string, string, string](s, left, right, between, join.FullOuter, join.EmitFinal, join.TrackFates())
	tag("interval full final", beam.ParDo(s, formatResult, fates.Records))
	tag("interval fates", beam.ParDo(s, formatFate, fates.Fates))
	tag("interval split", beam.ParDo(s, formatResult, join.Interval[string, string, string](s, left, right, between, join.FullOuter, join.EmitFinal, join.SplitKeys(time.Second)).Records))
	if bounded {
		tag("interval bounded", beam.ParDo(s, formatResult, join.Interval[string, string, string](s, left, right, between, join.FullOuter, join.EmitFinal, join.Bounded()).Records))
		tag("asof bounded", beam.ParDo(s, formatResult, join.AsOf[string, string, string](s, left, right, join.LeftOuter, join.Bounded()).Records))
	}
	flinkrun.WriteLines(s, dir, beam.Flatten(s, outs...))
	return p
}

// routesOracle is what routesPipeline must write for routeScript, from the
// routes' contracts alone.
func routesOracle(bounded bool) []string {
	var out []string
	var lefts, rights []event
	for _, e := range routeScript {
		switch {
		case e.watermark:
		case e.side == join.Left:
			lefts = append(lefts, e)
		default:
			rights = append(rights, e)
		}
	}
	win := func(t int64) string {
		return fmt.Sprintf("[%v,%v)", time.Duration(t/1000)*time.Second, time.Duration(t/1000+1)*time.Second)
	}
	// Window: pairs per key and second; outer values alone in theirs.
	for _, typ := range []join.Type{join.Inner, join.LeftOuter, join.FullOuter} {
		var recs []string
		for _, a := range lefts {
			paired := false
			for _, b := range rights {
				if a.key == b.key && a.time/1000 == b.time/1000 {
					paired = true
					recs = append(recs, fmt.Sprintf("pair %s %s@%d %s@%d %s", a.key, a.val, a.time, b.val, b.time, win(a.time)))
				}
			}
			if !paired && typ != join.Inner {
				recs = append(recs, fmt.Sprintf("unmatched %s %s@%d - %s", a.key, a.val, a.time, win(a.time)))
			}
		}
		for _, b := range rights {
			paired := false
			for _, a := range lefts {
				paired = paired || (a.key == b.key && a.time/1000 == b.time/1000)
			}
			if !paired && typ == join.FullOuter {
				recs = append(recs, fmt.Sprintf("unmatched %s - %s@%d %s", b.key, b.val, b.time, win(b.time)))
			}
		}
		for _, r := range recs {
			out = append(out, fmt.Sprintf("window %v: %s", typ, r), fmt.Sprintf("window %v late-counting: %s", typ, r))
		}
	}
	// CoGroup: every key and second with values.
	groups := map[[2]string][2][]string{}
	for _, e := range append(slices.Clone(lefts), rights...) {
		k := [2]string{e.key, win(e.time)}
		g := groups[k]
		if e.side == join.Left {
			g[0] = append(g[0], e.val)
		} else {
			g[1] = append(g[1], e.val)
		}
		groups[k] = g
	}
	for k, g := range groups {
		slices.Sort(g[0])
		slices.Sort(g[1])
		line := fmt.Sprintf("%s %v %v %s", k[0], g[0], g[1], k[1])
		out = append(out, "cogroup: "+line, "cogroup late-counting: "+line)
	}
	for _, e := range append(slices.Clone(lefts), rights...) {
		out = append(out, fmt.Sprintf("cogroup fates: %v %s %d %v", e.side, e.key, e.time, join.OutcomeGrouped))
		out = append(out, fmt.Sprintf("connect: %s %v %s@%d global", e.key, e.side, e.val, e.time))
	}
	// AsOf: each left with the latest right at or before it.
	for _, typ := range []join.Type{join.Inner, join.LeftOuter} {
		recs, _ := asofOracle(asofSpec{Outer: typ == join.LeftOuter, MaxAge: -1}, routeScript, nil)
		for _, r := range recs {
			out = append(out, fmt.Sprintf("asof %v: %s", typ, r))
			if bounded && typ == join.LeftOuter {
				out = append(out, "asof bounded: "+r)
			}
		}
	}
	// Interval Between(-500ms, 1s), full outer, final.
	var full []string
	matched := map[string]bool{}
	for _, a := range lefts {
		for _, b := range rights {
			if d := b.time - a.time; a.key == b.key && d >= -500 && d <= 1000 {
				full = append(full, fmt.Sprintf("pair %s %s@%d %s@%d t=%d", a.key, a.val, a.time, b.val, b.time, max(a.time, b.time)))
				matched[a.val], matched[b.val] = true, true
			}
		}
	}
	for _, e := range append(slices.Clone(lefts), rights...) {
		outcome := join.OutcomeMatched
		if !matched[e.val] {
			outcome = join.OutcomeUnmatched
			if e.side == join.Left {
				full = append(full, fmt.Sprintf("unmatched %s %s@%d - t=%d", e.key, e.val, e.time, e.time))
			} else {
				full = append(full, fmt.Sprintf("unmatched %s - %s@%d t=%d", e.key, e.val, e.time, e.time))
			}
		}
		out = append(out, fmt.Sprintf("interval fates: %v %s %d %v", e.side, e.key, e.time, outcome))
	}
	for _, r := range full {
		out = append(out, "interval full final: "+r, "interval split: "+r)
		if bounded {
			out = append(out, "interval bounded: "+r)
		}
	}
	slices.Sort(out)
	return out
}

// runRoutes runs routesPipeline on Prism, or on Flink with opts, and
// returns its lines.
func runRoutes(t *testing.T, play func(beam.Scope, []event) (beam.PCollection, beam.PCollection), bounded bool, opts *flinkrun.Options) []string {
	t.Helper()
	dir := t.TempDir()
	p := routesPipeline(play, dir, bounded)
	if opts == nil {
		runOnPrism(t, p, dir)
		return flinkrun.Lines(t, dir)
	}
	return flinkrun.RunLines(t, p, dir, *opts)
}

// TestFlinkRoutes runs every route on Flink, as a stream and read whole,
// with workers in this process and in processes of their own: the records
// must be the oracle's, and Prism's for the same pipeline.
func TestFlinkRoutes(t *testing.T) {
	js := flinkrun.Shared(t)
	envs := flinkEnvironments(t, js)
	for _, in := range flinkInputs {
		t.Run(in.name, func(t *testing.T) {
			bounded := in.name == "bounded"
			want := routesOracle(bounded)
			if diff := cmp.Diff(want, runRoutes(t, in.play, bounded, nil)); diff != "" {
				t.Errorf("on Prism, records differ from the oracle's (-want +got):\n%s", diff)
			}
			for _, env := range []string{"loopback", "process"} {
				opts := envs[env]
				if diff := cmp.Diff(want, runRoutes(t, in.play, bounded, &opts)); diff != "" {
					t.Errorf("on Flink (%s workers), records differ from the oracle's (-want +got):\n%s", env, diff)
				}
			}
		})
	}
}

// TestFlinkUniqueLeft checks UniqueLeft on Flink: with at most one left
// element per key, its records are the join's without the option.
func TestFlinkUniqueLeft(t *testing.T) {
	js := flinkrun.Shared(t)
	script := onTime(
		l(100, "a", "l1"), r(300, "a", "r1"), r(900, "a", "r2"), r(1_900, "a", "r3"),
		l(400, "b", "l2"), r(2_600, "c", "r4"), r(350, "b", "r5"),
	)
	for _, in := range flinkInputs {
		t.Run(in.name, func(t *testing.T) {
			dir := t.TempDir()
			p, s := beam.NewPipelineWithRoot()
			left, right := in.play(s, script)
			opts := []join.Option{join.Between(-100*time.Millisecond, time.Second), join.FullOuter, join.EmitFinal}
			if in.name == "bounded" {
				opts = append(opts, join.Streaming()) // UniqueLeft is the streaming path's
			}
			with := join.Interval[string, string, string](s.Scope("unique"), left, right, append(opts, join.UniqueLeft())...)
			without := join.Interval[string, string, string](s.Scope("plain"), left, right, opts...)
			flinkrun.WriteLines(s, dir, beam.Flatten(s,
				beam.ParDo(s, &tagLineFn{Tag: "unique"}, beam.ParDo(s, formatResult, with.Records)),
				beam.ParDo(s, &tagLineFn{Tag: "plain"}, beam.ParDo(s, formatResult, without.Records))))
			lines := flinkrun.RunLines(t, p, dir, flinkrun.Options{Endpoint: js.Endpoint})
			var unique, plain []string
			for _, line := range lines {
				if r, ok := strings.CutPrefix(line, "unique: "); ok {
					unique = append(unique, r)
				} else {
					plain = append(plain, strings.TrimPrefix(line, "plain: "))
				}
			}
			want := []string{
				"pair a l1@100 r1@300 t=300", "pair a l1@100 r2@900 t=900", "pair b l2@400 r5@350 t=400",
				"unmatched a - r3@1900 t=1900", "unmatched c - r4@2600 t=2600",
			}
			if diff := cmp.Diff(want, plain); diff != "" {
				t.Errorf("without UniqueLeft (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, unique); diff != "" {
				t.Errorf("with UniqueLeft (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFlinkDownstream runs the shapes users build after a join on Flink:
// EmitFinal records counted per minute downstream, on every path, and a
// pair that AllowedLateness let in counted in its closed window.
func TestFlinkDownstream(t *testing.T) {
	js := flinkrun.Shared(t)
	opts := flinkrun.Options{Endpoint: js.Endpoint, Environment: flinkrun.Loopback}
	run := func(t *testing.T, build func(s beam.Scope) beam.PCollection) []string {
		dir := t.TempDir()
		p, s := beam.NewPipelineWithRoot()
		flinkrun.WriteLines(s, dir, build(s))
		return flinkrun.RunLines(t, p, dir, opts)
	}
	script := onTime(
		l(1_000, "a", "x"), l(2_000, "b", "y"), r(3_000, "a", "z"),
		l(50_000, "e", "u"), // expires at 80 s, after its minute would close
		l(70_000, "c", "w"), r(200_000, "d", "v"),
	)
	for _, in := range flinkInputs {
		paths := map[string][]join.Option{"streaming path": nil}
		if in.name == "bounded" {
			paths = map[string][]join.Option{"streaming path": {join.Streaming()}, "bounded path": nil}
		}
		for path, extra := range paths {
			t.Run(in.name+"/"+path+"/final_counted_per_minute", func(t *testing.T) {
				got := run(t, func(s beam.Scope) beam.PCollection {
					left, right := in.play(s, script)
					res := join.Interval[string, string, string](s, left, right, append([]join.Option{join.Between(0, 30*time.Second), join.FullOuter, join.EmitFinal}, extra...)...).Records
					windowed := beam.WindowInto(s, window.NewFixedWindows(time.Minute), beam.ParDo(s, formatResult, res))
					return beam.ParDo(s, formatWindowCount, stats.Count(s, beam.ParDo(s, kindOf, windowed)))
				})
				want := []string{"pair [0s,1m0s) x1", "unmatched [0s,1m0s) x2", "unmatched [1m0s,2m0s) x1", "unmatched [3m0s,4m0s) x1"}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("counts per minute (-want +got):\n%s", diff)
				}
			})
		}
	}
	// A new user's batch join: orders priced at the rate valid when each
	// was placed (AsOf, left outer) and paid within 15 minutes (Interval,
	// left outer, EmitFinal), then counted per hour downstream.
	hours := onTime(
		l(10*60_000, "a", "o1"), r(5*60_000, "a", "rate1"), r(12*60_000, "a", "p1"),
		l(55*60_000, "b", "o2"), r(50*60_000, "b", "rate2"),
		l(70*60_000, "a", "o3"), r(72*60_000, "a", "p3"),
		l(130*60_000, "c", "o4"),
	)
	for _, in := range flinkInputs {
		paths := map[string][]join.Option{"streaming path": nil}
		if in.name == "bounded" {
			paths = map[string][]join.Option{"streaming path": {join.Streaming()}, "bounded path": nil}
		}
		for path, extra := range paths {
			t.Run(in.name+"/"+path+"/counted_per_hour", func(t *testing.T) {
				got := run(t, func(s beam.Scope) beam.PCollection {
					left, right := in.play(s, hours)
					paid := join.Interval[string, string, string](s.Scope("paid"), left, right, append([]join.Option{join.Between(0, 15*time.Minute), join.LeftOuter, join.EmitFinal}, extra...)...).Records
					priced := join.AsOf[string, string, string](s.Scope("priced"), left, right, append([]join.Option{join.LeftOuter}, extra...)...).Records
					hourly := func(name string, col beam.PCollection) beam.PCollection {
						kinds := beam.ParDo(s, &tagLineFn{Tag: name}, beam.ParDo(s, kindOf, beam.ParDo(s, formatResult, col)))
						windowed := beam.WindowInto(s, window.NewFixedWindows(time.Hour), kinds)
						return inGlobal(s, beam.ParDo(s, formatWindowCount, stats.Count(s, windowed)))
					}
					return beam.Flatten(s, hourly("paid", paid), hourly("priced", priced))
				})
				want := []string{
					"paid: pair [0s,1h0m0s) x1", "paid: pair [1h0m0s,2h0m0s) x1",
					"paid: unmatched [0s,1h0m0s) x1", "paid: unmatched [2h0m0s,3h0m0s) x1",
					"priced: pair [0s,1h0m0s) x2", "priced: pair [1h0m0s,2h0m0s) x1",
					"priced: unmatched [2h0m0s,3h0m0s) x1",
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("counts per hour (-want +got):\n%s", diff)
				}
			})
		}
	}
	t.Run("stream/late_allowed_pair_counted", func(t *testing.T) {
		got := run(t, func(s beam.Scope) beam.PCollection {
			left, right := flinkInputs[0].play(s, []event{
				l(50_000, "a", "l1"),
				wm(70_000),           // the window [0s,1m) is closed
				r(52_000, "a", "r1"), // 18 s behind the watermark: within the join's 30 s
				l(71_000, "a", "l2"),
				r(73_000, "a", "r2"),
			})
			fixed := window.NewFixedWindows(time.Minute)
			left, right = beam.WindowInto(s, fixed, left), beam.WindowInto(s, fixed, right)
			joined := join.Interval[string, string, string](s, left, right,
				join.Between(0, 5*time.Second), join.AllowedLateness(30*time.Second), join.CleanupEvery(time.Millisecond))
			return inGlobal(s, beam.ParDo(s, formatWindowCount, stats.Count(s, beam.ParDo(s, formatResult, joined.Records))))
		})
		want := []string{
			"pair a l1@50000 r1@52000 t=52000 [0s,1m0s) x1",
			"pair a l2@71000 r2@73000 t=73000 [1m0s,2m0s) x1",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pairs counted per window (-want +got):\n%s", diff)
		}
	})
}
