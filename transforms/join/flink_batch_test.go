package join_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/internal/flinkrun"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

// TestFlinkBatchTakesTheBoundedPath: on Flink's batch mode a join of
// bounded input without Bounded takes the bounded path, so that
// MaxBufferedPerKey evicts as on a stream: its records equal those of the
// same elements played on Prism as a stream in event-time order, the
// watermark following them (the stream semantics the cap is defined by).
// The same join under Streaming, on Flink's batch mode, which delivers
// all of a key's elements before any of its cleanup timers, buffers the
// whole key and evicts more: it must give fewer pairs, or the test shows
// nothing about the choice.
func TestFlinkBatchTakesTheBoundedPath(t *testing.T) {
	js := flinkrun.Shared(t)
	// Two keys, 200 elements each, 5 ms apart on each key, sides at
	// random: Between(0, 1s) gives each left element about a hundred
	// partners on a stream, where MaxBufferedPerKey(60) keeps the last
	// 300 ms; read whole, a key buffers all 200 before its first cleanup.
	rng := rand.New(rand.NewPCG(47, 3))
	var script []event
	for i := range 400 {
		key, at := fmt.Sprint("k", i%2), int64(1_000_000+(i/2)*5)
		if rng.IntN(2) == 0 {
			script = append(script, l(at, key, fmt.Sprint("l", i)))
		} else {
			script = append(script, r(at, key, fmt.Sprint("r", i)))
		}
	}
	opts := []join.Option{join.Between(0, time.Second), join.LeftOuter, join.EmitFinal, join.MaxBufferedPerKey(60)}

	prismDir := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, onTime(script...))
	flinkrun.WriteLines(s, prismDir, beam.ParDo(s, formatResult, join.Interval[string, string, string](s, left, right, opts...).Records))
	runOnPrism(t, p, prismDir)
	want := flinkrun.Lines(t, prismDir)

	dir := t.TempDir()
	p, s = beam.NewPipelineWithRoot()
	left, right = flinkInputs[1].play(s, script) // bounded: Flink's batch mode
	chosen := join.Interval[string, string, string](s.Scope("chosen"), left, right, opts...)
	streaming := join.Interval[string, string, string](s.Scope("streaming"), left, right, append(opts, join.Streaming())...)
	flinkrun.WriteLines(s, dir, beam.Flatten(s,
		beam.ParDo(s, &tagLineFn{Tag: "chosen"}, beam.ParDo(s, formatResult, chosen.Records)),
		beam.ParDo(s, &tagLineFn{Tag: "streaming"}, beam.ParDo(s, formatResult, streaming.Records))))
	lines := flinkrun.RunLines(t, p, dir, flinkrun.Options{Endpoint: js.Endpoint})
	got := map[string][]string{}
	for _, line := range lines {
		tag, rest, _ := strings.Cut(line, ": ")
		got[tag] = append(got[tag], rest)
	}
	slices.Sort(want)
	slices.Sort(got["chosen"])
	if diff := cmp.Diff(want, got["chosen"]); diff != "" {
		t.Errorf("bounded input, default path, on Flink's batch mode (-stream on Prism +Flink):\n%s", diff)
	}
	pairs := func(lines []string) (n int) {
		for _, l := range lines {
			if strings.HasPrefix(l, "pair ") {
				n++
			}
		}
		return n
	}
	t.Logf("pairs: stream on Prism %d, default path on Flink's batch mode %d, Streaming on Flink's batch mode %d", pairs(want), pairs(got["chosen"]), pairs(got["streaming"]))
	if pairs(got["streaming"]) >= pairs(want) {
		t.Errorf("Streaming on Flink's batch mode gave %d pairs, the stream %d: the cap evicted no more in batch mode, so this test shows nothing about the choice", pairs(got["streaming"]), pairs(want))
	}
}
