package join

// This file holds Fate, the record of what became of an input element,
// and its Outcome: the accounting output of the joins, from which exact
// per-side counts are built with ordinary Beam combines (Prism's counters
// can under-report).

import (
	"time"
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
