package join_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// This file holds the interval join tests' stream harness: a script of
// two-sided events and watermark advances played through ONE TestStream (Prism
// refuses two), split into the keyed left and right inputs.

func init() {
	register.Function3x0(splitEvent)
	register.Emitter2[string, string]()
	register.Function1x1(formatResult)
	register.Function1x1(formatLate)
}

// event is one step of a script: an element (side, key, time, value) or,
// with watermark set, a watermark advance to time.
type event struct {
	side      join.Side
	key, val  string
	time      int64
	watermark bool
}

func l(ts int64, key, val string) event { return event{side: join.Left, key: key, val: val, time: ts} }
func r(ts int64, key, val string) event { return event{side: join.Right, key: key, val: val, time: ts} }
func wm(ts int64) event                 { return event{watermark: true, time: ts} }

// onTime returns the elements in the given arrival order, each preceded by a
// watermark advance to the earliest time of it and the elements after it:
// the watermark moves as elements arrive, yet none arrives behind it.
func onTime(elements ...event) []event {
	var out []event
	for i := range elements {
		low := elements[i].time
		for _, e := range elements[i+1:] {
			low = min(low, e.time)
		}
		out = append(out, wm(low), elements[i])
	}
	return out
}

// play builds the script's TestStream and returns the keyed left and right
// inputs, both PCollection<KV<string,string>>.
func play(s beam.Scope, script []event) (left, right beam.PCollection) {
	return beam.ParDo2(s, splitEvent, stream(s, script))
}

// stream builds the script's TestStream, ending with the watermark at
// infinity: a PCollection<string> of "L key value" and "R key value".
func stream(s beam.Scope, script []event) beam.PCollection {
	c := teststream.NewConfig()
	last := int64(-1 << 62)
	for _, e := range script {
		if e.watermark {
			if e.time > last {
				must(c.AdvanceWatermark(e.time))
				last = e.time
			}
			continue
		}
		side := "L"
		if e.side == join.Right {
			side = "R"
		}
		must(c.AddElements(e.time, side+" "+e.key+" "+e.val))
	}
	must(c.AdvanceWatermarkToInfinity())
	return teststream.Create(s, c)
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func splitEvent(line string, left, right func(string, string)) {
	f := strings.SplitN(line, " ", 3)
	if f[0] == "L" {
		left(f[1], f[2])
	} else {
		right(f[1], f[2])
	}
}

// formatResult writes a record as "kind key left@time right@time t=time",
// with "-" for an absent side.
func formatResult(r join.Result[string, string, string]) string {
	side := func(v *string, t int64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%s@%d", *v, t)
	}
	return fmt.Sprintf("%v %s %s %s t=%d", r.Kind, r.Key, side(r.Left, r.LeftTime.UnixMilli()), side(r.Right, r.RightTime.UnixMilli()), r.Time.UnixMilli())
}

func formatLate(e join.LateElement[string, string, string]) string {
	v := e.Left
	if e.Side == join.Right {
		v = e.Right
	}
	return fmt.Sprintf("late %v %s %s@%d", e.Side, e.Key, *v, e.Time.UnixMilli())
}

// counters returns the pipeline's beamjoin counters by name, summed over
// steps, less the bundle cache's (cache_hits, cache_misses), which depend
// on how the runner bundles the input.
func counters(t *testing.T, pr beam.PipelineResult) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, c := range pr.Metrics().Query(func(r metrics.SingleResult) bool { return r.Namespace() == join.Namespace }).Counters() {
		if !strings.HasPrefix(c.Name(), "cache_") {
			out[c.Name()] += c.Result()
		}
	}
	return out
}
