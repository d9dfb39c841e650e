package jsonl_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.DoFn3x0[beam.EventTime, string, jsonl.Record](&traceMillisFn{})
}

// A replay that judges lateness sends a record more than LateBehind behind
// the watermark it has reached (the largest time read before the line
// less the lag) to the late records, on any key, and every other record to
// the records; a record exactly LateBehind behind is not late. Each source
// has its own LateBehind; the watermark is the replay's, one for both. The
// same lines are late in every run.
func TestReplayJudgesLate(t *testing.T) {
	dir := t.TempDir()
	line := func(id string, ms int) string { return fmt.Sprintf(`{"id":%q,"t":%d}`, id, ms) }
	writeFiles(t, dir, map[string]string{
		// Read in this order: a1 (max 100 s), b1 (max 238 s), b2 (104 s,
		// watermark 178 s: 74 s behind), b's dead letter, a2 (max 300 s,
		// watermark 240 s), a3 (40 s behind), a4 (5 s behind), a5 (5.001 s
		// behind), b5 (max 301 s, watermark 241 s), b3 (10 s behind), b4
		// (10.001 s behind).
		"a.jsonl": strings.Join([]string{line("a1", 100_000), line("a2", 300_000), line("a3", 200_000), line("a4", 235_000), line("a5", 234_999)}, "\n") + "\n",
		"b.jsonl": strings.Join([]string{line("b1", 238_000), line("b2", 104_000), "not json", line("b5", 301_000), line("b3", 231_000), line("b4", 230_999)}, "\n") + "\n",
	})
	want := []string{
		"late left a.jsonl:3@200000", "late left a.jsonl:5@234999", "late right b.jsonl:2@104000", "late right b.jsonl:6@230999",
		"left a.jsonl:1@100000", "left a.jsonl:2@300000", "left a.jsonl:4@235000",
		"right b.jsonl:1@238000", "right b.jsonl:3 dead", "right b.jsonl:4@301000", "right b.jsonl:5@231000",
	}
	for run := 1; run <= 2; run++ {
		p, s := beam.NewPipelineWithRoot()
		src := func(name, file string, behind time.Duration) jsonl.Source {
			return jsonl.Source{Name: name, Pattern: filepath.Join(dir, file), Fields: jsonl.Fields{Key: "id", Time: "t"},
				Replay: true, WatermarkLag: time.Minute, JudgeLate: true, LateBehind: behind}
		}
		records, late, dead := jsonl.ReadAllWithLate(s, src("left", "a.jsonl", 5*time.Second), src("right", "b.jsonl", 10*time.Second))
		beam.ParDo0(s, &traceMillisFn{Side: "left"}, records[0])
		beam.ParDo0(s, &traceMillisFn{Side: "right"}, records[1])
		beam.ParDo0(s, &traceMillisFn{Side: "late left"}, late[0])
		beam.ParDo0(s, &traceMillisFn{Side: "late right"}, late[1])
		beam.ParDo0(s, &traceDeadLetterFn{Side: "left"}, dead[0])
		beam.ParDo0(s, &traceDeadLetterFn{Side: "right"}, dead[1])
		trace.lines = nil
		if err := ptest.Run(p); err != nil {
			t.Fatal(err)
		}
		got := append([]string(nil), trace.lines...)
		sort.Strings(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("run %d: records and late records (-want +got):\n%s", run, diff)
		}
	}
}

// With MaxSkew, a line whose time is far ahead of the replay (here in
// microseconds) is a record, but moves nothing: it is replayed at once
// rather than when the other file reaches its time, and the lines after
// it in its file are not judged late. A replay's sources share the bound.
func TestReplayOutlierMovesNothing(t *testing.T) {
	dir := t.TempDir()
	line := func(id string, ms int64) string { return fmt.Sprintf(`{"id":%q,"t":%d}`, id, ms) }
	writeFiles(t, dir, map[string]string{
		"a.jsonl": strings.Join([]string{line("a1", 100_000), line("a2", 100_000_000_000), line("a3", 110_000), line("a4", 120_000)}, "\n") + "\n",
		"b.jsonl": strings.Join([]string{line("b1", 101_000), line("b2", 111_000), line("b3", 121_000)}, "\n") + "\n",
	})
	p, s := beam.NewPipelineWithRoot()
	src := func(name, file string) jsonl.Source {
		return jsonl.Source{Name: name, Pattern: filepath.Join(dir, file), Fields: jsonl.Fields{Key: "id", Time: "t"},
			Replay: true, JudgeLate: true, MaxSkew: time.Minute}
	}
	records, late, _ := jsonl.ReadAllWithLate(s, src("left", "a.jsonl"), src("right", "b.jsonl"))
	beam.ParDo0(s, &traceMillisFn{Side: "left"}, records[0])
	beam.ParDo0(s, &traceMillisFn{Side: "right"}, records[1])
	beam.ParDo0(s, &traceMillisFn{Side: "late left"}, late[0])
	beam.ParDo0(s, &traceMillisFn{Side: "late right"}, late[1])
	trace.lines = nil
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	got := append([]string(nil), trace.lines...)
	sort.Strings(got)
	want := []string{
		"left a.jsonl:1@100000", "left a.jsonl:2@100000000000", "left a.jsonl:3@110000", "left a.jsonl:4@120000",
		"right b.jsonl:1@101000", "right b.jsonl:2@111000", "right b.jsonl:3@121000",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records and late records (-want +got):\n%s", diff)
	}

	_, s = beam.NewPipelineWithRoot()
	a, b := src("left", "a.jsonl"), src("right", "b.jsonl")
	b.MaxSkew = time.Hour
	if _, _, _, err := jsonl.TryReadAllWithLate(s, a, b); err == nil || err.Error() != "beamjoin: left and right: replayed together, they have one watermark, so one skew bound (1m0s and 1h0m0s)" {
		t.Errorf("sources with two skew bounds: error = %v", err)
	}
	a.Replay, a.JudgeLate = false, false
	if _, _, err := jsonl.TryReadAll(s, a); err == nil || err.Error() != "beamjoin: left: skew bound 1m0s is set, but only a replay has a watermark for it to guard: a source read whole moves event time only at its end" {
		t.Errorf("a skew bound without a replay: error = %v", err)
	}
}

// Only ReadAllWithLate reads a source that judges lateness (its late
// records would be lost otherwise), only a replay judges it, and
// LateBehind is whole non-negative milliseconds, set only with JudgeLate.
// A source read whole by ReadAllWithLate has no late records.
func TestReadAllLateErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"x.jsonl": "{}\n"})
	src := func(replay, judge bool, behind time.Duration) jsonl.Source {
		return jsonl.Source{Name: "left", Pattern: filepath.Join(dir, "x.jsonl"), Fields: jsonl.Fields{Key: "k", Time: "t"},
			Replay: replay, JudgeLate: judge, LateBehind: behind}
	}
	for _, tc := range []struct {
		name     string
		src      jsonl.Source
		withLate bool
		err      string
	}{
		{"ReadAll", src(true, true, 0), false,
			"beamjoin: left judges lateness: read it with jsonl.ReadAllWithLate, which returns its late records"},
		{"batch", src(false, true, 0), true,
			"beamjoin: left: only a replay judges lateness: a source read whole has no watermark to judge it by"},
		{"behind_without_judge", src(true, false, time.Second), true,
			"beamjoin: left: LateBehind 1s is set, but JudgeLate is not"},
		{"negative", src(true, true, -time.Second), true,
			"beamjoin: left: LateBehind -1s must be a non-negative whole number of milliseconds"},
		{"microseconds", src(true, true, time.Microsecond), true,
			"beamjoin: left: LateBehind 1µs must be a non-negative whole number of milliseconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			var err error
			if tc.withLate {
				_, _, _, err = jsonl.TryReadAllWithLate(s, tc.src)
			} else {
				_, _, err = jsonl.TryReadAll(s, tc.src)
			}
			if err == nil || err.Error() != tc.err {
				t.Fatalf("error = %v, want %q", err, tc.err)
			}
		})
	}
	t.Run("batch_has_none", func(t *testing.T) {
		p, s := beam.NewPipelineWithRoot()
		writeFiles(t, dir, map[string]string{"y.jsonl": `{"k":"a","t":5}` + "\n" + `{"k":"b","t":1}` + "\n"})
		b := src(false, false, 0)
		b.Pattern = filepath.Join(dir, "y.jsonl")
		records, late, _ := jsonl.ReadAllWithLate(s, b)
		beam.ParDo0(s, &traceMillisFn{Side: "left"}, records[0])
		beam.ParDo0(s, &traceMillisFn{Side: "late"}, late[0])
		trace.lines = nil
		if err := ptest.Run(p); err != nil {
			t.Fatal(err)
		}
		got := append([]string(nil), trace.lines...)
		sort.Strings(got)
		if diff := cmp.Diff([]string{"left y.jsonl:1@5", "left y.jsonl:2@1"}, got); diff != "" {
			t.Errorf("records (-want +got):\n%s", diff)
		}
	})
}

// traceMillisFn traces a record as traceRecordFn does, with its event time
// in milliseconds.
type traceMillisFn struct{ Side string }

func (f *traceMillisFn) ProcessElement(et beam.EventTime, _ string, r jsonl.Record) {
	traced(fmt.Sprintf("%s %s:%d@%d", f.Side, filepath.Base(r.File), r.Line, et.Milliseconds()))
}
