package join

// This file holds Window, the window join, and its record types; and what
// Window and CoGroup share: the composite that chooses their path (the
// grouped path on Beam's CoGroupByKey, or the late-counting path, both in
// package internal/windowed) and turns the engine's output into the
// author's records, late elements and fates.

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/windowed"
)

func init() {
	register.DoFn5x1[context.Context, beam.EventTime, beam.X, windowed.PaneRecord, func(beam.EventTime, beam.Y), error](&windowPaneFn{})
	register.DoFn6x1[context.Context, beam.Window, beam.X, func(*[]byte) bool, func(*[]byte) bool, func(beam.EventTime, beam.Y), error](&windowGroupFn{})
	register.Emitter2[beam.EventTime, beam.Y]()
}

// WindowResult is one record of a window join of PCollection<KV<K,L>> and
// PCollection<KV<K,R>>: a pair (Kind KindPair, both Left and Right set) or,
// for outer join types, a value whose window had nothing on the other side
// (KindUnmatched, the other side nil). A nil side is absent, never a zero
// value; its time is then the zero time.Time.
//
// LeftTime and RightTime are the event times of the values. Time is the
// window's max timestamp, WindowEnd minus one millisecond, and is also the
// record's element timestamp. WindowStart and WindowEnd are the window's
// bounds, [WindowStart, WindowEnd); see Group for the global window.
type WindowResult[K, L, R any] struct {
	Kind        Kind
	Key         K
	Left        *L
	Right       *R
	LeftTime    time.Time
	RightTime   time.Time
	Time        time.Time
	WindowStart time.Time
	WindowEnd   time.Time
}

// Window joins left, a PCollection<KV<K,L>>, and right, a
// PCollection<KV<K,R>>, per key and window: Flink's
// join().where().equalTo().window(). For each key and window it emits every
// pair of a left and a right value (the nested loop of Flink's
// JoinCoGroupFunction) in Outputs.Records, a
// PCollection<WindowResult[K,L,R]>:
//
//	out := join.Window[string, Order, Payment](s, orders, payments,
//		join.WindowInto(window.NewFixedWindows(time.Hour)), join.LeftOuter)
//
// The join type says which values without a partner are reported: Inner (the
// default) none; LeftOuter each left value whose window has no right value
// for its key, RightOuter the reverse, FullOuter both. Such a value is
// reported once per window it is in, as a KindUnmatched record; a value
// whose window has a partner is only ever in pairs.
//
// Without the WindowInto option the inputs' own windowing is used, as set by
// the caller with beam.WindowInto (window function, trigger, accumulation,
// allowed lateness); both inputs must then be windowed alike. Fixed,
// sliding, session and global windows all work.
//
// # Windows, triggers and late data
//
// By default the join groups both inputs with Beam's CoGroupByKey, so the
// runner assigns and merges the windows (sessions merge across both
// inputs), fires them by the inputs' trigger, accumulates or discards
// panes, and applies the allowed lateness. Any trigger CoGroupByKey
// accepts works. Each firing (pane) of a window gives the records of the
// values in that pane: with discarding panes, Beam's default, a pair whose
// values fell into different panes of a window is not made; with
// beam.PanesAccumulate each pane repeats the earlier values, and so the
// earlier pairs. Every record is in the window it was made in (a sliding
// window's pairs in that sliding window, a session's in the merged
// session) and timestamped with that window's max timestamp.
// AllowedLateness(d) re-windows both inputs with allowed lateness d.
//
// An element that arrives beyond its window's allowed lateness is dropped
// by the runner's GroupByKey, where no DoFn sees it; this path neither
// counts nor reports it. ReportLate or TrackFates choose the late-counting
// path instead: one stateful DoFn per key keeps each key's windows in
// state, and reports each late element in Outputs.Late (with ReportLate),
// with the window it missed, counts it (left_late, right_late), and with
// TrackFates gives every element its Fate in Outputs.Fates: OutcomeMatched
// (in at least one pair), OutcomeUnmatched (of an outer side, in no pair),
// OutcomeExpired (of an inner side, in no pair) or OutcomeLate (too late
// for every window it is in), once its last window expires. That path
// takes the default trigger only: a window fires once, when the watermark
// passes its end, and within the allowed lateness each late element adds
// a late pane whose records are its pairs with every value of the other
// side the window holds (or, alone and outer, its unmatched record). A
// DoFn cannot read the watermark, so it judges lateness per key from the
// timer firings that prove how far the watermark has come; an element on
// time is never judged late, and a late element on a key with no such
// firing (a new key, or one forgotten one window length plus the allowed
// lateness after its last window) may be taken for on time. Its records
// of sliding windows are in their own sliding window; those of a session
// are in one window per joined session whose bounds are not the
// session's (WindowStart and WindowEnd are): see docs/design/window.md.
//
// # What a window join cannot do
//
// Two values match only if they fall into the same window, which is a
// property of the calendar, not of how far apart they are:
//
//   - A pair that straddles a window boundary is missed: with one-hour fixed
//     windows an order at 10:59 and its payment at 11:01 never meet (and are
//     reported unmatched by an outer join), while an order at 10:01 and a
//     payment at 10:59 do.
//   - With sliding windows a value is in several windows, so a pair is
//     emitted once for every window that holds both (size/period times when
//     they are close together), and an unmatched value once for every window
//     in which it has no partner, as in Flink. Deduplicate downstream if
//     that is not wanted.
//   - Results come only when a window closes, never earlier.
//
// For "a payment within 15 minutes of its order", a bound on the distance
// between two elements, use Interval, which matches by
// lower <= ts(r) - ts(l) <= upper whatever the calendar says.
//
// # How it runs
//
// By default: each value stamped with its event time, CoGroupByKey, and
// one fused DoFn per group for the nested loop. Counters (namespace
// "beamjoin"): pairs_out, left_unmatched_out, right_unmatched_out. The
// late-counting path adds left_in, right_in and each element's fate,
// exactly one, once its windows expire: left_matched, left_unmatched,
// left_expired, left_late, and the same for right. Its cost is a bag
// append and a timer set per element and a bag read per firing.
//
// The program must call RegisterTypes[K, L, R]() in an init function.
// Window panics on misuse; TryWindow returns the error.
func Window[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) Outputs {
	return mustBuild(TryWindow[K, L, R](s, left, right, opts...))
}

// TryWindow is Window returning an error instead of panicking: for an option
// Window does not take (Between and the interval join's other options), for
// inputs that are not PCollections of KV pairs with the type arguments' key
// and value types, for inputs that are windowed differently, for a
// trigger other than the default with ReportLate or TrackFates, and for
// types not registered with RegisterTypes.
func TryWindow[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) (Outputs, error) {
	records := func(cfg config, values sideValues) windowRecords {
		return windowRecords{Type: cfg.typ.core(), Out: beam.EncodedType{T: reflect.TypeFor[WindowResult[K, L, R]]()}, sideValues: values}
	}
	return buildWindowedRoute[K, L, R](s, windowedRoute{
		op: "join.Window", allowed: windowOptions, records: reflect.TypeFor[WindowResult[K, L, R]](), join: true, stamp: true,
		grouped:    func(cfg config, values sideValues) any { return &windowGroupFn{windowRecords: records(cfg, values)} },
		panes:      func(cfg config, values sideValues) any { return &windowPaneFn{windowRecords: records(cfg, values)} },
		groupedVar: beam.YType, panesVar: beam.YType,
	}, opts, left, right)
}

// windowRecords makes the records of one pane of one window of a key, on
// either path: the pairs with at least one value new in the pane, and, for
// an outer side, each new value of the side when the pane holds nothing of
// the other side. It is not generic: the WindowResult type is a field,
// bound to the output's universal type at construction.
type windowRecords struct {
	Type match.Type
	Out  beam.EncodedType
	sideValues

	fields struct {
		kind, key, time, start, end int
		value, valueTime            [2]int // by side
	}
	// record is where each record is made before it is emitted (as a
	// copy), every field set anew.
	record reflect.Value
}

// Setup finds the fields of the record type and sets up the value coders.
func (f *windowRecords) Setup() error {
	f.record = reflect.New(f.Out.T).Elem()
	t, fs := f.Out.T, &f.fields
	fs.kind, fs.key, fs.time = fieldIndex(t, "Kind"), fieldIndex(t, "Key"), fieldIndex(t, "Time")
	fs.start, fs.end = fieldIndex(t, "WindowStart"), fieldIndex(t, "WindowEnd")
	for _, s := range []Side{Left, Right} {
		fs.value[s] = fieldIndex(t, sideField[s])
		fs.valueTime[s] = fieldIndex(t, sideField[s]+"Time")
	}
	return f.sideValues.setup()
}

// windowRecordCounters count the window join's records.
var windowRecordCounters = struct {
	pairs     beam.Counter
	unmatched [2]beam.Counter
}{
	pairs:     beam.NewCounter(Namespace, "pairs_out"),
	unmatched: [2]beam.Counter{beam.NewCounter(Namespace, "left_unmatched_out"), beam.NewCounter(Namespace, "right_unmatched_out")},
}

// emit emits the records of a pane of key k's window [start, end), made
// of sides, timestamped at (the window's max timestamp): the nested loop.
func (f *windowRecords) emit(ctx context.Context, at beam.EventTime, k any, sides [2][]joinValue, start, end time.Time, emit func(beam.EventTime, beam.Y)) {
	key, atTime := reflect.ValueOf(k), at.ToTime().UTC()
	emitRecord := func(kind Kind, vs [2]*joinValue) {
		// The fields of known types are set through typed pointers, which,
		// unlike reflect.ValueOf, do not box their values.
		out := f.record
		*out.Field(f.fields.kind).Addr().Interface().(*Kind) = kind
		out.Field(f.fields.key).Set(key)
		for s, v := range vs {
			if v == nil {
				out.Field(f.fields.value[s]).SetZero()
				*timeField(out, f.fields.valueTime[s]) = time.Time{}
				continue
			}
			setPointer(out.Field(f.fields.value[s]), v.v)
			*timeField(out, f.fields.valueTime[s]) = v.time
		}
		*timeField(out, f.fields.time) = atTime
		*timeField(out, f.fields.start) = start
		*timeField(out, f.fields.end) = end
		emit(at, out.Interface())
	}
	lefts, rights := sides[Left], sides[Right]
	pairs := 0
	for i := range lefts {
		for j := range rights {
			if lefts[i].isNew || rights[j].isNew {
				emitRecord(KindPair, [2]*joinValue{Left: &lefts[i], Right: &rights[j]})
				pairs++
			}
		}
	}
	if pairs > 0 {
		windowRecordCounters.pairs.Inc(ctx, int64(pairs))
	}
	for s, vs := range sides {
		if len(sides[1-s]) > 0 || !f.Type.Outer(match.Side(s)) {
			continue
		}
		unmatched := 0
		for i := range vs {
			if vs[i].isNew {
				var pair [2]*joinValue
				pair[s] = &vs[i]
				emitRecord(KindUnmatched, pair)
				unmatched++
			}
		}
		if unmatched > 0 {
			windowRecordCounters.unmatched[s].Inc(ctx, int64(unmatched))
		}
	}
}

// timeField is the time.Time field i of the addressable struct v.
func timeField(v reflect.Value, i int) *time.Time {
	return v.Field(i).Addr().Interface().(*time.Time)
}

// windowGroupFn makes the records of one CoGroupByKey group: one pane of
// one window of a key, every value of which is new.
type windowGroupFn struct {
	windowRecords

	sides [2][]joinValue // serve every group: records copy the values
}

func (f *windowGroupFn) ProcessElement(ctx context.Context, w beam.Window, k beam.X, lefts, rights func(*[]byte) bool, emit func(beam.EventTime, beam.Y)) error {
	for side, next := range [2]func(*[]byte) bool{Left: lefts, Right: rights} {
		var err error
		if f.sides[side], err = f.unstampAll("join.Window", Side(side), next, f.sides[side][:0]); err != nil {
			return err
		}
	}
	start, end := windowBounds(w)
	f.emit(ctx, w.MaxTimestamp(), k, f.sides, start, end, emit)
	return nil
}

// windowPaneFn makes the records of a pane of the late-counting path,
// whose entries say which values are new in it.
type windowPaneFn struct {
	windowRecords
}

func (f *windowPaneFn) ProcessElement(ctx context.Context, et beam.EventTime, k beam.X, p windowed.PaneRecord, emit func(beam.EventTime, beam.Y)) error {
	sides, err := f.decodePane("join.Window", p)
	if err != nil {
		return err
	}
	f.emit(ctx, et, k, sides, time.UnixMilli(p.Start).UTC(), time.UnixMilli(p.End).UTC(), emit)
	return nil
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
