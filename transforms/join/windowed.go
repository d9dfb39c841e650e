package join

// This file holds what Window and CoGroup share: their late-element
// record, how their windowing is resolved from the options and the
// inputs, and the composite that runs their stateful DoFn (windowed_fn.go)
// and puts its records back into windows.

import (
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window/trigger"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/panes"
)

// WindowLateElement is an element that Window or CoGroup judged late for
// one of its windows: it arrived after the window had expired (its end
// plus the allowed lateness had passed), so it is in no pane of that
// window. Exactly one of Left and Right is set, the one named by Side;
// Time is its event time, also its element timestamp. WindowStart and
// WindowEnd are the window it missed, [WindowStart, WindowEnd); with
// sliding windows an element can miss some of its windows and still be in
// the others.
type WindowLateElement[K, L, R any] struct {
	Side        Side
	Key         K
	Time        time.Time
	Left        *L
	Right       *R
	WindowStart time.Time
	WindowEnd   time.Time
}

// windowing is how a window join or cogroup windows its inputs: the
// window function, the allowed lateness and whether later panes of a
// window repeat its earlier values (beam.PanesAccumulate).
type windowing struct {
	fn         *window.Fn
	lateness   time.Duration
	accumulate bool
}

// resolveWindowing returns the windowing of a window join or cogroup
// (named op): WindowInto's window function if given, else the inputs' own
// windowing, which must then be alike on both sides and use the default
// trigger. AllowedLateness, if given, overrides the inputs' lateness.
func resolveWindowing(op string, cfg config, left, right beam.PCollection) (windowing, error) {
	w := windowing{fn: cfg.window}
	if w.fn == nil {
		lw, rw := left.WindowingStrategy(), right.WindowingStrategy()
		if !lw.Equals(rw) {
			return w, fmt.Errorf("beamjoin: %s: the left input is windowed by %s and the right by %s: window both alike with beam.WindowInto, or pass join.WindowInto",
				op, windowFnName(lw.Fn), windowFnName(rw.Fn))
		}
		if lw.AllowedLateness != rw.AllowedLateness || lw.AccumulationMode != rw.AccumulationMode {
			return w, fmt.Errorf("beamjoin: %s: the inputs' windowing differs in allowed lateness (left %v, right %v) or accumulation mode (left %s, right %s): window both alike, or pass join.WindowInto",
				op, time.Duration(lw.AllowedLateness)*time.Millisecond, time.Duration(rw.AllowedLateness)*time.Millisecond, lw.AccumulationMode, rw.AccumulationMode)
		}
		for _, ws := range []*window.WindowingStrategy{lw, rw} {
			switch ws.Trigger.(type) {
			case trigger.DefaultTrigger, *trigger.DefaultTrigger, nil:
			default:
				return w, fmt.Errorf("beamjoin: %s: the inputs' trigger %v is not supported: a window fires once when the watermark passes its end, and again for elements that arrive later within the allowed lateness (join.AllowedLateness)",
					op, ws.Trigger)
			}
		}
		w.fn = lw.Fn
		w.lateness = time.Duration(lw.AllowedLateness) * time.Millisecond
		w.accumulate = lw.AccumulationMode == window.Accumulating
	}
	if cfg.set&setLateness != 0 {
		w.lateness = cfg.lateness
	}
	return w, nil
}

// rules is the windowing in the terms of package panes.
func (w windowing) rules() panes.Rules {
	wf := panes.Windowing{}
	switch w.fn.Kind {
	case window.FixedWindows:
		wf = panes.Windowing{Kind: panes.Fixed, Size: w.fn.Size.Milliseconds()}
	case window.SlidingWindows:
		wf = panes.Windowing{Kind: panes.Sliding, Size: w.fn.Size.Milliseconds(), Period: w.fn.Period.Milliseconds()}
	case window.Sessions:
		wf = panes.Windowing{Kind: panes.Sessions, Gap: w.fn.Gap.Milliseconds()}
	}
	return panes.Rules{Windowing: wf, Lateness: w.lateness.Milliseconds()}
}

// outputFn is the window function that places each record of a pane, by
// its timestamp (the window's max timestamp), in a window that holds the
// records of that window only: the window itself for fixed and global
// windows; for sliding windows, which overlap, a fixed window of the
// period; for sessions, a session of the gap, which merges downstream
// into one per joined session. nil means the records stay where they are
// (the global window).
func (w windowing) outputFn() *window.Fn {
	switch w.fn.Kind {
	case window.FixedWindows, window.Sessions:
		return w.fn
	case window.SlidingWindows:
		return window.NewFixedWindows(w.fn.Period)
	}
	return nil
}

// windowed is a window join or cogroup being built: its inputs' value
// coders and the outputs of its stateful DoFn.
type windowed struct {
	op          string
	coders      [2]coders.Element
	windowing   windowing
	panes       beam.PCollection // KV<K, paneRecord>, in the global window
	late, fates beam.PCollection // KV<K, missedRecord>, KV<K, fateRecord>
}

// buildWindowed adds the stateful DoFn of a window join (join true, of
// join type typ) or a cogroup to the pipeline: both inputs tagged with
// their side, in the global window, keyed. Its panes carry every value of
// their window when keep is set, else only the new ones.
func buildWindowed(s beam.Scope, op string, cfg config, left, right beam.PCollection, join, keep, fates bool) (*windowed, error) {
	wd := &windowed{op: op}
	var err error
	if wd.windowing, err = resolveWindowing(op, cfg, left, right); err != nil {
		return nil, err
	}
	var tagged [2]beam.PCollection
	for side, col := range [2]beam.PCollection{Left: left, Right: right} {
		if wd.coders[side], err = coders.KVValue(col); err != nil {
			return nil, fmt.Errorf("beamjoin: %s: %w", op, err)
		}
		out, err := beam.TryParDo(s.Scope(Side(side).String()), &encodeFn{Side: Side(side), Value: wd.coders[side]}, col)
		if err != nil {
			return nil, fmt.Errorf("beamjoin: %s: %w", op, err)
		}
		tagged[side] = out[0]
	}
	// The inputs are in their own windows; the DoFn keeps its own, so that
	// it can see an element that arrives after its window has gone.
	for side := range tagged {
		if tagged[side].WindowingStrategy().Fn.Kind == window.GlobalWindows {
			continue
		}
		if tagged[side], err = beam.TryWindowInto(s.Scope("global"), window.NewGlobalWindows(), tagged[side]); err != nil {
			return nil, fmt.Errorf("beamjoin: %s: %w", op, err)
		}
	}
	all, err := beam.TryFlatten(s, tagged[Left], tagged[Right])
	if err != nil {
		return nil, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	fn := &windowedFn{
		Rules:  wd.windowing.rules(),
		Join:   join,
		Type:   cfg.typ.core(),
		Keep:   keep || wd.windowing.accumulate,
		Fates:  fates,
		Buffer: state.MakeBagState[[]byte]("buffer"),
		Fire:   timers.InEventTime("fire"),
	}
	outs, err := beam.TryParDo(s, fn, all)
	if err != nil {
		return nil, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	wd.panes, wd.late, wd.fates = outs[0], outs[1], outs[2]
	return wd, nil
}

// records turns the panes into the author's records of type out with fn,
// a DoFn whose output is the universal type typeVar, and places them back
// into windows.
func (wd *windowed) records(s beam.Scope, fn any, out, typeVar reflect.Type) (beam.PCollection, error) {
	records, err := beam.TryParDo(s, fn, wd.panes, beam.TypeDefinition{Var: typeVar, T: out})
	if err != nil {
		return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", wd.op, err)
	}
	if ofn := wd.windowing.outputFn(); ofn != nil {
		// The join's allowed lateness goes with the records, so that a
		// downstream GroupByKey keeps late panes, as after Beam's own.
		if records[0], err = beam.TryWindowInto(s.Scope("rewindow"), ofn, records[0], beam.AllowedLateness(wd.windowing.lateness)); err != nil {
			return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", wd.op, err)
		}
	}
	return records[0], nil
}

// windowedTypes are the generic types a window join or cogroup whose
// records are of type records emits, given the late and fate types: the
// records, and the late elements and fates if asked for.
func (c config) windowedTypes(records, late, fate reflect.Type) []reflect.Type {
	types := []reflect.Type{records}
	if c.reportLate {
		types = append(types, late)
	}
	if c.trackFates {
		types = append(types, fate)
	}
	return types
}

// windowedExtras adds to outs the outputs that ReportLate and TrackFates
// ask for: the late output decoded into WindowLateElement[K,L,R], and the
// fate output into Fate[K].
func windowedExtras[K, L, R any](s beam.Scope, wd *windowed, cfg config, outs Outputs) (Outputs, error) {
	if cfg.reportLate {
		t := reflect.TypeFor[WindowLateElement[K, L, R]]()
		late, err := beam.TryParDo(s.Scope("late"), &missedFn{Out: beam.EncodedType{T: t}, Left: wd.coders[Left], Right: wd.coders[Right]}, wd.late,
			beam.TypeDefinition{Var: beam.YType, T: t})
		if err != nil {
			return Outputs{}, fmt.Errorf("beamjoin: %s: %w", wd.op, err)
		}
		outs.Late = late[0]
	}
	if cfg.trackFates {
		t := reflect.TypeFor[Fate[K]]()
		fates, err := beam.TryParDo(s.Scope("fates"), &fateFn{Out: beam.EncodedType{T: t}}, wd.fates, beam.TypeDefinition{Var: beam.YType, T: t})
		if err != nil {
			return Outputs{}, fmt.Errorf("beamjoin: %s: %w", wd.op, err)
		}
		outs.Fates = fates[0]
	}
	return outs, nil
}
