package match

import (
	"fmt"
	"math"
	"time"
)

// Side says which input an element came from. Side, Type and Emit are
// numbered as package join's words of the same names, which name them.
type Side uint8

const (
	// Left is the first input of a join, the one the bounds are measured from.
	Left Side = iota
	// Right is the second input of a join.
	Right
)

// Other returns the opposite side.
func (s Side) Other() Side { return 1 - s }

// Type is a join type: which sides keep their elements that never match.
type Type uint8

// The join types: which sides are outer (Outer).
const (
	Inner Type = iota
	LeftOuter
	RightOuter
	FullOuter
)

// Outer reports whether elements of side s that never match are emitted.
func (t Type) Outer(s Side) bool {
	switch t {
	case LeftOuter:
		return s == Left
	case RightOuter:
		return s == Right
	case FullOuter:
		return true
	}
	return false
}

// Emit is the outer-emission mode: when an outer element without a partner
// is reported.
type Emit uint8

const (
	// Immediate reports an outer element as unmatched as soon as it arrives
	// without a buffered partner; a partner arriving later produces the pair
	// as a further record. This is the seed StreamJoiner's behaviour.
	Immediate Emit = iota
	// Final reports an outer element as unmatched once, when event time
	// proves no partner can still come, and only if it never matched.
	Final
	// Retract behaves as Immediate and, when an element reported unmatched
	// meets its first partner, retracts that unmatched record before the
	// pair. The changelog nets to Final's result.
	Retract
)

// Bounds is the range of ts(right) - ts(left) in which two elements with
// the same key match. Ends are inclusive unless marked exclusive. Event time
// has millisecond precision, so an exclusive end is the inclusive end one
// millisecond inward.
type Bounds struct {
	Lower, Upper                   time.Duration
	LowerExclusive, UpperExclusive bool
}

// Between returns inclusive bounds [lower, upper].
func Between(lower, upper time.Duration) Bounds {
	return Bounds{Lower: lower, Upper: upper}
}

// Validate reports bounds that no pair can satisfy or that event time cannot
// express.
func (b Bounds) Validate() error {
	if b.Lower%time.Millisecond != 0 || b.Upper%time.Millisecond != 0 {
		return fmt.Errorf("beamjoin: bounds [%v, %v] must be whole milliseconds, the precision of event time", b.Lower, b.Upper)
	}
	if b.Lower > b.Upper {
		return fmt.Errorf("beamjoin: lower bound %v is greater than upper bound %v", b.Lower, b.Upper)
	}
	if lo, hi := b.Millis(); lo > hi {
		return fmt.Errorf("beamjoin: bounds %v match nothing: the interval is empty once its exclusive ends are removed", b)
	}
	return nil
}

// Millis returns the inclusive range [lo, hi] of ts(right) - ts(left) in
// milliseconds, exclusive ends already moved inward.
func (b Bounds) Millis() (lo, hi int64) {
	lo, hi = b.Lower.Milliseconds(), b.Upper.Milliseconds()
	if b.LowerExclusive {
		lo++
	}
	if b.UpperExclusive {
		hi--
	}
	return lo, hi
}

// String writes the bounds in interval notation, e.g. "[-5s, 10m0s)".
func (b Bounds) String() string {
	open, close := "[", "]"
	if b.LowerExclusive {
		open = "("
	}
	if b.UpperExclusive {
		close = ")"
	}
	return fmt.Sprintf("%s%v, %v%s", open, b.Lower, b.Upper, close)
}

// NoProgress is the progress of a key whose cleanup has never run.
const NoProgress int64 = math.MinInt64

// Rules is everything that decides a join's result for one key: the bounds,
// the join type, the emission mode and the allowed lateness. Each rule is
// one method, written once for both sides.
type Rules struct {
	Bounds   Bounds
	Type     Type
	Emit     Emit
	Lateness time.Duration
}

// Validate checks the bounds and the lateness. Type and Emit are the
// caller's to check: package join names them.
func (r Rules) Validate() error {
	if err := r.Bounds.Validate(); err != nil {
		return err
	}
	if r.Lateness < 0 {
		return fmt.Errorf("beamjoin: allowed lateness %v is negative", r.Lateness)
	}
	if r.Lateness%time.Millisecond != 0 {
		return fmt.Errorf("beamjoin: allowed lateness %v must be whole milliseconds", r.Lateness)
	}
	return nil
}

// Matches is the match rule: a left element at leftTs and a right element at
// rightTs with the same key match iff lo <= rightTs - leftTs <= hi. The left
// element is always the reference, whichever arrived first.
func (r Rules) Matches(leftTs, rightTs int64) bool {
	lo, hi := r.Bounds.Millis()
	d := rightTs - leftTs
	return lo <= d && d <= hi
}

// PartnerRange returns the inclusive range of timestamps that a partner of
// an element of side s at ts may have.
func (r Rules) PartnerRange(s Side, ts int64) (from, to int64) {
	lo, hi := r.Bounds.Millis()
	if s == Left {
		return ts + lo, ts + hi
	}
	return ts - hi, ts - lo
}

// Expiry is the cleanup rule: the event time from which an element of side s
// at ts can no longer be matched by a partner that is not late. A left element
// can match right elements up to ts + max(hi, 0), a right element left
// elements up to ts + max(-lo, 0); the allowed lateness is added, and one
// millisecond, because an event-time timer fires when the watermark reaches
// its time and an element at exactly the watermark is still on time.
//
// Expiry is never before ts, so a cleanup timer is never set behind its own
// element.
func (r Rules) Expiry(s Side, ts int64) int64 {
	lo, hi := r.Bounds.Millis()
	reach := hi
	if s == Right {
		reach = -lo
	}
	return ts + max(reach, 0) + r.Lateness.Milliseconds() + 1
}

// IsLate is the lateness rule. A DoFn cannot read the watermark, so lateness
// is judged from the cleanup already done on the element's key: progress is
// the latest expiry time up to which the key's buffers have been cleared (the
// time of the last cleanup timer that fired, or NoProgress). An element is
// late iff one of its potential partners may already have been removed, that
// is iff the earliest-expiring potential partner expired at or before
// progress.
//
// Because Expiry adds the same reach on both sides, a partner that cleanup
// removed always finds the other element late, and an element that is not
// behind the watermark is never late: no pair is lost at the cleanup boundary.
func (r Rules) IsLate(s Side, ts, progress int64) bool {
	if progress == NoProgress {
		return false
	}
	from, _ := r.PartnerRange(s, ts)
	return r.Expiry(s.Other(), from) <= progress
}

// UnmatchedOnArrival is the emission decision for an element that has just
// arrived: whether to emit it as unmatched now. Under Immediate and Retract an
// outer element that found no buffered partner is reported at once.
func (r Rules) UnmatchedOnArrival(s Side, matched bool) bool {
	return r.Type.Outer(s) && !matched && r.Emit != Final
}

// RetractOnFirstMatch is the emission decision for a buffered element that
// has just met its first partner: whether to retract the unmatched record
// emitted when it arrived. Only Retract does, and only for outer elements,
// which are the ones that were reported unmatched.
func (r Rules) RetractOnFirstMatch(s Side) bool {
	return r.Type.Outer(s) && r.Emit == Retract
}

// UnmatchedOnRemoval is the emission decision for an element leaving the
// buffer, by expiry or by eviction: whether to emit it as unmatched now. Only
// Final does, for outer elements that never matched; Immediate and Retract
// reported them when they arrived.
func (r Rules) UnmatchedOnRemoval(s Side, matched bool) bool {
	return r.Type.Outer(s) && !matched && r.Emit == Final
}

// Fate is what finally became of an input element. Every element that
// reaches the join has exactly one fate, so the per-side fate counts add up
// to the inputs.
type Fate uint8

const (
	// Matched: the element was in at least one pair.
	Matched Fate = iota
	// Unmatched: an outer element that never matched; its unmatched record
	// is the join's last word on it.
	Unmatched
	// Expired: an element of an inner side that never matched and expired.
	Expired
	// Evicted: removed by the per-key size cap before it expired, whether
	// or not it had matched (its pairs were emitted; later ones are lost).
	Evicted
	// Late: arrived after a potential partner was cleaned up; not joined.
	Late
)

// String returns the fate's counter name.
func (f Fate) String() string {
	switch f {
	case Matched:
		return "matched"
	case Unmatched:
		return "unmatched"
	case Expired:
		return "expired"
	case Evicted:
		return "evicted"
	case Late:
		return "late"
	}
	return fmt.Sprintf("Fate(%d)", uint8(f))
}

// FateOf classifies an element leaving the buffer. Eviction wins over
// matching, so the evicted count is every element the size cap removed.
func (r Rules) FateOf(s Side, matched, evicted bool) Fate {
	switch {
	case evicted:
		return Evicted
	case matched:
		return Matched
	case r.Type.Outer(s):
		return Unmatched
	}
	return Expired
}
