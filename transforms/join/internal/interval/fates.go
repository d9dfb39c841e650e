package interval

// This file holds the interval join's fates (TrackFates): its stateful
// step emits each element's fate among its raw records, as a record of
// kind kindFate plus the match.Fate, the element's side and its time;
// splitFatesFn takes them out, as raw.FateRecords, before the records are
// decoded. A join without TrackFates emits none.

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
)

func init() {
	register.DoFn5x0[beam.EventTime, beam.X, raw.Record, func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.FateRecord)](&splitFatesFn{})
}

// kindFate is the least Kind of a fate record among an interval join's raw
// records; no Result has it.
const kindFate raw.Kind = 0x80

// fateRecordOf is the raw record of the fate f of an element of side s at
// time t (milliseconds); it carries no value.
func fateRecordOf(s match.Side, t int64, f match.Fate) raw.Record {
	if s == match.Left {
		return raw.Record{Kind: kindFate + raw.Kind(f), HasLeft: true, LeftTime: t}
	}
	return raw.Record{Kind: kindFate + raw.Kind(f), HasRight: true, RightTime: t}
}

// emitFate emits the fate f of x if the join tracks fates, at x's time.
func (j *joiner) emitFate(key beam.X, s match.Side, t int64, f match.Fate, emit func(beam.EventTime, beam.X, raw.Record)) {
	if j.Fates {
		emit(beam.EventTime(t), key, fateRecordOf(s, t, f))
	}
}

// splitFatesFn parts an interval join's raw records into join records and
// fate records.
type splitFatesFn struct{}

func (splitFatesFn) ProcessElement(et beam.EventTime, key beam.X, r raw.Record, emit func(beam.EventTime, beam.X, raw.Record), emitFate func(beam.EventTime, beam.X, raw.FateRecord)) {
	if r.Kind < kindFate {
		emit(et, key, r)
		return
	}
	side := match.Left
	if r.HasRight {
		side = match.Right
	}
	emitFate(et, key, raw.FateRecord{Side: uint8(side), Outcome: uint8(raw.OutcomeOf(match.Fate(r.Kind - kindFate)))})
}
