package join_test

// This file tests hot-key detection (HotKeyThreshold) on Prism: a key that
// goes hot, cools and comes back as an ordinary key, among ordinary keys,
// with a windowed aggregation downstream. The runner-model harness
// (model_harness_test.go) checks the cut-overs under every schedule it
// draws; here a real runner runs them.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// hotScript is a stream of three keys, in time order from 1,700,000,000 s:
// key "hot" has a burst of 120 elements 20 ms apart (left, then right),
// which makes it buffer far more than 4 elements, then, after a pause long
// enough for it to be an ordinary key again, 12 elements 300 ms apart;
// keys "o1" and "o2" have an element every 700 ms and 1.1 s throughout.
func hotScript() []event {
	const base = int64(1_700_000_000_000)
	var es []event
	add := func(t int64, key string, i int) {
		if i%2 == 0 {
			es = append(es, l(t, key, fmt.Sprintf("%s-l%d", key, i)))
		} else {
			es = append(es, r(t, key, fmt.Sprintf("%s-r%d", key, i)))
		}
	}
	for i := range 120 {
		add(base+int64(i)*20+1, "hot", i)
	}
	for i := range 12 {
		add(base+12_000+int64(i)*300+1, "hot", 200+i)
	}
	for i := range 23 {
		add(base+int64(i)*700+3, "o1", i)
	}
	for i := range 15 {
		add(base+int64(i)*1100+7, "o2", i)
	}
	slices.SortFunc(es, func(a, b event) int { return int(a.time - b.time) })
	return es
}

// TestIntervalHotKeyCutOver runs hotScript on time through the streaming
// path with hot-key detection at 4 buffered elements and a progress
// horizon of a second, so that key "hot" goes hot in its burst and is an
// ordinary key again before its second, sparse part, and without
// detection, in every emission mode: the records of both must be the
// nested loops' exactly, and their counts per ten-second window
// downstream must all arrive (none dropped as late by the windowing).
func TestIntervalHotKeyCutOver(t *testing.T) {
	script := hotScript()
	perKey := map[string][]join.SweepElement{}
	for _, e := range script {
		perKey[e.key] = append(perKey[e.key], join.SweepElement{Side: e.side, Time: e.time, Value: e.val})
	}
	const lo, hi = -50, 50
	want := func(typ join.Type, emit join.Emit) []string {
		var out []string
		for key, es := range perKey {
			recs, _ := bruteForce(es, lo, hi, typ, emit)
			for _, rec := range recs {
				kind, rest, _ := strings.Cut(rec, " ")
				out = append(out, kind+" "+key+" "+rest)
			}
		}
		slices.Sort(out)
		return out
	}
	p, s := beam.NewPipelineWithRoot()
	left, right := play(s, onTime(script...))
	for _, mode := range []struct {
		typ  join.Type
		emit join.Emit
	}{{join.Inner, join.EmitImmediate}, {join.LeftOuter, join.EmitFinal}, {join.FullOuter, join.EmitRetract}} {
		records := want(mode.typ, mode.emit)
		if len(records) < 100 {
			t.Fatalf("%v %v: %d records expected: the case would show little", mode.typ, mode.emit, len(records))
		}
		for _, layout := range []struct {
			name string
			opt  join.Option
		}{{"detect", join.HotKeyThreshold(4)}, {"nodetect", join.NoHotKeyDetection()}} {
			name := fmt.Sprintf("%v/%v/%s", mode.typ, mode.emit, layout.name)
			joined := join.Interval[string, string, string](s.Scope(name), left, right,
				join.Between(lo*time.Millisecond, hi*time.Millisecond), mode.typ, mode.emit,
				join.ProgressHorizon(time.Second), layout.opt)
			formatted := beam.ParDo(s, formatResult, joined.Records)
			passert.Equals(s, formatted, toAny(records)...)
			passert.Empty(s, joined.Late)
			passert.Equals(s, windowCounts(s, formatted, 10*time.Second), wantWindowCounts(records, 10*time.Second)...)
		}
	}
	pr := ptest.RunAndValidate(t, p)
	// Informational: Prism's counters can lose increments, so the cut-overs
	// are asserted by the runner-model harness, not here.
	for _, c := range pr.Metrics().Query(func(r metrics.SingleResult) bool { return r.Name() == "hot_keys" }).Counters() {
		t.Logf("%s: hot_keys %d", c.Key.Step, c.Result())
	}
}
