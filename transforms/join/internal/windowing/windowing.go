// Package windowing holds what beamjoin's joins do with their inputs'
// windowing (SPEC §2.7): the checks that both inputs are windowed alike,
// the names of windowings in errors, and, for the joins that run in the
// global window (the event-time joins, and the late-counting path of
// Window and CoGroup), the move of both inputs into it, keeping one copy
// of an element of sliding windows, and the inputs' windowing given back
// to their outputs.
//
// It rests on the Beam Go SDK alone.
package windowing

import (
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window/trigger"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn5x0[beam.Window, beam.EventTime, beam.X, beam.Y, func(beam.X, beam.Y)](&firstCopyFn{})
	register.Emitter2[beam.X, beam.Y]()
}

// Inputs is the windowing that an event-time join's two inputs share.
type Inputs struct {
	strategy *window.WindowingStrategy
}

// Shared returns the windowing of left and right, the inputs of the
// event-time join op, or an error naming both if they differ: Beam cannot
// flatten differently windowed inputs, and the join's outputs could not be
// given both windowings back.
func Shared(op string, left, right beam.PCollection) (Inputs, error) {
	l, r := left.WindowingStrategy(), right.WindowingStrategy()
	if !sameWindowing(l, r) {
		return Inputs{}, fmt.Errorf("beamjoin: %s: the inputs are windowed differently: the left by %s, the right by %s; "+
			"window both alike (the join runs in event time across windows and gives its results the inputs' windowing)",
			op, describeWindowing(l), describeWindowing(r))
	}
	return Inputs{strategy: l}, nil
}

// SharedByAll returns the windowing of cols, the inputs of the event-time
// join op in order (the multi-way join's anchor first), or an error naming
// the first input windowed differently from the first, and both
// windowings.
func SharedByAll(op string, cols []beam.PCollection) (Inputs, error) {
	first := cols[0].WindowingStrategy()
	for i, col := range cols[1:] {
		if w := col.WindowingStrategy(); !sameWindowing(first, w) {
			return Inputs{}, fmt.Errorf("beamjoin: %s: the inputs are windowed differently: input 1 by %s, input %d by %s; "+
				"window all alike (the join runs in event time across windows and gives its results the inputs' windowing)",
				op, describeWindowing(first), i+2, describeWindowing(w))
		}
	}
	return Inputs{strategy: first}, nil
}

// global reports whether the inputs are in the global window, where the
// join runs anyway.
func (w Inputs) global() bool { return w.strategy.Fn.Kind == window.GlobalWindows }

// IntoGlobal moves col, one of the inputs, into the global window, keeping
// its timestamps, so that the join's state is per key only and a pair
// straddling a window boundary is found. Under sliding windows an element
// is in several windows, and a runner may by then have made it one element
// per window (Prism does between stages); the join keeps one of them
// (FirstCopy).
func (w Inputs) IntoGlobal(s beam.Scope, col beam.PCollection) beam.PCollection {
	if w.global() {
		return col
	}
	return beam.WindowInto(s, window.NewGlobalWindows(), FirstCopy(s, w.strategy.Fn, col))
}

// FirstCopy keeps one copy of each element of col, windowed by fn, if fn
// makes sliding windows that overlap (firstCopyFn, in scope firstCopy);
// col itself otherwise.
func FirstCopy(s beam.Scope, fn *window.Fn, col beam.PCollection) beam.PCollection {
	if fn.Kind != window.SlidingWindows || fn.Size <= fn.Period {
		return col
	}
	return beam.ParDo(s.Scope("firstCopy"), &firstCopyFn{Size: fn.Size.Milliseconds(), Period: fn.Period.Milliseconds()}, col)
}

// Restore gives col, an output of the join, the inputs' windowing: each
// record is assigned to windows by the inputs' window function from its own
// timestamp, with the inputs' trigger, and as allowed lateness the larger
// of the inputs' and the join's (lateness). The join takes an element up to
// its allowed lateness behind the watermark, and a record it makes then
// (a pair or, under EmitImmediate, an unmatched record; no timer holds
// for them) is up to that much behind the output watermark: with only the
// inputs' lateness, a downstream windowed GroupByKey would drop it.
// Records behind by no more than the join's lateness are kept by it.
func (w Inputs) Restore(s beam.Scope, col beam.PCollection, lateness time.Duration) beam.PCollection {
	if w.global() {
		// It inherited the inputs' global windowing through the Flatten,
		// whose one window ends at the end of time: no GroupByKey drops
		// a record of it as late, and a downstream WindowInto sets its
		// own allowed lateness.
		return col
	}
	ws := w.strategy
	var opts []beam.WindowIntoOption
	if ws.Trigger != nil {
		opts = append(opts, beam.Trigger(ws.Trigger))
	}
	if ws.AccumulationMode == window.Accumulating {
		opts = append(opts, beam.PanesAccumulate())
	}
	if l := max(time.Duration(ws.AllowedLateness)*time.Millisecond, lateness); l != 0 {
		opts = append(opts, beam.AllowedLateness(l))
	}
	return beam.WindowInto(s, ws.Fn, col, opts...)
}

// sameWindowing reports whether a and b window alike: the same window
// function, trigger, accumulation mode and allowed lateness.
func sameWindowing(a, b *window.WindowingStrategy) bool {
	return a.Fn.Equals(b.Fn) && TriggerName(a) == TriggerName(b) &&
		Accumulation(a) == Accumulation(b) && a.AllowedLateness == b.AllowedLateness
}

// CheckAlike reports inputs of op that are windowed differently, naming
// both windowings: CoGroupByKey groups both in one windowing.
func CheckAlike(op string, left, right beam.PCollection) error {
	lw, rw := left.WindowingStrategy(), right.WindowingStrategy()
	if !sameWindowing(lw, rw) {
		return fmt.Errorf("beamjoin: %s: the left input is windowed by %s and the right by %s: window both alike with beam.WindowInto, or pass join.WindowInto",
			op, describeWindowing(lw), describeWindowing(rw))
	}
	return nil
}

// describeWindowing writes ws as the calls that make it, leaving out what is
// Beam's default.
func describeWindowing(ws *window.WindowingStrategy) string {
	out := FnName(ws.Fn)
	if t := TriggerName(ws); t != "" {
		out += " with trigger " + t
	}
	if Accumulation(ws) == window.Accumulating {
		out += " accumulating panes"
	}
	if ws.AllowedLateness != 0 {
		out += fmt.Sprintf(" with allowed lateness %v", time.Duration(ws.AllowedLateness)*time.Millisecond)
	}
	return out
}

// TriggerName is ws's trigger, or "" for the default trigger.
func TriggerName(ws *window.WindowingStrategy) string {
	switch ws.Trigger.(type) {
	case nil, trigger.DefaultTrigger, *trigger.DefaultTrigger:
		return ""
	}
	return fmt.Sprint(ws.Trigger)
}

// Accumulation is ws's accumulation mode; unset means discarding.
func Accumulation(ws *window.WindowingStrategy) window.AccumulationMode {
	if ws.AccumulationMode == window.Accumulating {
		return window.Accumulating
	}
	return window.Discarding
}

// firstCopyFn keeps one copy of each element of a sliding-windowed
// PCollection: the copy in the earliest window that holds the element's
// timestamp. It observes the window, so the SDK calls it once per window
// of an element, whether or not the runner has split it into copies. An
// element in a window that does not hold its timestamp is not a copy made
// by window assignment, and is kept.
type firstCopyFn struct {
	Size, Period int64 // milliseconds
}

func (f *firstCopyFn) ProcessElement(w beam.Window, et beam.EventTime, k beam.X, v beam.Y, emit func(beam.X, beam.Y)) {
	if iw, ok := w.(window.IntervalWindow); ok && f.laterCopy(iw, et) {
		return
	}
	emit(k, v)
}

// laterCopy reports whether w holds et and so does the window of the grid
// before it: the element is then also in that earlier window.
func (f *firstCopyFn) laterCopy(w window.IntervalWindow, et beam.EventTime) bool {
	holds := w.Start <= et && et < w.End
	earlierEnd := w.Start - mtime.Time(f.Period) + mtime.Time(f.Size)
	return holds && et < earlierEnd
}

// FnName writes fn as the call that makes it.
func FnName(fn *window.Fn) string {
	switch fn.Kind {
	case window.GlobalWindows:
		return "window.NewGlobalWindows()"
	case window.FixedWindows:
		return fmt.Sprintf("window.NewFixedWindows(%v)", fn.Size)
	case window.SlidingWindows:
		return fmt.Sprintf("window.NewSlidingWindows(%v, %v)", fn.Period, fn.Size)
	case window.Sessions:
		return fmt.Sprintf("window.NewSessions(%v)", fn.Gap)
	}
	return fn.String()
}
