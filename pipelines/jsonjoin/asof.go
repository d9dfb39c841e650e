// This file holds the as-of join's route (Op AsOf, the beamjoin command's
// asof): its case of the plan, the refusal of its own settings in the
// other routes, and its join stage. Its records and late elements are
// written and counted as the interval join's (interval.go).

package jsonjoin

import (
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// AsOf is join.AsOf: each left line joined with the right line of its
// key that is the version valid at its time.
const AsOf Op = "asof"

// asofRoute is the as-of join's row of routes.
var asofRoute = route{
	op:    AsOf,
	sides: twoSides, span: asofSpan, plan: planAsOf, join: joinAsOf, refuseElsewhere: refuseAsOf,
	format: FormatResult, formatLate: FormatLate, count: countResults, countLate: countLate, countFate: countFate,
	outCounts:         []string{"pairs_out", "retractions_out", "left_unmatched_out", "left_late_out", "right_late_out"},
	fates:             []string{"matched", "unmatched", "expired", "evicted", "late"},
	oneLateRecordEach: true,
}

// planAsOf is the as-of join's case of the plan: no window, no interval
// bounds, no buffer cap, no allowed lateness; the join type, emission
// mode and max age are join.RouteAsOf's to check. EmitImmediate, the zero
// value, is left out of the options: the join's default is EmitFinal.
// Files read whole are bounded, and joined by grouping per key
// (join.Bounded); a replay or a stream is joined on state and timers. The
// reader of a replay judges lateness: a line behind the watermark when it
// is read is late. That is the join's own rule (an element before its
// key's latest timer firing is late) at the watermark, the most any key's
// firings can reach, so which lines are late does not depend on timing.
func planAsOf(c Config) (joinPlan, error) {
	switch {
	case c.Size != 0 || c.Slide != 0 || c.Gap != 0:
		return joinPlan{}, invalid("Size", "", "an as-of join takes no window")
	case c.Lower != 0 || c.Upper != 0 || c.LowerExclusive || c.UpperExclusive:
		return joinPlan{}, invalid("Lower", "", "an as-of join takes no interval bounds: a left line joins the latest version at or before its time")
	case c.MaxBufferedPerKey != 0:
		return joinPlan{}, invalid("MaxBufferedPerKey", "", "an as-of join takes no buffer cap: it keeps only the versions a left line may still need")
	case c.AllowedLateness != 0:
		return joinPlan{}, invalid("AllowedLateness", "", "an as-of join takes no allowed lateness")
	case c.UniqueLeft:
		return joinPlan{}, invalid("UniqueLeft", "", "an as-of join takes no unique-left declaration: it is the interval join's")
	case c.MaxAge != 0 && !c.LimitAge:
		return joinPlan{}, invalid("MaxAge", "", fmt.Sprintf("max age %v without LimitAge, which makes it a limit", c.MaxAge))
	}
	opts := []join.Option{c.Type}
	if c.Emit != join.EmitImmediate {
		opts = append(opts, c.Emit)
	}
	if c.LimitAge {
		opts = append(opts, join.MaxAge(c.MaxAge))
	}
	if c.Strict {
		opts = append(opts, join.Strict())
	}
	if err := join.RouteAsOf.Check(opts...); err != nil {
		return joinPlan{}, err
	}
	j := joinPlan{options: opts}
	if c.Replay {
		j.lateBehind = []time.Duration{0, 0}
	}
	if !c.Replay && !c.Streaming() {
		j.options = append(j.options, join.Bounded())
	}
	return j, nil
}

// asofSpan is the span that sets a replayed as-of join's watermark step:
// the watermark lag, and at least a second. A left line waits for the
// watermark to pass it, which trails the lines by the lag anyway; finer
// steps would only cost checkpoints.
func asofSpan(c Config) time.Duration { return max(c.WatermarkLag, time.Second) }

// refuseAsOf refuses the as-of join's own settings in a join of another
// route.
func refuseAsOf(c Config) error {
	switch {
	case c.MaxAge != 0 || c.LimitAge:
		return invalid("MaxAge", "", fmt.Sprintf("%s takes no max age: it is the as-of join's", c.Op))
	case c.Strict:
		return invalid("Strict", "", fmt.Sprintf("%s takes no strictness: it is the as-of join's", c.Op))
	}
	return nil
}

// joinAsOf is the as-of join's stage. As for Interval, records are
// written from the lines alone; and the tie rule (the greater encoded
// version wins) must see the line alone, or two versions of one time
// would be told apart by their line numbers, which depend on the order of
// the file.
func joinAsOf(s beam.Scope, j joinPlan, records []beam.PCollection) (join.Outputs, error) {
	l, r := beam.ParDo(s.Scope("left"), dropOrigin, records[0]), beam.ParDo(s.Scope("right"), dropOrigin, records[1])
	return join.TryAsOf[string, jsonl.Record, jsonl.Record](s, l, r, j.options...)
}
