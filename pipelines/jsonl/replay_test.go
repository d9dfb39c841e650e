package jsonl_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.DoFn3x0[beam.EventTime, string, jsonl.Record](&traceRecordFn{})
	register.DoFn1x0[jsonl.DeadLetter](&traceDeadLetterFn{})
}

// trace is the order in which a replay's lines reached the DoFns fused
// with the reader, in this process (Prism runs in process), with "|" where
// a bundle ended: a reader's bundle ends where it reports the watermark.
var trace struct {
	sync.Mutex
	lines []string
}

func traced(s string) {
	trace.Lock()
	trace.lines = append(trace.lines, s)
	trace.Unlock()
}

type traceRecordFn struct {
	Side     string
	Boundary bool // marks the end of each bundle
}

func (f *traceRecordFn) ProcessElement(et beam.EventTime, _ string, r jsonl.Record) {
	traced(fmt.Sprintf("%s %s:%d@%d", f.Side, filepath.Base(r.File), r.Line, et.Milliseconds()/1000))
}

func (f *traceRecordFn) FinishBundle() {
	if f.Boundary {
		traced("|")
	}
}

type traceDeadLetterFn struct{ Side string }

func (f *traceDeadLetterFn) ProcessElement(d jsonl.DeadLetter) {
	traced(fmt.Sprintf("%s %s:%d dead", f.Side, filepath.Base(d.File), d.Line))
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A replay of two sources is one stream: each file in line order, the
// files merged by the time of their next line (a dead letter at once, ties
// to the left), and a watermark report (a bundle's end) once the largest
// time read has risen by the step. It is the same in every run.
func TestReplayOrder(t *testing.T) {
	dir := t.TempDir()
	line := func(id string, sec int) string { return fmt.Sprintf(`{"id":%q,"t":%d}`, id, sec*1000) }
	writeFiles(t, dir, map[string]string{
		"a.jsonl": strings.Join([]string{line("k1", 0), line("k2", 60), line("k3", 30), line("k4", 120)}, "\n"),
		"b.jsonl": strings.Join([]string{line("k5", 10), "not json", line("k6", 200)}, "\n") + "\n",
		"c.jsonl": strings.Join([]string{line("k1", 0), line("k2", 50), line("k7", 5), line("k8", 130)}, "\n") + "\n",
	})
	want := []string{
		"left a.jsonl:1@0", "|", // the first record is reported at once
		"right c.jsonl:1@0", "left b.jsonl:1@10", "left b.jsonl:2 dead", "right c.jsonl:2@50", "|",
		"right c.jsonl:3@5", "left a.jsonl:2@60", "left a.jsonl:3@30", "left a.jsonl:4@120", "|",
		"right c.jsonl:4@130", "left b.jsonl:3@200", "|",
	}
	for run := 1; run <= 3; run++ {
		p, s := beam.NewPipelineWithRoot()
		src := func(name, pattern string) jsonl.Source {
			return jsonl.Source{Name: name, Pattern: filepath.Join(dir, pattern), Fields: jsonl.Fields{Key: "id", Time: "t"},
				Replay: true, WatermarkLag: time.Second, WatermarkStep: 50 * time.Second}
		}
		records, dead := jsonl.ReadAll(s, src("left", "[ab].jsonl"), src("right", "c.jsonl"))
		beam.ParDo0(s, &traceRecordFn{Side: "left", Boundary: true}, records[0])
		beam.ParDo0(s, &traceRecordFn{Side: "right"}, records[1])
		beam.ParDo0(s, &traceDeadLetterFn{Side: "left"}, dead[0])
		beam.ParDo0(s, &traceDeadLetterFn{Side: "right"}, dead[1])
		trace.lines = nil
		if err := ptest.Run(p); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, trace.lines); diff != "" {
			t.Errorf("run %d: replay (-want +got):\n%s", run, diff)
		}
	}
}

func TestReadAllErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"x.jsonl": "{}\n"})
	src := func(name string, replay bool, lag, step time.Duration) jsonl.Source {
		return jsonl.Source{Name: name, Pattern: filepath.Join(dir, "x.jsonl"), Fields: jsonl.Fields{Key: "k", Time: "t"},
			Replay: replay, WatermarkLag: lag, WatermarkStep: step}
	}
	for _, tc := range []struct {
		name string
		srcs []jsonl.Source
		err  string
	}{
		{"none", nil, "beamjoin: jsonl.ReadAll: no source"},
		{"same_name", []jsonl.Source{src("left", false, 0, 0), src("left", false, 0, 0)},
			`beamjoin: two sources are named "left": their counters would mix`},
		{"replay_and_batch", []jsonl.Source{src("left", true, 0, 0), src("right", false, 0, 0)},
			"beamjoin: left and right: read together, both are replayed or neither is"},
		{"two_lags", []jsonl.Source{src("left", true, time.Minute, 0), src("right", true, time.Second, 0)},
			"beamjoin: left and right: replayed together, they have one watermark, so one lag (1m0s and 1s)"},
		{"two_steps", []jsonl.Source{src("left", true, 0, time.Minute), src("right", true, 0, time.Second)},
			"beamjoin: left and right: replayed together, they have one watermark, so one step (1m0s and 1s)"},
		{"negative_step", []jsonl.Source{src("left", true, 0, -time.Second)},
			"beamjoin: left: watermark step -1s must be a non-negative whole number of milliseconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			_, _, err := jsonl.TryReadAll(s, tc.srcs...)
			if err == nil || err.Error() != tc.err {
				t.Fatalf("TryReadAll error = %v, want %q", err, tc.err)
			}
		})
	}
}
