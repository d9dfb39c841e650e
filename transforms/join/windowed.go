package join

// This file holds what Window and CoGroup share: the composite that
// chooses their path, the default path on Beam's CoGroupByKey, and the
// late-counting path's composite, which runs their stateful DoFn
// (windowed_fn.go) and puts its records back into windows; also their
// late-element record.

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
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
	register.DoFn4x1[beam.EventTime, beam.X, beam.Y, func(beam.X, []byte), error](&stampFn{})
	register.Emitter2[beam.X, []byte]()
	register.Iter1[[]byte]()
	register.Function4x0(ownWindowFn)
	register.Emitter1[beam.Y]()
}

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
// (windowed_fn.go) instead.
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
	wd, err := buildWindowed(s, route.op, cfg, left, right, route.join, route.join, cfg.trackFates)
	if err != nil {
		return Outputs{}, err
	}
	var outs Outputs
	values := sideValues{Left: wd.coders[Left], Right: wd.coders[Right]}
	if outs.Records, err = wd.records(s.Scope("records"), route.panes(cfg, values), route.records, route.panesVar); err != nil {
		return Outputs{}, err
	}
	return windowedExtras[K, L, R](s, wd, cfg, outs)
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
	fail := func(err error) (beam.PCollection, error) {
		return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", route.op, err)
	}
	if cfg.window == nil {
		if err := windowing.CheckAlike(route.op, left, right); err != nil {
			return beam.PCollection{}, err
		}
	}
	cols := [2]beam.PCollection{Left: left, Right: right}
	var values [2]coders.Element
	for side, col := range cols {
		ss := s.Scope(Side(side).String())
		var err error
		if values[side], err = coders.KVValue(col); err != nil {
			return fail(err)
		}
		if cols[side], err = windowInput(ss, cfg, col); err != nil {
			return fail(err)
		}
		if route.stamp {
			out, err := beam.TryParDo(ss, &stampFn{Value: values[side]}, cols[side])
			if err != nil {
				return fail(err)
			}
			cols[side] = out[0]
		}
	}
	grouped, err := beam.TryCoGroupByKey(s, cols[Left], cols[Right])
	if err != nil {
		return fail(err)
	}
	records, err := beam.TryParDo(s.Scope("records"), route.grouped(cfg, sideValues{Left: values[Left], Right: values[Right]}), grouped,
		beam.TypeDefinition{Var: route.groupedVar, T: route.records})
	if err != nil {
		return fail(err)
	}
	return records[0], nil
}

// windowInput applies the options' windowing to col, one input of the
// grouped path: WindowInto's window function (with the default trigger,
// as beam.WindowInto gives it), and AllowedLateness over the window
// function, trigger and accumulation col already has. Without either,
// col keeps the windowing the caller gave it.
func windowInput(s beam.Scope, cfg config, col beam.PCollection) (beam.PCollection, error) {
	var opts []beam.WindowIntoOption
	if cfg.set&setLateness != 0 {
		opts = append(opts, beam.AllowedLateness(cfg.lateness))
	}
	if cfg.window != nil {
		return beam.TryWindowInto(s, cfg.window, col, opts...)
	}
	if len(opts) == 0 {
		return col, nil
	}
	ws := col.WindowingStrategy()
	if ws.Trigger != nil {
		opts = append(opts, beam.Trigger(ws.Trigger))
	}
	if windowing.Accumulation(ws) == window.Accumulating {
		opts = append(opts, beam.PanesAccumulate())
	}
	return beam.TryWindowInto(s, ws.Fn, col, opts...)
}

// stampFn carries each value's event time into its group, which
// CoGroupByKey does not keep: a stamped value is the time (milliseconds
// since the Unix epoch, a varint) followed by the value in its input's
// coder, in one []byte, whose coder is the cheapest to group by.
type stampFn struct {
	Value coders.Element

	// stamped serves every value: the only consumer of stampFn's output is
	// the CoGroupByKey, whose tagging encodes each value before emit
	// returns.
	stamped []byte
}

func (f *stampFn) Setup() error { return f.Value.Setup() }

func (f *stampFn) ProcessElement(et beam.EventTime, k beam.X, v beam.Y, emit func(beam.X, []byte)) error {
	var err error
	if f.stamped, err = f.Value.AppendEncode(binary.AppendVarint(f.stamped[:0], et.Milliseconds()), v); err != nil {
		return err
	}
	emit(k, f.stamped)
	return nil
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
// side s (see stampFn), decoded, all new.
func (c *sideValues) unstampAll(op string, s Side, next func(*[]byte) bool, vs []joinValue) ([]joinValue, error) {
	var stamped []byte
	for next(&stamped) {
		ms, n := binary.Varint(stamped)
		if n <= 0 {
			return vs, fmt.Errorf("beamjoin: %s: a grouped %s value of %d bytes does not start with its time", op, s, len(stamped))
		}
		v, err := c.decode(op, s, stamped[n:])
		if err != nil {
			return vs, err
		}
		vs = append(vs, joinValue{v: v, time: time.UnixMilli(ms).UTC(), isNew: true})
	}
	return vs, nil
}

// decodePane decodes the values of a pane of the late-counting path, by
// side, each marked new or not as the pane says.
func (c *sideValues) decodePane(op string, p paneRecord) ([2][]joinValue, error) {
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
func resolveWindowing(op string, cfg config, left, right beam.PCollection) (windows, error) {
	w := windows{fn: cfg.window}
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
	if cfg.set&setLateness != 0 {
		w.lateness = cfg.lateness
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

// windowed is a window join or cogroup being built: its inputs' value
// coders and the outputs of its stateful DoFn.
type windowed struct {
	op          string
	coders      [2]coders.Element
	windowing   windows
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
		if tagged[side], err = raw.Encode(s.Scope(Side(side).String()), match.Side(side), wd.coders[side], col); err != nil {
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
		var err error
		if outs.Fates, err = decodeFates(s, wd.op, wd.fates, reflect.TypeFor[Fate[K]]()); err != nil {
			return Outputs{}, err
		}
	}
	return outs, nil
}
