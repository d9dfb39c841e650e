package join

// This file holds Fate, the record of what became of an input element,
// and its Outcome: the accounting output of the joins, from which exact
// per-side counts are built with ordinary Beam combines (Prism's counters
// can under-report).

import (
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
)

// Outcome is what finally became of an input element of a join. Every
// element that reaches a join has exactly one, so per side the outcomes
// add up to the elements in.
type Outcome uint8

// The outcomes. An element of Window is matched, unmatched, expired or
// late; an element of Interval matched, unmatched, expired, evicted or
// late; an element of CoGroup is grouped or late.
const (
	// OutcomeMatched: in at least one pair.
	OutcomeMatched Outcome = iota
	// OutcomeUnmatched: of an outer side, reported unmatched and in no pair.
	OutcomeUnmatched
	// OutcomeExpired: of an inner side, in no pair; it was forgotten when
	// it could no longer match.
	OutcomeExpired
	// OutcomeEvicted: removed by a per-key size cap (the interval join's
	// MaxBufferedPerKey).
	OutcomeEvicted
	// OutcomeLate: too late to be joined or grouped; it is in the late
	// output.
	OutcomeLate
	// OutcomeGrouped: in at least one Group of CoGroup.
	OutcomeGrouped
)

var outcomeWords = words{what: "outcome", kind: "Outcome", names: []string{
	OutcomeMatched: "matched", OutcomeUnmatched: "unmatched", OutcomeExpired: "expired",
	OutcomeEvicted: "evicted", OutcomeLate: "late", OutcomeGrouped: "grouped",
}}

// String returns "matched", "unmatched", "expired", "evicted", "late" or
// "grouped": the name of the outcome's counters (left_matched, ...).
func (o Outcome) String() string { return outcomeWords.name(uint8(o)) }

// MarshalText returns the outcome's String form; an unknown outcome is an
// error.
func (o Outcome) MarshalText() ([]byte, error) { return outcomeWords.marshal(uint8(o)) }

// UnmarshalText reads an outcome from its String form.
func (o *Outcome) UnmarshalText(text []byte) error { return outcomeWords.unmarshal(text, (*uint8)(o)) }

// Fate is what became of one input element of a join: its side, key and
// event time, and its Outcome. Its element timestamp is Time; a join emits
// it once the outcome is final, so it is usually behind the watermark:
// count fates in the global window (as beam.Combine does by default).
type Fate[K any] struct {
	Side    Side
	Key     K
	Time    time.Time
	Outcome Outcome
}

// The interval join's fates (TrackFates): its stateful step emits each
// element's fate among its raw records, as a record of Kind kindFate plus
// the match.Fate, the element's side and its time; splitFatesFn takes them
// out before the records are decoded. A join without TrackFates emits
// none.

func init() {
	register.DoFn5x0[beam.EventTime, beam.X, raw.Record, func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, fateRecord)](&splitFatesFn{})
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

// outcomeOf is the Outcome of the matching core's fate f.
func outcomeOf(f match.Fate) Outcome {
	switch f {
	case match.Matched:
		return OutcomeMatched
	case match.Unmatched:
		return OutcomeUnmatched
	case match.Expired:
		return OutcomeExpired
	case match.Evicted:
		return OutcomeEvicted
	}
	return OutcomeLate
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

func (splitFatesFn) ProcessElement(et beam.EventTime, key beam.X, r raw.Record, emit func(beam.EventTime, beam.X, raw.Record), emitFate func(beam.EventTime, beam.X, fateRecord)) {
	if r.Kind < kindFate {
		emit(et, key, r)
		return
	}
	side := Left
	if r.HasRight {
		side = Right
	}
	emitFate(et, key, fateRecord{Side: uint8(side), Outcome: uint8(outcomeOf(match.Fate(r.Kind - kindFate)))})
}

// intervalFates parts the raw records of an interval join with TrackFates
// into join records and Fate[K] records, which stay in the global window.
// Fate[K] must be registered (RegisterTypes).
func intervalFates[K, L, R any](s beam.Scope, raw beam.PCollection) (records, fates beam.PCollection, err error) {
	t := reflect.TypeFor[Fate[K]]()
	if err := checkRegistered[K, L, R]("join.Interval", t); err != nil {
		return beam.PCollection{}, beam.PCollection{}, err
	}
	records, rawFates := beam.ParDo2(s.Scope("fates"), splitFatesFn{}, raw)
	out, err := beam.TryParDo(s.Scope("fates"), &fateFn{Out: beam.EncodedType{T: t}}, rawFates, beam.TypeDefinition{Var: beam.YType, T: t})
	if err != nil {
		return beam.PCollection{}, beam.PCollection{}, fmt.Errorf("beamjoin: join.Interval: %w", err)
	}
	return records, out[0], nil
}
