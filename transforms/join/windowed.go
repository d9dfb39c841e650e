package join

// This file holds what Window and CoGroup share: the composite that
// chooses their path, the default path on Beam's CoGroupByKey, and the
// late-counting path's composite, which runs their stateful DoFn
// (windowed_fn.go) and puts its records back into windows; also their
// late-element record.

import (
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/panes"
	"github.com/beamjoin/beamjoin/transforms/join/internal/windowed"
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

// windowedRoute is what Window and CoGroup each bring to the composite
// they share, buildWindowedRoute: their name, options and record type, and
// the DoFns that make their records on each path.
type windowedRoute struct {
	op      string
	allowed setMask
	records reflect.Type // WindowResult[K,L,R] or Group[K,L,R]
	join    bool         // a window join, whose elements' fates are matched, unmatched or expired
	// stamp makes the grouped path carry each value with its event time
	// (stampFn), which WindowResult reports and Group does not.
	stamp bool
	// grouped is the DoFn that makes the records of one CoGroupByKey
	// group, emitting the universal type groupedVar; panes the DoFn that
	// makes the records of the late-counting path's panes, emitting
	// panesVar.
	grouped              func(cfg config, values sideValues) any
	panes                func(cfg config, values sideValues) any
	groupedVar, panesVar reflect.Type
}

// buildWindowedRoute adds Window or CoGroup (route) to the pipeline. By
// default it groups with Beam's CoGroupByKey, in the windows, triggers and
// allowed lateness of the inputs as the runner applies them; with
// ReportLate or TrackFates it runs the late-counting stateful DoFn
// (package internal/windowed) instead.
func buildWindowedRoute[K, L, R any](s beam.Scope, route windowedRoute, opts []Option, left, right beam.PCollection) (Outputs, error) {
	cfg, err := windowedConfig(route.op, route.allowed, opts)
	if err != nil {
		return Outputs{}, err
	}
	if err := checkInputs[K, L, R](route.op, left, right); err != nil {
		return Outputs{}, err
	}
	s = s.Scope(route.op)
	late, fate := reflect.TypeFor[WindowLateElement[K, L, R]](), reflect.TypeFor[Fate[K]]()
	if err := checkRegistered[K, L, R](route.op, cfg.windowedTypes(route.records, late, fate)...); err != nil {
		return Outputs{}, err
	}
	if !cfg.lateCounting() {
		records, err := groupedRecords(s, route, cfg, left, right)
		return Outputs{Records: records}, err
	}
	step, err := windowed.Build(s, route.op, cfg.windowed(route.join), left, right)
	if err != nil {
		return Outputs{}, err
	}
	var outs Outputs
	values := sideValues{Left: step.Coders[Left], Right: step.Coders[Right]}
	if outs.Records, err = step.Records(s.Scope("records"), route.panes(cfg, values), route.records, route.panesVar); err != nil {
		return Outputs{}, err
	}
	return windowedExtras[K, L, R](s, route.op, step, cfg, outs)
}

// mustBuild returns out, or panics with err: Window and CoGroup are their
// Try variants that panic on misuse.
func mustBuild(out Outputs, err error) Outputs {
	if err != nil {
		panic(err)
	}
	return out
}

// lateCounting reports whether Window or CoGroup runs the late-counting
// path: ReportLate or TrackFates asks for what only it can see.
func (c config) lateCounting() bool { return c.reportLate || c.trackFates }

// groupedRecords is the default path of Window and CoGroup: both inputs
// windowed as the caller or the options say, grouped by Beam's
// CoGroupByKey, and each group turned into records by route.grouped.
func groupedRecords(s beam.Scope, route windowedRoute, cfg config, left, right beam.PCollection) (beam.PCollection, error) {
	grouped, values, err := windowed.Group(s, route.op, cfg.windowed(route.join), left, right, route.stamp)
	if err != nil {
		return beam.PCollection{}, err
	}
	records, err := beam.TryParDo(s.Scope("records"), route.grouped(cfg, sideValues{Left: values[Left], Right: values[Right]}), grouped,
		beam.TypeDefinition{Var: route.groupedVar, T: route.records})
	if err != nil {
		return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", route.op, err)
	}
	return records[0], nil
}

// windowed is the config in the windowed engine's terms, for a window join
// (join) or a cogroup.
func (c config) windowed(join bool) windowed.Config {
	return windowed.Config{Window: c.window, Lateness: c.lateness, LatenessSet: c.set&setLateness != 0,
		Join: join, Type: c.typ.core(), Fates: c.trackFates}
}

// sideValues decodes the values of the two inputs of a window join or a
// cogroup, each with its input's coder: the DoFns that make their records
// embed it.
type sideValues struct {
	Left, Right coders.Element
}

func (c *sideValues) setup() error {
	if err := c.Left.Setup(); err != nil {
		return err
	}
	return c.Right.Setup()
}

// joinValue is a decoded value, its event time, and whether it is new in
// its pane.
type joinValue struct {
	v     any
	time  time.Time
	isNew bool
}

// decode decodes b, a value of side s of the route named op.
func (c *sideValues) decode(op string, s Side, b []byte) (any, error) {
	coder := &c.Left
	if s == Right {
		coder = &c.Right
	}
	v, err := coder.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("beamjoin: %s: decoding a %s value: %w", op, s, err)
	}
	return v, nil
}

// unstampAll appends to vs the values that next yields, stamped values of
// side s (see windowed.Unstamp), decoded, all new.
func (c *sideValues) unstampAll(op string, s Side, next func(*[]byte) bool, vs []joinValue) ([]joinValue, error) {
	var stamped []byte
	for next(&stamped) {
		ms, value, ok := windowed.Unstamp(stamped)
		if !ok {
			return vs, fmt.Errorf("beamjoin: %s: a grouped %s value of %d bytes does not start with its time", op, s, len(stamped))
		}
		v, err := c.decode(op, s, value)
		if err != nil {
			return vs, err
		}
		vs = append(vs, joinValue{v: v, time: time.UnixMilli(ms).UTC(), isNew: true})
	}
	return vs, nil
}

// decodePane decodes the values of a pane of the late-counting path, by
// side, each marked new or not as the pane says.
func (c *sideValues) decodePane(op string, p windowed.PaneRecord) ([2][]joinValue, error) {
	var sides [2][]joinValue
	entries, isNew, err := panes.DecodePane(p.Entries)
	if err != nil {
		return sides, err
	}
	for i, e := range entries {
		v, err := c.decode(op, sideOf(e.Side), e.Value)
		if err != nil {
			return sides, err
		}
		sides[e.Side] = append(sides[e.Side], joinValue{v: v, time: time.UnixMilli(e.Time).UTC(), isNew: isNew[i]})
	}
	return sides, nil
}

// windowBounds are w's bounds, [start, end): an interval window's own, or,
// for the global window, Beam's minimum timestamp and just past the end of
// the global window, as the late-counting path writes them.
func windowBounds(w beam.Window) (start, end time.Time) {
	if iw, ok := w.(window.IntervalWindow); ok {
		return iw.Start.ToTime().UTC(), iw.End.ToTime().UTC()
	}
	return mtime.MinTimestamp.ToTime().UTC(), mtime.EndOfGlobalWindowTime.ToTime().Add(time.Millisecond).UTC()
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
func windowedExtras[K, L, R any](s beam.Scope, op string, step *windowed.Step, cfg config, outs Outputs) (Outputs, error) {
	if cfg.reportLate {
		t := reflect.TypeFor[WindowLateElement[K, L, R]]()
		late, err := beam.TryParDo(s.Scope("late"), &missedFn{Out: beam.EncodedType{T: t}, Left: step.Coders[Left], Right: step.Coders[Right]}, step.Late,
			beam.TypeDefinition{Var: beam.YType, T: t})
		if err != nil {
			return Outputs{}, fmt.Errorf("beamjoin: %s: %w", op, err)
		}
		outs.Late = late[0]
	}
	if cfg.trackFates {
		var err error
		if outs.Fates, err = decodeFates(s, op, step.Fates, reflect.TypeFor[Fate[K]]()); err != nil {
			return Outputs{}, err
		}
	}
	return outs, nil
}
