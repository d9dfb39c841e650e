// This file holds the multi-way join's route (Op Multi, the beamjoin
// command's multi): its inputs, named input1 to inputN, its case of the
// plan, the refusal of its own settings in the other routes, its join
// stage, and how its rows, late elements and fates are written and
// counted.

package jsonjoin

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	join.RegisterMultiTypes[string, jsonl.Record]()
	register.Function1x1(FormatMultiResult)
	register.Function1x1(FormatMultiLate)
	register.DoFn2x0[MultiResult, func(string, tally)](&countMultiResultFn{})
	register.DoFn2x0[MultiLateElement, func(string, tally)](&countMultiLateFn{})
	register.DoFn2x0[MultiFate, func(string, tally)](&countMultiFateFn{})
}

// Multi is join.Multi: the lines of the first input, the anchor, joined
// with the lines of each further input within its bounds of the anchor's
// time (Config.Inputs, Bounds, Optional).
const Multi Op = "multi"

// multiRoute is the multi-way join's row of routes. Its Beam counters
// count the fates of every element (multi_input2_matched, …), as the
// interval join's do.
var multiRoute = route{
	op:    Multi,
	sides: multiSides, span: multiSpan, plan: planMulti, join: joinMulti, refuseElsewhere: refuseMulti,
	format: FormatMultiResult, formatLate: FormatMultiLate, count: countMultiResults, countLate: countMultiLate, countFate: countMultiFate,
	outCounts:       []string{countRows, countRetractions},
	fates:           []string{"matched", "unmatched", "expired", "late"},
	fatesInCounters: true, fromCounter: multiCount, oneLateRecordEach: true,
}

// countRows is the count of the multi-way join's rows written.
const countRows = "rows_out"

// inputName is the name of input i (0 for the anchor): input1, input2, …,
// as join.Multi's counters number them.
func inputName(i int) string { return "input" + strconv.Itoa(i+1) }

// multiSides are the multi-way join's inputs, c.Inputs, named input1 to
// inputN.
func multiSides(c Config) []side {
	var sides []side
	for i, in := range c.Inputs {
		sides = append(sides, side{name: inputName(i), field: fmt.Sprintf("Inputs[%d]", i), words: fmt.Sprintf("input %d", i+1), in: in})
	}
	return sides
}

// planMulti is the multi-way join's case of the plan: three or more
// inputs, one Bounds for each after the first, Optional naming inputs
// after the first; no Left or Right, no window, no interval bounds of
// its own, no join type, no buffer cap, no unique-left declaration. Each
// input's bounds are checked as an interval join's (join.Between), the
// emission mode and the allowed lateness by join.RouteMulti. The join
// tracks the fates of its elements (join.TrackFates), which the summary
// counts. Files read whole are bounded, and joined by grouping per key
// (join.Bounded), whose rows are EmitFinal's in every mode; a replay or a
// stream is joined on state and timers, and the join judges lateness
// itself: the reader of a replay does not (join.LateBehind has no rule
// for Multi), so which lines are late can depend on timing.
func planMulti(c Config) (joinPlan, error) {
	n := len(c.Inputs)
	switch {
	case c.Left != (Input{}):
		return joinPlan{}, invalid("Left", "", "multi takes its inputs as Inputs, the anchor first, not as Left and Right")
	case c.Right != (Input{}):
		return joinPlan{}, invalid("Right", "", "multi takes its inputs as Inputs, the anchor first, not as Left and Right")
	case c.Size != 0:
		return joinPlan{}, invalid("Size", "", "multi takes no window")
	case c.Slide != 0:
		return joinPlan{}, invalid("Slide", "", "multi takes no window")
	case c.Gap != 0:
		return joinPlan{}, invalid("Gap", "", "multi takes no window")
	case c.Lower != 0 || c.Upper != 0 || c.LowerExclusive || c.UpperExclusive:
		return joinPlan{}, invalid("Lower", "", "multi takes no interval bounds: each input after the first has its own, in Bounds")
	case c.Type != join.Inner:
		return joinPlan{}, invalid("Type", "", "multi takes no join type: Optional names the inputs a row may lack")
	case c.MaxBufferedPerKey != 0:
		return joinPlan{}, invalid("MaxBufferedPerKey", "", "multi takes no buffer cap")
	case c.UniqueLeft:
		return joinPlan{}, invalid("UniqueLeft", "", "multi takes no unique-left declaration: it is the interval join's")
	case n < 3:
		return joinPlan{}, invalid("Inputs", "", fmt.Sprintf("%d inputs: a multi-way join takes three or more, the anchor first (two are an interval join's)", n))
	case n > join.MaxMultiInputs:
		return joinPlan{}, invalid("Inputs", "", fmt.Sprintf("%d inputs: a multi-way join takes at most %d", n, join.MaxMultiInputs))
	case len(c.Bounds) != n-1:
		return joinPlan{}, invalid("Bounds", "", fmt.Sprintf("%d bounds for %d inputs: give one for each input after the first, in input order", len(c.Bounds), n))
	}
	for j, o := range c.Optional {
		if o < 2 || o > n {
			return joinPlan{}, invalid(fmt.Sprintf("Optional[%d]", j), fmt.Sprint("optional input ", o), fmt.Sprintf("give the number of an input after the first, 2 to %d (input 1 is the anchor)", n))
		}
	}
	var inputs []func(beam.PCollection) join.MultiInput
	for i, b := range c.Bounds {
		between := join.Between(b.Lower, b.Upper)
		if err := join.RouteInterval.Check(between); err != nil {
			var oe *join.OptionError
			if !errors.As(err, &oe) {
				return joinPlan{}, err
			}
			return joinPlan{}, invalid(fmt.Sprintf("Bounds[%d]", i), fmt.Sprintf("bounds %v,%v of input %d", b.Lower, b.Upper, i+2), oe.Reason())
		}
		input := join.Required
		if slices.Contains(c.Optional, i+2) {
			input = join.Optional
		}
		inputs = append(inputs, func(col beam.PCollection) join.MultiInput { return input(col, between) })
	}
	opts := []join.Option{c.Emit}
	if c.AllowedLateness != 0 {
		opts = append(opts, join.AllowedLateness(c.AllowedLateness))
	}
	if err := join.RouteMulti.Check(opts...); err != nil {
		return joinPlan{}, err
	}
	opts = append(opts, join.TrackFates())
	switch {
	case c.streamingBatch:
		opts = append(opts, join.Streaming())
	case !c.Replay && !c.Streaming():
		opts = append(opts, join.Bounded())
	}
	return joinPlan{options: opts, inputs: inputs}, nil
}

// multiSpan is the time a multi-way join's element waits for partners:
// from the earliest lower bound below zero to the latest upper bound above
// it, plus the allowed lateness (an input's element waits for its
// anchors, and for their other partners).
func multiSpan(c Config) time.Duration {
	var before, after time.Duration
	for _, b := range c.Bounds {
		before, after = max(before, -b.Lower), max(after, b.Upper)
	}
	return before + after + c.AllowedLateness
}

// refuseMulti refuses the multi-way join's own settings in a join of
// another route.
func refuseMulti(c Config) error {
	switch {
	case len(c.Inputs) > 0:
		return invalid("Inputs", "", fmt.Sprintf("%s takes two inputs, Left and Right: Inputs are the multi-way join's", c.Op))
	case len(c.Bounds) > 0:
		return invalid("Bounds", "", fmt.Sprintf("%s takes no bounds per input: they are the multi-way join's", c.Op))
	case len(c.Optional) > 0:
		return invalid("Optional", "", fmt.Sprintf("%s takes no optional inputs: they are the multi-way join's", c.Op))
	}
	return nil
}

// joinMulti is the multi-way join's stage: the first input's records are
// the anchor, each further one an input as j.inputs makes it. As for
// Interval, rows are written from the lines alone (FormatMultiResult), so
// the file and line number of each are not carried through the join.
func joinMulti(s beam.Scope, j joinPlan, records []beam.PCollection) (join.Outputs, error) {
	var cols []beam.PCollection
	for i, r := range records {
		cols = append(cols, beam.ParDo(s.Scope(inputName(i)), dropOrigin, r))
	}
	var inputs []join.MultiInput
	for i, input := range j.inputs {
		inputs = append(inputs, input(cols[i+1]))
	}
	return join.TryMulti[string, jsonl.Record](s, cols[0], inputs, j.options...)
}

// The record types of the multi-way join of JSON lines (see Result).
type (
	// MultiResult is a row of the multi-way join.
	MultiResult = join.MultiResult[string, jsonl.Record]
	// MultiLateElement is an element the multi-way join judged late.
	MultiLateElement = join.MultiLateElement[string, jsonl.Record]
	// MultiFate is what became of an element of the multi-way join.
	MultiFate = join.MultiFate[string]
)

// FormatMultiResult writes a row of the multi-way join:
// {"key":K,"records":[{…},null,…],"times":[MS,null,…]}, with "kind":"retract"
// first for a withdrawn row (EmitRetract).
func FormatMultiResult(r MultiResult) string {
	var w jsonWriter
	if r.Kind == join.KindRetract {
		w.str("kind", "retract")
	}
	w.raw("key", r.Key)
	recs, times := make([]string, len(r.Values)), make([]string, len(r.Values))
	for i, v := range r.Values {
		if v == nil {
			recs[i], times[i] = "null", "null"
			continue
		}
		recs[i], times[i] = string(v.Raw), strconv.FormatInt(r.Times[i].UnixMilli(), 10)
	}
	w.raw("records", "["+strings.Join(recs, ",")+"]")
	w.raw("times", "["+strings.Join(times, ",")+"]")
	return w.done()
}

// FormatMultiLate writes a late element of the multi-way join:
// {"input":I,"key":K,"time":MS,"record":{…}}, I 1-based.
func FormatMultiLate(l MultiLateElement) string {
	var w jsonWriter
	w.raw("input", strconv.Itoa(l.Input+1))
	w.raw("key", l.Key)
	w.millis("time", l.Time)
	w.raw("record", string(l.Value.Raw))
	return w.done()
}

// countMultiResultFn counts the multi-way join's rows and retractions,
// and feeds the progress hub.
type countMultiResultFn struct {
	counter
}

func (f *countMultiResultFn) ProcessElement(r MultiResult, _ func(string, tally)) {
	f.hub.out()
	name := countRows
	if r.Kind == join.KindRetract {
		name = countRetractions
	}
	f.counts.add(name, tally{N: 1})
}

func countMultiResults(c counter) any { return &countMultiResultFn{counter: c} }

// countMultiLateFn counts the multi-way join's late elements per input
// ("input2_late_out").
type countMultiLateFn struct {
	counter
}

func (f *countMultiLateFn) ProcessElement(l MultiLateElement, _ func(string, tally)) {
	f.counts.add(inputName(l.Input)+"_"+countLateOut, tally{N: 1})
}

// countMultiLate makes a countMultiLateFn, which feeds no hub (see
// countLate).
func countMultiLate(counter) any { return &countMultiLateFn{} }

// countMultiFateFn counts the fates of the multi-way join's elements per
// input and outcome ("input1_matched", "input3_expired").
type countMultiFateFn struct {
	counter
}

func (f *countMultiFateFn) ProcessElement(fate MultiFate, _ func(string, tally)) {
	f.counts.add(inputName(fate.Input)+"_"+fate.Outcome.String(), tally{N: 1})
}

// countMultiFate makes a countMultiFateFn, which feeds no hub (see
// countFate).
func countMultiFate(counter) any { return &countMultiFateFn{} }

// multiCount is the count that a Beam counter of join.Multi counts: its
// counters are named as the counts, with "multi_" before
// (multi_input2_matched, multi_rows_out).
func multiCount(counter string) string { return strings.TrimPrefix(counter, "multi_") }
