package join

// This file holds the options that say what a join computes: the join
// types and emission modes (see vocabulary.go), the bounds, the allowed
// lateness and the windowing. The tuning options are in tuning.go; how
// options are combined and checked is in config.go.

import (
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
)

// Option configures a join. Options are values: join types (Inner,
// LeftOuter, …), emission modes (EmitImmediate, …) and the results of
// functions such as Between and LowerExclusive. They are validated once,
// when the transform is added to the pipeline (or by Route.Check); Try
// variants return the error, the others panic with it.
type Option interface {
	apply(*config)
}

// optionFunc is an Option made by one of this package's functions.
type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

func (t Type) apply(c *config) {
	c.given(setType, typeOptionNames[min(int(t), len(typeOptionNames)-1)])
	c.typ = t
	c.set |= setType
}

func (e Emit) apply(c *config) {
	c.given(setEmit, emitOptionNames[min(int(e), len(emitOptionNames)-1)])
	c.emit = e
	c.set |= setEmit
}

// The options' names as a caller writes them, for the error that names two
// contradicting options; an unknown value is named by its kind.
var (
	typeOptionNames = []string{Inner: "Inner", LeftOuter: "LeftOuter", RightOuter: "RightOuter", FullOuter: "FullOuter", FullOuter + 1: "a join type"}
	emitOptionNames = []string{EmitImmediate: "EmitImmediate", EmitFinal: "EmitFinal", EmitRetract: "EmitRetract", EmitRetract + 1: "an emission mode"}
)

// optionCall is an option that sets a value only one option may set, as
// the caller wrote it.
type optionCall struct {
	bit  setMask
	call string
}

// given records that the option call set what bit stands for. An earlier
// option that set it otherwise contradicts it: the first such pair is
// kept, and the config is refused with both named (newConfig). The same
// option given twice is no contradiction.
func (c *config) given(bit setMask, call string) {
	for _, g := range c.calls {
		if g.bit == bit && g.call != call && c.contradiction[0] == "" {
			c.contradiction = [2]string{g.call, call}
		}
	}
	c.calls = append(c.calls, optionCall{bit, call})
}

// Between sets the interval join's bounds: a left element l and a right
// element r with the same key match iff lower <= ts(r) - ts(l) <= upper.
// Both ends are inclusive; add LowerExclusive or UpperExclusive to exclude
// them. Flink's intervalJoin().between(lower, upper) is the same pair.
func Between(lower, upper time.Duration) Option {
	return optionFunc(func(c *config) {
		c.given(setBounds, fmt.Sprintf("Between(%v, %v)", lower, upper))
		c.bounds.Lower, c.bounds.Upper = lower, upper
		c.set |= setBounds
	})
}

// LowerExclusive makes the interval join's lower bound exclusive:
// ts(r) - ts(l) > lower.
func LowerExclusive() Option {
	return optionFunc(func(c *config) { c.bounds.LowerExclusive = true; c.set |= setLowerExclusive })
}

// UpperExclusive makes the interval join's upper bound exclusive:
// ts(r) - ts(l) < upper.
func UpperExclusive() Option {
	return optionFunc(func(c *config) { c.bounds.UpperExclusive = true; c.set |= setUpperExclusive })
}

// AllowedLateness keeps the interval join's buffered elements d longer than
// the bounds need, so that elements up to d behind the watermark still join.
// For Window and CoGroup it keeps each window's values d after the window
// fired: an element that arrives in that time adds a late pane to its
// window (see Window), and only one that arrives later is late.
func AllowedLateness(d time.Duration) Option {
	return optionFunc(func(c *config) {
		c.given(setLateness, fmt.Sprintf("AllowedLateness(%v)", d))
		c.lateness = d
		c.set |= setLateness
	})
}

// WindowInto windows both inputs of CoGroup or Window with fn before they are
// grouped. Without it the inputs' own windowing is used, as set by the
// caller with beam.WindowInto.
func WindowInto(fn *window.Fn) Option {
	return optionFunc(func(c *config) { c.window = fn; c.set |= setWindow })
}

// ReportLate makes Window and CoGroup find and report the elements that
// arrive too late for their windows, in Outputs.Late as
// WindowLateElement[K,L,R] records, one per window an element missed, and
// counted per side. Beam's GroupByKey drops such elements where no DoFn
// sees them; with ReportLate the join keeps each key's windows in state
// of its own instead (see Window for what that costs).
func ReportLate() Option {
	return optionFunc(func(c *config) { c.reportLate = true; c.set |= setReportLate })
}

// TrackFates makes a join return, in Outputs.Fates, exactly one
// Fate[K] record for every input element: what finally became of it. Per
// side the fates add up to the elements in, which ordinary Beam combines
// can count exactly, where Beam's counters may be approximate (attempted
// metrics, retried bundles). Window and CoGroup track fates on the path
// that ReportLate selects. Interval, on either path, gives each element
// OutcomeMatched, OutcomeUnmatched, OutcomeExpired, OutcomeEvicted or
// OutcomeLate when it leaves the join (as its fate counter counts it); the
// fates stay in the global window, timestamped at their elements' times.
// It costs one more output record per element, nothing in state.
func TrackFates() Option {
	return optionFunc(func(c *config) { c.trackFates = true; c.set |= setTrackFates })
}
