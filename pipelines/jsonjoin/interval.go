// This file holds the interval join's route (Op Interval, the beamjoin
// command's interval): its case of the plan, its join stage, and how its
// records and late elements are written and counted. The as-of join
// writes and counts its records the same way (asof.go).

package jsonjoin

import (
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	register.Function2x2(dropOrigin)
	register.Function1x1(FormatResult)
	register.Function1x1(FormatLate)
	register.DoFn2x0[Result, func(string, tally)](&countResultFn{})
	register.DoFn2x0[LateElement, func(string, tally)](&countLateFn{})
}

// Interval is join.Interval: a left-anchored, time-bounded join.
const Interval Op = "interval"

// intervalRoute is the interval join's row of routes.
var intervalRoute = route{
	op:    Interval,
	sides: twoSides, span: intervalSpan, plan: planInterval, join: joinInterval,
	format: FormatResult, formatLate: FormatLate, count: countResults, countLate: countLate, countFate: countFate,
	outCounts:       []string{"pairs_out", "retractions_out", "left_unmatched_out", "right_unmatched_out", "left_late_out", "right_late_out"},
	fates:           []string{"matched", "unmatched", "expired", "evicted", "late"},
	fatesInCounters: true, oneLateRecordEach: true,
}

// planInterval is the interval join's case of the plan. Files read whole
// are bounded, and joined by grouping per key (join.Bounded), not with
// state, tens of times faster; a replay's reader judges lateness by the
// join's own rule at the watermark (join.LateBehind; see the package
// doc's Replay).
func planInterval(c Config) (joinPlan, error) {
	switch {
	case c.Size != 0:
		return joinPlan{}, invalid("Size", "", "an interval join takes no window")
	case c.Slide != 0:
		return joinPlan{}, invalid("Slide", "", "an interval join takes no window")
	case c.Gap != 0:
		return joinPlan{}, invalid("Gap", "", "an interval join takes no window")
	}
	opts := []join.Option{join.Between(c.Lower, c.Upper), c.Type, c.Emit}
	if c.LowerExclusive {
		opts = append(opts, join.LowerExclusive())
	}
	if c.UpperExclusive {
		opts = append(opts, join.UpperExclusive())
	}
	if c.AllowedLateness != 0 {
		opts = append(opts, join.AllowedLateness(c.AllowedLateness))
	}
	if c.MaxBufferedPerKey != 0 {
		opts = append(opts, join.MaxBufferedPerKey(c.MaxBufferedPerKey))
	}
	if c.UniqueLeft {
		opts = append(opts, join.UniqueLeft())
	}
	if err := join.RouteInterval.Check(opts...); err != nil {
		return joinPlan{}, err
	}
	j := joinPlan{options: opts}
	if c.Replay {
		for _, side := range []join.Side{join.Left, join.Right} {
			behind, err := join.LateBehind(side, opts...)
			if err != nil {
				return joinPlan{}, err
			}
			j.lateBehind = append(j.lateBehind, behind)
		}
	}
	switch {
	case c.streamingBatch:
		// Files read whole on the streaming path, for benchmarks: bounded
		// input takes the bounded path unless told.
		j.options = append(j.options, join.Streaming())
	case !c.Replay && !c.Streaming():
		j.options = append(j.options, join.Bounded())
	}
	return j, nil
}

// intervalSpan is the time an interval join's element waits for
// partners: the interval's width plus the allowed lateness.
func intervalSpan(c Config) time.Duration { return c.Upper - c.Lower + c.AllowedLateness }

// joinInterval is the interval join's stage. Its records are written
// from the lines alone (FormatResult, FormatLate), so the file and line
// number of each are not carried through the join, where they would be
// held in state or grouped for nothing (a third of the bytes of a short
// line on a long path).
func joinInterval(s beam.Scope, j joinPlan, records []beam.PCollection) (join.Outputs, error) {
	l, r := beam.ParDo(s.Scope("left"), dropOrigin, records[0]), beam.ParDo(s.Scope("right"), dropOrigin, records[1])
	return join.TryInterval[string, jsonl.Record, jsonl.Record](s, l, r, j.options...)
}

// dropOrigin keeps of a record only its line: Raw, not File and Line.
func dropOrigin(key string, r jsonl.Record) (string, jsonl.Record) {
	return key, jsonl.Record{Raw: r.Raw}
}

// The record types of the interval join of JSON lines (and of the as-of
// join, which has the same): the key is canonical JSON text (see
// jsonl.Fields.Parse), both values are jsonl.Records.
type (
	// Result is an interval join record.
	Result = join.Result[string, jsonl.Record, jsonl.Record]
	// LateElement is an element the interval join judged late.
	LateElement = join.LateElement[string, jsonl.Record, jsonl.Record]
)

// FormatResult writes an interval join record:
// {"kind":"pair","key":K,"left":{…},"right":{…},"left_time":MS,"right_time":MS,"time":MS}.
// kind is "pair", "unmatched" or "retract"; an absent side and its time
// are null.
func FormatResult(r Result) string {
	var w jsonWriter
	w.record(r)
	return w.done()
}

// FormatLate writes a late element: {"side":"left","key":K,"time":MS,"value":{…}}.
func FormatLate(l LateElement) string {
	var w jsonWriter
	w.late(l.Side, l.Key, l.Time, l.Left, l.Right)
	return w.done()
}

// countResultFn counts interval join records by kind and side, and feeds
// the progress hub.
type countResultFn struct {
	counter
}

func (f *countResultFn) ProcessElement(r Result, _ func(string, tally)) {
	f.hub.out()
	f.counts.add(resultCount(r.Kind, r.Left == nil), tally{N: 1})
}

func countResults(c counter) any { return &countResultFn{counter: c} }

// countLateFn counts the interval join's late elements per side.
type countLateFn struct {
	counter
}

func (f *countLateFn) ProcessElement(l LateElement, _ func(string, tally)) {
	f.counts.add(l.Side.String()+"_"+countLateOut, tally{N: 1})
}

// countLate makes a countLateFn; late elements are not progress, so it
// feeds no hub.
func countLate(counter) any { return &countLateFn{} }
