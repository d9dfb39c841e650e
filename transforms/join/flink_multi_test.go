package join_test

// This file holds the multi-way join's test on Flink (make flink-test):
// the three-way join of multi_test.go as a stream (Flink's streaming
// mode, fed by timedstream) in every emission mode, and read whole
// (Flink's batch mode) on both paths, with its rows counted per window
// downstream.

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/beamjoin/beamjoin/internal/flinkrun"
	"github.com/beamjoin/beamjoin/internal/timedstream"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

// multiTimed plays multiEvents as multiStream does, through timedstream:
// each event, then the watermark at the earliest time still to come. The
// late click is left out: Flink's portable runner (Beam 2.62) plays a Go
// splittable DoFn's steps when its input ends, so which elements are
// behind the join's watermark is the runner's choice, not the script's.
func multiTimed(s beam.Scope) []beam.PCollection {
	var sc timedstream.Script
	for i, e := range multiEvents {
		low := e.ms
		for _, x := range multiEvents[i+1:] {
			low = min(low, x.ms)
		}
		sc = sc.Add(timedstream.Element{Time: e.ms, Value: e.line()}).Advance(low)
	}
	return beam.ParDoN(s, splitMulti, timedstream.Create(s, sc))
}

// TestFlinkMulti runs the three-way join of impressions, clicks and
// conversions on Flink, as a stream in every emission mode and read whole
// on the bounded path and the streaming path, with workers in this
// process: the rows, fates and late elements must be TestMulti's, and the
// rows counted per 10 s window downstream, where they are final, must all
// be there.
func TestFlinkMulti(t *testing.T) {
	js := flinkrun.Shared(t)
	retractRows := append([]string{"retract u1 imp1@0 c1@5000 - t=5000", "retract u1 imp1@0 c2@10000 - t=10000"}, immediateRows...)
	fates := withoutLate(allFates)
	for _, tc := range []struct {
		name    string
		bounded bool
		opts    []join.Option
		rows    []string
		counts  []string // nil: not counted (rows that a later one completes)
	}{
		{"stream/final", false, []join.Option{join.EmitFinal}, finalRows, finalCounts},
		{"stream/immediate", false, []join.Option{join.EmitImmediate}, immediateRows, nil},
		{"stream/retract", false, []join.Option{join.EmitRetract}, retractRows, nil},
		{"bounded/bounded_path", true, []join.Option{join.EmitImmediate}, finalRows, finalCounts},
		{"bounded/streaming_path_final", true, []join.Option{join.EmitFinal, join.Streaming()}, finalRows, finalCounts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p, s := beam.NewPipelineWithRoot()
			var in []beam.PCollection
			if tc.bounded {
				in = multiBounded(s)
			} else {
				in = multiTimed(s)
			}
			out := join.Multi[string, string](s, in[0], []join.MultiInput{
				join.Required(in[1], join.Between(0, 10*time.Second)),
				join.Optional(in[2], join.Between(0, 30*time.Second)),
			}, append([]join.Option{join.TrackFates()}, tc.opts...)...)
			windowed := beam.WindowInto(s, window.NewFixedWindows(10*time.Second), out.Records)
			counts := inGlobal(s, beam.ParDo(s, formatRowCount, stats.Count(s, beam.ParDo(s, windowOfRow, windowed))))
			flinkrun.WriteLines(s, dir, beam.Flatten(s,
				beam.ParDo(s, &tagLineFn{Tag: "row"}, beam.ParDo(s, formatMultiRow, out.Records)),
				beam.ParDo(s, &tagLineFn{Tag: "late"}, beam.ParDo(s, formatMultiLate, out.Late)),
				beam.ParDo(s, &tagLineFn{Tag: "fate"}, beam.ParDo(s, formatMultiFate, out.Fates)),
				beam.ParDo(s, &tagLineFn{Tag: "count"}, counts)))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			if _, err := flinkrun.Execute(ctx, p, flinkrun.Options{Endpoint: js.Endpoint, Environment: flinkrun.Loopback}); err != nil {
				t.Fatalf("on Flink: %v", err)
			}
			lines, err := flinkrun.ReadLines(dir)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for _, line := range lines {
				tag, rest, _ := strings.Cut(line, ": ")
				got[tag] = append(got[tag], rest)
			}
			want := map[string][]string{"row": sorted(tc.rows), "fate": sorted(fates)}
			if tc.counts != nil {
				want["count"] = tc.counts
			} else {
				delete(got, "count")
			}
			for tag := range got {
				slices.Sort(got[tag])
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("on Flink (-want +got):\n%s", d)
			}
		})
	}
}
