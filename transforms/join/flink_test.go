package join_test

// This file holds the interval join's tests on a real Flink (make
// flink-test): the differential test's generated cases, played as streams
// by a splittable DoFn (Flink runs no TestStream for Go) and checked by the
// same oracle, with workers in this process (LOOPBACK) and in processes of
// their own (PROCESS), at parallelism 2.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/internal/flinkrun"
	"github.com/beamjoin/beamjoin/internal/prismrun"
	"github.com/beamjoin/beamjoin/internal/timedstream"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.DoFn3x0[string, func(string, string), func(string, string)](&splitLineFn{})
	register.DoFn1x1[join.Result[string, string, string], string](&resultLineFn{})
	register.DoFn1x1[join.LateElement[string, string, string], string](&lateLineFn{})
}

// flinkScript is a case's stream as a timedstream script: each element
// with the watermark step that follows it in one step (one bundle of the
// reader), each element as "side key value".
func flinkScript(c dCase) timedstream.Script {
	var sc timedstream.Script
	for _, st := range c.events() {
		if st.Elem == nil {
			if n := len(sc); n > 0 && len(sc[n-1].Elements) > 0 && sc[n-1].Watermark < st.Watermark {
				sc[n-1].Watermark = st.Watermark // the element's own watermark step
				continue
			}
			sc = sc.Advance(st.Watermark)
			continue
		}
		e := st.Elem
		sc = sc.Add(timedstream.Element{Time: e.Time, Value: fmt.Sprintf("%d %s %s", e.Side, e.Key, e.Val)})
	}
	return sc
}

// splitLineFn splits "side key value" lines into the keyed inputs.
type splitLineFn struct{}

func (splitLineFn) ProcessElement(line string, left, right func(string, string)) {
	f := strings.SplitN(line, " ", 3)
	if f[0] == fmt.Sprint(int(oLeft)) {
		left(f[1], f[2])
	} else {
		right(f[1], f[2])
	}
}

// resultLineFn and lateLineFn write a join's outputs as "tag R json" and
// "tag L json" lines, for flinkrun.WriteLines.
type resultLineFn struct{ Tag string }

func (f *resultLineFn) ProcessElement(r join.Result[string, string, string]) string {
	b, _ := json.Marshal(r)
	return f.Tag + " R " + string(b)
}

type lateLineFn struct{ Tag string }

func (f *lateLineFn) ProcessElement(e join.LateElement[string, string, string]) string {
	b, _ := json.Marshal(e)
	return f.Tag + " L " + string(b)
}

// readGot parses the lines of resultLineFn and lateLineFn by tag.
func readGot(t *testing.T, lines []string) map[string]*dGot {
	t.Helper()
	got := map[string]*dGot{}
	for _, line := range lines {
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			t.Fatalf("bad output line %q", line)
		}
		g := got[f[0]]
		if g == nil {
			g = &dGot{}
			got[f[0]] = g
		}
		switch f[1] {
		case "R":
			var r join.Result[string, string, string]
			if err := json.Unmarshal([]byte(f[2]), &r); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			g.Results = append(g.Results, r)
		case "L":
			var e join.LateElement[string, string, string]
			if err := json.Unmarshal([]byte(f[2]), &e); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			g.Late = append(g.Late, e)
		}
	}
	return got
}

// runOnPrism runs p on Prism, whose lines go to dir: when prismrun runs
// the pipeline again after one of Prism's known bugs, the failed
// attempt's lines are removed first.
func runOnPrism(t *testing.T, p *beam.Pipeline, dir string) {
	t.Helper()
	defer prismrun.OnRetry(func() {
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
	})()
	if err := ptest.Run(p); err != nil {
		t.Fatalf("on Prism: %v", err)
	}
}

// flinkEnvironments are the two ways the Flink tests run their workers.
func flinkEnvironments(t *testing.T, js *flinkrun.JobServer) map[string]flinkrun.Options {
	t.Helper()
	dir := t.TempDir()
	boot, err := flinkrun.BuildBoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	workers := filepath.Join(dir, "workers")
	t.Cleanup(func() {
		flinkrun.StopWorkers(workers)
		js.RemoveArtifacts()
	})
	return map[string]flinkrun.Options{
		"loopback": {Endpoint: js.Endpoint, Environment: flinkrun.Loopback},
		"process":  {Endpoint: js.Endpoint, Environment: flinkrun.Process, Boot: boot, WorkerDir: workers},
	}
}

// onTimeCase rewrites a generated case so that no element can be late,
// whatever the order in which a runner fires timers among elements: the
// elements in the case's order, each followed by a watermark step to the
// highest watermark that leaves every later element on time (the least of
// their lateAfter). Cleanup then runs as early as the join may, between
// elements. Without a size cap (MaxBufferedPerKey), whose evictions depend
// on the order, the pairs, EmitFinal's records and EmitRetract's net
// result are order-free and exact (classOnTime); a runner that keeps a
// key's elements in the order of a single reader, as Prism and Flink do,
// also gives EmitImmediate's and EmitRetract's changelogs of that order.
func onTimeCase(c dCase) dCase {
	c.Spec.MaxBuffered = 0
	var elems []oElem
	for _, st := range c.Script {
		if st.Elem != nil {
			elems = append(elems, *st.Elem)
		}
	}
	suffixMin := make([]int64, len(elems)+1)
	suffixMin[len(elems)] = int64(1 << 62)
	for i := len(elems) - 1; i >= 0; i-- {
		suffixMin[i] = min(suffixMin[i+1], c.Spec.lateAfter(elems[i].Side, elems[i].Time))
	}
	var script []oStep
	w := noWatermark
	for i := range elems {
		script = append(script, oStep{Elem: &elems[i]})
		if next := suffixMin[i+1]; next < 1<<62 && next > w {
			w = next
			script = append(script, oStep{Watermark: w})
		}
	}
	c.Script, c.Unstepped, c.OnTime, c.BucketsReordered = script, true, true, true
	return c
}

// everyTypeAndEmit returns on-time cases of the differential run's seeds
// until every join type meets every emission mode twice.
func everyTypeAndEmit() []dCase {
	seen := map[[2]uint8]int{}
	var cases []dCase
	for i := 0; len(seen) < 12 || len(cases) < 24; i++ {
		c := onTimeCase(genCase(caseSeed(defaultSeed, i)))
		k := [2]uint8{uint8(c.Spec.Type), uint8(c.Spec.Emit)}
		if seen[k] >= 2 {
			continue
		}
		seen[k]++
		cases = append(cases, c)
	}
	return cases
}

// intervalCasesPipeline builds one pipeline of the cases, each with a
// source of its own (its watermark its own) and a join in each layout,
// writing every join's records and late elements to dir. A bounded
// pipeline reads each case's elements whole (beam.Create): Flink runs it
// in batch mode, the join's streaming path on a batch runner.
func intervalCasesPipeline(cases []dCase, dir string, bounded bool) *beam.Pipeline {
	p, s := beam.NewPipelineWithRoot()
	for i, c := range cases {
		cs := s.Scope(fmt.Sprintf("case%d", i))
		var lines beam.PCollection
		if bounded {
			var timed []string
			for _, st := range c.Script {
				if e := st.Elem; e != nil {
					timed = append(timed, fmt.Sprintf("%d %d %s %s", e.Time, e.Side, e.Key, e.Val))
				}
			}
			lines = beam.ParDo(cs, timestampedLine, beam.CreateList(cs, timed))
		} else {
			lines = timedstream.Create(cs, flinkScript(c))
		}
		left, right := beam.ParDo2(cs, &splitLineFn{}, lines)
		for _, layout := range layouts {
			tag := fmt.Sprintf("%d/%s", i, layout)
			opts := joinOptions(c.Spec, layout)
			if bounded {
				opts = append(opts, join.Streaming()) // the streaming path on a batch runner
			}
			j := join.Interval[string, string, string](cs.Scope(layout), left, right, opts...)
			flinkrun.WriteLines(cs, dir, beam.Flatten(cs,
				beam.ParDo(cs, &resultLineFn{Tag: tag}, j.Records),
				beam.ParDo(cs, &lateLineFn{Tag: tag}, j.Late)))
		}
	}
	return p
}

// checkCases checks the lines of intervalCasesPipeline against the oracle.
func checkCases(t *testing.T, cases []dCase, lines []string) {
	t.Helper()
	got := readGot(t, lines)
	st := &dStats{}
	for i, c := range cases {
		for _, layout := range layouts {
			g := got[fmt.Sprintf("%d/%s", i, layout)]
			if g == nil {
				g = &dGot{}
			}
			problems, _ := checkCase(withSpec(c, specIn(c.Spec, layout)), *g, st)
			if len(problems) > 0 {
				t.Errorf("%s layout of %v\n  %s", layout, c, strings.Join(problems, "\n  "))
			}
		}
	}
	t.Logf("checked: %v", st)
}

// orderFree returns the lines of intervalCasesPipeline less what depends
// on the order in which the join received its two inputs: EmitImmediate's
// unmatched records, and EmitRetract's unmatched records that a
// retraction cancels, with the retraction. Prism and Flink each keep one
// input's elements in order, but not the two inputs' against each other
// (Flink unions its inputs' channels as their elements come).
func orderFree(t *testing.T, cases []dCase, lines []string) []string {
	t.Helper()
	var out []string
	retracted := map[string]int{}
	for _, line := range lines {
		f := strings.SplitN(line, " ", 3)
		var r struct{ Kind join.Kind }
		json.Unmarshal([]byte(f[2]), &r)
		if f[1] != "R" || r.Kind != join.KindRetract {
			continue
		}
		retracted[strings.Replace(line, `"Kind":2`, `"Kind":1`, 1)]++
	}
	for _, line := range lines {
		f := strings.SplitN(line, " ", 3)
		var i int
		fmt.Sscanf(f[0], "%d/", &i)
		var r struct{ Kind join.Kind }
		json.Unmarshal([]byte(f[2]), &r)
		if f[1] == "R" && r.Kind != join.KindPair {
			switch oEmit(cases[i].Spec.Emit) {
			case oImmediate:
				continue
			case oRetracting:
				if r.Kind == join.KindRetract {
					continue
				}
				if retracted[line] > 0 {
					retracted[line]--
					continue
				}
			}
		}
		out = append(out, line)
	}
	return out
}

// TestFlinkInterval runs the interval join on Flink, in every join type
// and emission mode and both layouts: in streaming mode, fed by a source
// with a watermark, with workers in this process and in processes of
// their own; and in batch mode, on the same elements read whole. The
// records must pass the oracle's checks (every pair, EmitFinal's records
// and EmitRetract's net result exactly; changelogs those of some order)
// and equal those of the same pipeline on Prism, less the records that
// depend on the order of the two inputs (orderFree).
func TestFlinkInterval(t *testing.T) {
	js := flinkrun.Shared(t)
	cases := everyTypeAndEmit()
	envs := flinkEnvironments(t, js)
	for _, mode := range []string{"stream", "batch"} {
		t.Run(mode, func(t *testing.T) {
			bounded := mode == "batch"
			prismDir := t.TempDir()
			runOnPrism(t, intervalCasesPipeline(cases, prismDir, bounded), prismDir)
			want := flinkrun.Lines(t, prismDir)
			checkCases(t, cases, want)
			names := []string{"loopback", "process"}
			if bounded {
				names = names[:1]
			}
			for _, name := range names {
				t.Run(name, func(t *testing.T) {
					dir := t.TempDir()
					got := flinkrun.RunLines(t, intervalCasesPipeline(cases, dir, bounded), dir, envs[name])
					if diff := cmp.Diff(orderFree(t, cases, want), orderFree(t, cases, got)); diff != "" {
						t.Errorf("records on Flink differ from Prism's (-Prism +Flink):\n%s", diff)
					}
					checkCases(t, cases, got)
				})
			}
		})
	}
}
