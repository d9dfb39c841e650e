package join

// This file holds Window, the window join, and its record type.

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/internal/panes"
)

func init() {
	register.DoFn5x1[context.Context, beam.EventTime, beam.X, paneRecord, func(beam.EventTime, beam.Y), error](&windowPaneFn{})
	register.DoFn6x1[context.Context, beam.Window, beam.X, func(*stampedValue) bool, func(*stampedValue) bool, func(beam.EventTime, beam.Y), error](&windowGroupFn{})
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
// the caller with beam.WindowInto; both inputs must then be windowed alike,
// with the default trigger. Fixed, sliding and session windows all work.
//
// # When windows fire, and late data
//
// A window fires once, when the watermark passes its end, and every record
// of that firing is timestamped with the window's max timestamp, so the
// results of one window are on time downstream together. An element that
// arrives after its window expired (the window's end plus the allowed
// lateness has passed; by default lateness is zero, so: after the window
// fired) is late: it is not joined, it is counted (left_late, right_late),
// and, with ReportLate, returned in Outputs.Late with the window it missed.
// With TrackFates, Outputs.Fates holds every element's fate: OutcomeMatched
// (in at least one pair), OutcomeUnmatched (of an outer side, in no pair),
// OutcomeExpired (of an inner side, in no pair) or OutcomeLate (too late
// for every window it is in), once its last window expires.
//
// AllowedLateness(d), or beam.AllowedLateness on the inputs' windowing,
// keeps a window's values for d after it fired. An element that arrives
// in that time is late but allowed: it adds a late pane to its window,
// whose records are the pairs of the new element with every value of the
// other side the window holds (on time or late), or, if there are none and
// its side is outer, an unmatched record for it. Records already emitted
// stay: a value reported unmatched that a late partner reaches is then in a
// pair too (as EmitImmediate does in Interval). A late pane's records carry
// the window's max timestamp, so they are late downstream, as Beam's own
// late panes are.
//
// A DoFn cannot read the watermark, so lateness is judged from the timer
// firings that prove how far it has come on the element's key (exact for
// a key whose windows fired before). An element on time is never judged
// late. A late element on a key with no
// firing yet to prove it (a new key, or one whose state was forgotten one
// window length plus the allowed lateness after its last window expired)
// may be taken for on time; its window then fires at once, behind the
// watermark.
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
// Each side's values are tagged and encoded (one fused ParDo per side),
// both are put in the global window and flattened, and one stateful DoFn
// per key keeps them in a bag and fires each window with an event-time
// timer; a fused DoFn then builds the records of each firing. Records are
// put back into windows by their timestamp: into the window itself for
// fixed windows and the global window; for sliding windows, which overlap,
// into fixed windows of the period, one per sliding window; for sessions,
// into sessions of the gap, which a downstream GroupByKey merges into one
// per joined session. WindowStart and WindowEnd always name the joined
// window. An arrival costs one bag append; a window's firing one read and,
// when it emits or expires anything, a rewrite (clear and append).
//
// Counters (namespace "beamjoin"): left_in, right_in; each element's fate,
// exactly one, once its windows expire: left_matched (in a pair),
// left_unmatched (reported unmatched, never in a pair), left_expired (of
// an inner side, never in a pair), left_late (too late for every window it
// is in), and the same for right; pairs_out, left_unmatched_out and
// right_unmatched_out count records.
//
// The program must call RegisterTypes[K, L, R]() in an init function.
// Window panics on misuse; TryWindow returns the error.
func Window[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) Outputs {
	out, err := TryWindow[K, L, R](s, left, right, opts...)
	if err != nil {
		panic(err)
	}
	return out
}

// TryWindow is Window returning an error instead of panicking: for an option
// Window does not take (Between and the interval join's other options), for
// inputs that are not PCollections of KV pairs with the type arguments' key
// and value types, for inputs that are windowed differently or with a
// trigger, and for types not registered with RegisterTypes.
func TryWindow[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) (Outputs, error) {
	return buildWindowedRoute[K, L, R](s, windowedRoute{
		op:      "join.Window",
		allowed: windowOptions,
		records: reflect.TypeFor[WindowResult[K, L, R]](),
		join:    true,
		stamp:   true,
		grouped: func(cfg config, values [2]coders.Element) any {
			return &windowGroupFn{windowRecords: newWindowRecords[K, L, R](cfg), Left: values[Left], Right: values[Right]}
		},
		panes: func(cfg config, values [2]coders.Element) any {
			return &windowPaneFn{windowRecords: newWindowRecords[K, L, R](cfg), Left: values[Left], Right: values[Right]}
		},
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

	fields struct {
		kind, key, time, start, end int
		value, valueTime            [2]int // by side
	}
}

func newWindowRecords[K, L, R any](cfg config) windowRecords {
	return windowRecords{Type: cfg.typ.core(), Out: beam.EncodedType{T: reflect.TypeFor[WindowResult[K, L, R]]()}}
}

// setup finds the fields of the record type.
func (f *windowRecords) setup() {
	t, fs := f.Out.T, &f.fields
	fs.kind, fs.key, fs.time = fieldIndex(t, "Kind"), fieldIndex(t, "Key"), fieldIndex(t, "Time")
	fs.start, fs.end = fieldIndex(t, "WindowStart"), fieldIndex(t, "WindowEnd")
	for _, s := range []Side{Left, Right} {
		fs.value[s] = fieldIndex(t, sideField[s])
		fs.valueTime[s] = fieldIndex(t, sideField[s]+"Time")
	}
}

// windowRecordCounters count the window join's records.
var windowRecordCounters = struct {
	pairs     beam.Counter
	unmatched [2]beam.Counter
}{
	pairs:     beam.NewCounter(Namespace, "pairs_out"),
	unmatched: [2]beam.Counter{beam.NewCounter(Namespace, "left_unmatched_out"), beam.NewCounter(Namespace, "right_unmatched_out")},
}

// joinValue is a decoded value, its event time, and whether it is new in
// the pane.
type joinValue struct {
	v     any
	time  time.Time
	isNew bool
}

// emit emits the records of a pane of key k's window [start, end), made
// of sides, timestamped at (the window's max timestamp): the nested loop.
func (f *windowRecords) emit(ctx context.Context, at beam.EventTime, k any, sides [2][]joinValue, start, end time.Time, emit func(beam.EventTime, beam.Y)) {
	emitRecord := func(kind Kind, vs [2]*joinValue) {
		out := reflect.New(f.Out.T).Elem()
		out.Field(f.fields.kind).Set(reflect.ValueOf(kind))
		out.Field(f.fields.key).Set(reflect.ValueOf(k))
		for s, v := range vs {
			if v != nil {
				setPointer(out.Field(f.fields.value[s]), v.v)
				out.Field(f.fields.valueTime[s]).Set(reflect.ValueOf(v.time))
			}
		}
		out.Field(f.fields.time).Set(reflect.ValueOf(at.ToTime().UTC()))
		out.Field(f.fields.start).Set(reflect.ValueOf(start))
		out.Field(f.fields.end).Set(reflect.ValueOf(end))
		emit(at, out.Interface())
	}
	lefts, rights := sides[Left], sides[Right]
	for i := range lefts {
		for j := range rights {
			if lefts[i].isNew || rights[j].isNew {
				emitRecord(KindPair, [2]*joinValue{Left: &lefts[i], Right: &rights[j]})
				windowRecordCounters.pairs.Inc(ctx, 1)
			}
		}
	}
	for s, vs := range sides {
		if len(sides[1-s]) > 0 || !f.Type.Outer(match.Side(s)) {
			continue
		}
		for i := range vs {
			if vs[i].isNew {
				var pair [2]*joinValue
				pair[s] = &vs[i]
				emitRecord(KindUnmatched, pair)
				windowRecordCounters.unmatched[s].Inc(ctx, 1)
			}
		}
	}
}

// windowGroupFn makes the records of one CoGroupByKey group: one pane of
// one window of a key, every value of which is new.
type windowGroupFn struct {
	windowRecords
	Left, Right coders.Element // the inputs' value coders
}

func (f *windowGroupFn) Setup() error {
	f.setup()
	if err := f.Left.Setup(); err != nil {
		return err
	}
	return f.Right.Setup()
}

func (f *windowGroupFn) ProcessElement(ctx context.Context, w beam.Window, k beam.X, lefts, rights func(*stampedValue) bool, emit func(beam.EventTime, beam.Y)) error {
	var sides [2][]joinValue
	var sv stampedValue
	for side, next := range [2]func(*stampedValue) bool{Left: lefts, Right: rights} {
		c := &f.Left
		if side == int(Right) {
			c = &f.Right
		}
		for next(&sv) {
			v, err := c.Decode(sv.Value)
			if err != nil {
				return fmt.Errorf("beamjoin: join.Window: decoding a %s value: %w", Side(side), err)
			}
			sides[side] = append(sides[side], joinValue{v: v, time: time.UnixMilli(sv.Time).UTC(), isNew: true})
		}
	}
	start, end := windowBounds(w)
	f.emit(ctx, w.MaxTimestamp(), k, sides, start, end, emit)
	return nil
}

// windowPaneFn makes the records of a pane of the late-counting path,
// whose entries say which values are new in it.
type windowPaneFn struct {
	windowRecords
	Left, Right coders.Element // the inputs' value coders
}

func (f *windowPaneFn) Setup() error {
	f.setup()
	if err := f.Left.Setup(); err != nil {
		return err
	}
	return f.Right.Setup()
}

func (f *windowPaneFn) ProcessElement(ctx context.Context, et beam.EventTime, k beam.X, p paneRecord, emit func(beam.EventTime, beam.Y)) error {
	entries, isNew, err := panes.DecodePane(p.Entries)
	if err != nil {
		return err
	}
	var sides [2][]joinValue
	for i, e := range entries {
		c := &f.Left
		if e.Side == match.Right {
			c = &f.Right
		}
		v, err := c.Decode(e.Value)
		if err != nil {
			return fmt.Errorf("beamjoin: join.Window: decoding a %s value: %w", sideOf(e.Side), err)
		}
		sides[e.Side] = append(sides[e.Side], joinValue{v: v, time: time.UnixMilli(e.Time).UTC(), isNew: isNew[i]})
	}
	f.emit(ctx, et, k, sides, time.UnixMilli(p.Start).UTC(), time.UnixMilli(p.End).UTC(), emit)
	return nil
}
