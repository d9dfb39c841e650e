// Package skew holds the rule by which beamjoin's sources keep an event
// time far ahead of their stream from moving their watermark for good:
// the Pub/Sub read (pipelines/pubsubio, MaxSkew) and the JSON-lines replay
// (pipelines/jsonl, Source.MaxSkew) apply it alike.
//
// A source's watermark trails the latest event time it took in. A record
// more than the bound ahead of that time is ahead: it is emitted as
// usual, but the watermark does not take its time, so one bad time (a
// time in microseconds, a clock years off, a record that fell back to the
// time it was published during a backfill) leaves the watermark with the
// stream. When Run records in a row are ahead, the stream itself has
// moved on (a gap in the data, a backfill that reached the present): the
// watermark then takes the earliest of them.
package skew

import "math"

// Run is how many records in a row must be ahead before the watermark
// takes their time.
const Run = 5

// None is the time of no record: a source's latest time before its first
// record, and what Take returns when the watermark takes nothing.
const None = math.MinInt64

// State is what a source keeps of the records ahead since the last one
// that was not: it is part of the source's watermark estimator state,
// persisted with it across checkpoints.
type State struct {
	// Ahead is how many records in a row were ahead.
	Ahead int64
	// Earliest is the earliest event time among them; None when there are
	// none.
	Earliest int64
}

// Take returns the event time a source's watermark may take in from a
// record of event time ts, and whether the record is ahead: more than
// bound milliseconds after latest, the latest time the watermark took
// in. A bound of zero or less bounds nothing, and before the first record
// (latest is None) nothing is ahead. It updates s.
func Take(s *State, latest, ts, bound int64) (take int64, ahead bool) {
	if bound <= 0 || latest == None || ts <= latest || ts-latest <= bound {
		*s = State{Earliest: None}
		return ts, false
	}
	if s.Ahead == 0 || ts < s.Earliest {
		s.Earliest = ts
	}
	s.Ahead++
	if s.Ahead < Run {
		return None, true
	}
	take = s.Earliest
	*s = State{Earliest: None}
	return take, true
}
