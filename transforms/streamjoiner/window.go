package streamjoiner

import (
	"fmt"
	"time"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// JoinWindow is the time range in which a right element matches a left
// element with the same key: the right element's timestamp may be up to
// Before earlier and up to After later than the left element's, both ends
// inclusive. The left element is always the reference, whichever arrives
// first, so which pairs are produced never depends on arrival order.
//
// Make one with Of, OfSize, AfterOnly or BeforeOnly; the zero JoinWindow is
// no window at all, and New rejects it.
type JoinWindow struct {
	before, after time.Duration
	set           bool
}

// Of returns a window in which a right element matches a left element if it
// is at most before earlier and at most after later: in match terms the
// bounds [-before, +after]. A negative end moves the window past the left
// element: Of(10*time.Second, -2*time.Second) matches right elements 2 to 10
// seconds before it.
func Of(before, after time.Duration) JoinWindow {
	return JoinWindow{before: before, after: after, set: true}
}

// OfSize returns the symmetric window Of(size, size).
func OfSize(size time.Duration) JoinWindow { return Of(size, size) }

// AfterOnly returns Of(0, after): right elements at or after the left one.
func AfterOnly(after time.Duration) JoinWindow { return Of(0, after) }

// BeforeOnly returns Of(before, 0): right elements at or before the left one.
func BeforeOnly(before time.Duration) JoinWindow { return Of(before, 0) }

// Before returns how much earlier than a left element a right element may be.
func (w JoinWindow) Before() time.Duration { return w.before }

// After returns how much later than a left element a right element may be.
func (w JoinWindow) After() time.Duration { return w.after }

// Bounds returns the window as the matching core's bounds on
// ts(right) - ts(left): [-Before, +After], both ends inclusive.
func (w JoinWindow) Bounds() match.Bounds {
	return match.Between(-w.before, w.after)
}

// Contains reports whether an element at candidateTs falls in the window
// around one at referenceTs, both in milliseconds since the Unix epoch. In
// a join the reference is the left element and the candidate the right one.
func (w JoinWindow) Contains(referenceTs, candidateTs int64) bool {
	return match.Rules{Bounds: w.Bounds()}.Matches(referenceTs, candidateTs)
}

// Span returns the shortest state retention that never drops a buffered
// element a newly arrived element could still match: Before+After, or the
// farther end alone if the other is negative.
func (w JoinWindow) Span() time.Duration {
	return max(w.before+w.after, w.before, w.after)
}

// String describes the window, e.g. "JoinWindow(before=5s, after=10s)".
func (w JoinWindow) String() string {
	if !w.set {
		return "JoinWindow(unset)"
	}
	return fmt.Sprintf("JoinWindow(before=%v, after=%v)", w.before, w.after)
}

// validate reports a window that is unset, matches nothing, or is finer
// than the millisecond precision of timestamps.
func (w JoinWindow) validate() error {
	if !w.set {
		return fmt.Errorf("beamjoin: join window is missing; make one with Of, OfSize, AfterOnly or BeforeOnly")
	}
	if w.before%time.Millisecond != 0 || w.after%time.Millisecond != 0 {
		return fmt.Errorf("beamjoin: %v must be whole milliseconds, the precision of timestamps", w)
	}
	if w.before+w.after < 0 {
		return fmt.Errorf("beamjoin: %v matches nothing: before + after is negative", w)
	}
	return nil
}
