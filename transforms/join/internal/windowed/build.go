package windowed

// This file holds the late-counting path's composite: Build, which tags
// both inputs and runs the stateful DoFn (fn.go) on them in the global
// window, and Step.IntoWindows, which puts the records package join makes
// of its panes back into windows.

import (
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/internal/panes"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/windowing"
)

func init() {
	register.Function4x0(ownWindowFn)
	register.Emitter1[beam.Y]()
}

// Config is the configuration of a window join or a cogroup, which
// package join makes of its options.
type Config struct {
	// Window is WindowInto's window function; nil: the inputs' own
	// windowing.
	Window *window.Fn
	// Lateness is AllowedLateness's, if LatenessSet.
	Lateness    time.Duration
	LatenessSet bool
	// Join: a window join of join type Type, whose elements' fates are
	// matched, unmatched or expired, and whose panes carry every value of
	// their window; otherwise a cogroup, whose fate is grouped.
	Join bool
	Type match.Type
	// Fates makes the late-counting path emit a fate per element
	// (TrackFates).
	Fates bool
}

// Step is the late-counting path's stateful step of a window join or
// cogroup, as Build added it: its inputs' value coders, and its outputs,
// in the global window: panes (KV<K, PaneRecord>, each at its window's max
// timestamp), late elements (KV<K, MissedRecord>) and fates (KV<K,
// raw.FateRecord>).
type Step struct {
	Coders             [2]coders.Element
	Panes, Late, Fates beam.PCollection

	op      string
	windows windows
}

// Build adds the late-counting path's stateful DoFn of the window join or
// cogroup op to s: both inputs tagged with their side, in the global
// window, keyed.
func Build(s beam.Scope, op string, cfg Config, left, right beam.PCollection) (*Step, error) {
	wd := &Step{op: op}
	var err error
	if wd.windows, err = resolveWindowing(op, cfg, left, right); err != nil {
		return nil, err
	}
	var tagged [2]beam.PCollection
	for side, col := range [2]beam.PCollection{match.Left: left, match.Right: right} {
		if wd.Coders[side], err = coders.KVValue(col); err != nil {
			return nil, fmt.Errorf("beamjoin: %s: %w", op, err)
		}
		if tagged[side], err = raw.Encode(s.Scope(raw.SideName[side]), match.Side(side), wd.Coders[side], col); err != nil {
			return nil, fmt.Errorf("beamjoin: %s: %w", op, err)
		}
	}
	// The inputs are in their own windows; the DoFn keeps its own, so that
	// it can see an element that arrives after its window has gone.
	for side := range tagged {
		fn := tagged[side].WindowingStrategy().Fn
		if fn.Kind == window.GlobalWindows {
			continue
		}
		// The runner may have made an element one copy per sliding window;
		// the DoFn assigns windows itself and wants one.
		tagged[side] = windowing.FirstCopy(s, fn, tagged[side])
		if tagged[side], err = beam.TryWindowInto(s.Scope("global"), window.NewGlobalWindows(), tagged[side]); err != nil {
			return nil, fmt.Errorf("beamjoin: %s: %w", op, err)
		}
	}
	all, err := beam.TryFlatten(s, tagged[match.Left], tagged[match.Right])
	if err != nil {
		return nil, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	fn := &windowedFn{
		Rules:  wd.windows.rules(),
		Join:   cfg.Join,
		Type:   cfg.Type,
		Keep:   cfg.Join || wd.windows.accumulate,
		Fates:  cfg.Fates,
		Buffer: state.MakeBagState[[]byte]("buffer"),
		Fire:   timers.InEventTime("fire"),
	}
	outs, err := beam.TryParDo(s, fn, all)
	if err != nil {
		return nil, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	wd.Panes, wd.Late, wd.Fates = outs[0], outs[1], outs[2]
	return wd, nil
}

// Records turns the panes into the author's records of type out with fn,
// package join's DoFn whose output is the universal type typeVar, and
// places them back into windows, in scope s.
func (wd *Step) Records(s beam.Scope, fn any, out, typeVar reflect.Type) (beam.PCollection, error) {
	records, err := beam.TryParDo(s, fn, wd.Panes, beam.TypeDefinition{Var: typeVar, T: out})
	if err != nil {
		return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", wd.op, err)
	}
	if ofn := wd.windows.outputFn(); ofn != nil {
		// The join's allowed lateness goes with the records, so that a
		// downstream GroupByKey keeps late panes, as after Beam's own.
		if records[0], err = beam.TryWindowInto(s.Scope("rewindow"), ofn, records[0], beam.AllowedLateness(wd.windows.lateness)); err != nil {
			return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", wd.op, err)
		}
		if ofn.Kind == window.SlidingWindows {
			own, err := beam.TryParDo(s.Scope("ownWindow"), ownWindowFn, records[0])
			if err != nil {
				return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", wd.op, err)
			}
			records[0] = own[0]
		}
	}
	return records[0], nil
}

// windows is how the late-counting path windows its inputs: the
// window function, the allowed lateness and whether later panes of a
// window repeat its earlier values (beam.PanesAccumulate).
type windows struct {
	fn         *window.Fn
	lateness   time.Duration
	accumulate bool
}

// resolveWindowing returns the windowing of the late-counting path of a
// window join or cogroup (named op): WindowInto's window function if
// given, else the inputs' own windowing, which must then be alike on both
// sides and use the default trigger, the only one the stateful DoFn
// implements. AllowedLateness, if given, overrides the inputs' lateness.
func resolveWindowing(op string, cfg Config, left, right beam.PCollection) (windows, error) {
	w := windows{fn: cfg.Window}
	if w.fn == nil {
		if err := windowing.CheckAlike(op, left, right); err != nil {
			return w, err
		}
		lw := left.WindowingStrategy()
		if t := windowing.TriggerName(lw); t != "" {
			return w, fmt.Errorf("beamjoin: %s: the inputs' trigger %s is not supported with ReportLate or TrackFates: the late-counting path fires a window once when the watermark passes its end, and again for elements that arrive later within the allowed lateness (join.AllowedLateness); without ReportLate and TrackFates, any trigger works",
				op, t)
		}
		w.fn = lw.Fn
		w.lateness = time.Duration(lw.AllowedLateness) * time.Millisecond
		w.accumulate = windowing.Accumulation(lw) == window.Accumulating
	}
	if cfg.LatenessSet {
		w.lateness = cfg.Lateness
	}
	return w, nil
}

// rules is the windowing in the terms of package panes.
func (w windows) rules() panes.Rules {
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
// its timestamp (the window's max timestamp), back into windows: the
// window itself for fixed and global windows; for sliding windows, every
// sliding window that holds the timestamp, of which ownWindowFn keeps the
// record's own (the one the timestamp is the max timestamp of); for
// sessions, a session of the gap starting at the timestamp, which merges
// downstream into one per joined session but does not have its bounds
// (no window function of the Go SDK can give it those). nil means the
// records stay where they are (the global window).
func (w windows) outputFn() *window.Fn {
	switch w.fn.Kind {
	case window.FixedWindows, window.Sessions, window.SlidingWindows:
		return w.fn
	}
	return nil
}

// ownWindowFn keeps a record of a sliding window join or cogroup only in
// the window whose max timestamp is its timestamp: the window it was made
// in. Assigned to sliding windows by its timestamp, it is also in the
// later windows that overlap that one.
func ownWindowFn(w beam.Window, et beam.EventTime, v beam.Y, emit func(beam.Y)) {
	if w.MaxTimestamp() == et {
		emit(v)
	}
}
