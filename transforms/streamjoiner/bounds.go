package streamjoiner

// This file holds Bounds, the time range in which elements match.

import (
	"fmt"
	"time"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// Bounds is the time range in which a right element matches a left element
// with the same key: the right element's timestamp may be up to Before
// earlier and up to After later than the left element's, both ends
// inclusive. The left element is always the reference, whichever arrives
// first, so which pairs are produced never depends on arrival order. (It is
// join.Between(-Before, After) of the Beam interval join.)
//
// Make one with Of, OfSize, AfterOnly or BeforeOnly; the zero Bounds is no
// range at all, and New rejects it.
type Bounds struct {
	before, after time.Duration
	set           bool
}

// Of returns bounds in which a right element matches a left element if it
// is at most before earlier and at most after later: in match terms the
// bounds [-before, +after]. A negative end moves the range past the left
// element: Of(10*time.Second, -2*time.Second) matches right elements 2 to 10
// seconds before it.
func Of(before, after time.Duration) Bounds {
	return Bounds{before: before, after: after, set: true}
}

// OfSize returns the symmetric bounds Of(size, size).
func OfSize(size time.Duration) Bounds { return Of(size, size) }

// AfterOnly returns Of(0, after): right elements at or after the left one.
func AfterOnly(after time.Duration) Bounds { return Of(0, after) }

// BeforeOnly returns Of(before, 0): right elements at or before the left one.
func BeforeOnly(before time.Duration) Bounds { return Of(before, 0) }

// Before returns how much earlier than a left element a right element may be.
func (b Bounds) Before() time.Duration { return b.before }

// After returns how much later than a left element a right element may be.
func (b Bounds) After() time.Duration { return b.after }

// core returns the bounds in the matching core's terms, on
// ts(right) - ts(left): [-Before, +After], both ends inclusive.
func (b Bounds) core() match.Bounds {
	return match.Between(-b.before, b.after)
}

// Contains reports whether an element at candidateTs falls in the bounds
// around one at referenceTs, both in milliseconds since the Unix epoch. In
// a join the reference is the left element and the candidate the right one.
func (b Bounds) Contains(referenceTs, candidateTs int64) bool {
	return match.Rules{Bounds: b.core()}.Matches(referenceTs, candidateTs)
}

// Span returns the shortest state retention that never drops a buffered
// element a newly arrived element could still match: Before+After, or the
// farther end alone if the other is negative.
func (b Bounds) Span() time.Duration {
	return max(b.before+b.after, b.before, b.after)
}

// String describes the bounds, e.g. "Bounds(before=5s, after=10s)".
func (b Bounds) String() string {
	if !b.set {
		return "Bounds(unset)"
	}
	return fmt.Sprintf("Bounds(before=%v, after=%v)", b.before, b.after)
}

// validate reports bounds that are unset, match nothing, or are finer than
// the millisecond precision of timestamps.
func (b Bounds) validate() error {
	if !b.set {
		return fmt.Errorf("beamjoin: bounds are missing; make them with Of, OfSize, AfterOnly or BeforeOnly")
	}
	if b.before%time.Millisecond != 0 || b.after%time.Millisecond != 0 {
		return fmt.Errorf("beamjoin: %v must be whole milliseconds, the precision of timestamps", b)
	}
	if b.before+b.after < 0 {
		return fmt.Errorf("beamjoin: %v matches nothing: before + after is negative", b)
	}
	return nil
}
