package join

// This file holds Window, the window join, and its record type.

import (
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

func init() {
	register.DoFn3x3[beam.EventTime, beam.X, beam.Y, beam.X, stamped, error](&stampFn{})
	register.DoFn5x1[beam.Window, beam.X, func(*stamped) bool, func(*stamped) bool, func(beam.EventTime, beam.Y), error](&windowJoinFn{})
	register.Iter1[stamped]()
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
// JoinCoGroupFunction) as a PCollection<WindowResult[K,L,R]>. The type
// arguments must be given, because Go cannot infer them from a
// beam.PCollection:
//
//	paid := join.Window[string, Order, Payment](s, orders, payments,
//		join.WindowInto(window.NewFixedWindows(time.Hour)), join.LeftOuter)
//
// The join type says which values without a partner are reported: Inner (the
// default) none; LeftOuter each left value whose window has no right value
// for its key, RightOuter the reverse, FullOuter both. Such a value is
// reported once per window it is in, as a KindUnmatched record; a value
// whose window has a partner is only ever in pairs.
//
// Without the WindowInto option the inputs' own windowing is used, as set by
// the caller with beam.WindowInto; both inputs must then be windowed alike.
// Windows fire as in CoGroup: by default once, when the watermark passes the
// window's end. Every record is timestamped with its window's max timestamp,
// so the results of one window are on time downstream together.
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
// Each side's values are encoded with their time (one fused ParDo per side),
// grouped with beam.CoGroupByKey, and joined per key and window by one
// DoFn, which holds that key and window's right values in memory while it
// streams the left ones. Window panics on misuse; TryWindow returns the
// error.
func Window[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) beam.PCollection {
	out, err := TryWindow[K, L, R](s, left, right, opts...)
	if err != nil {
		panic(err)
	}
	return out
}

// TryWindow is Window returning an error instead of panicking: for an option
// Window does not take (Between and the interval join's other options), for
// inputs that are not PCollections of KV pairs with the type arguments' key
// and value types, and for inputs that are windowed differently.
func TryWindow[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) (beam.PCollection, error) {
	const op = "join.Window"
	s, cfg, err := windowedSetup[K, L, R](s, op, windowOptions, opts, left, right)
	if err != nil {
		return beam.PCollection{}, err
	}
	var valueCoders [2]coders.Element
	var stampedCols [2]beam.PCollection
	for side, col := range [2]beam.PCollection{Left: left, Right: right} {
		if valueCoders[side], err = coders.KVValue(col); err != nil {
			return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", op, err)
		}
		out, err := beam.TryParDo(s.Scope(Side(side).String()), &stampFn{Value: valueCoders[side]}, col)
		if err != nil {
			return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", op, err)
		}
		stampedCols[side] = out[0]
	}
	grouped, err := groupByKeyAndWindow(s, op, cfg.window, stampedCols[Left], stampedCols[Right])
	if err != nil {
		return beam.PCollection{}, err
	}
	out := reflect.TypeFor[WindowResult[K, L, R]]()
	fn := &windowJoinFn{
		Type:  cfg.typ.core(),
		Left:  valueCoders[Left],
		Right: valueCoders[Right],
		Out:   beam.EncodedType{T: out},
	}
	results, err := beam.TryParDo(s, fn, grouped, beam.TypeDefinition{Var: beam.YType, T: out})
	if err != nil {
		return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	return results[0], nil
}

// stamped is a value with its event time in milliseconds, so that the time
// survives the CoGroupByKey, which drops element timestamps. The value is
// encoded with its input's own coder, which keeps stamped a type that can be
// registered.
type stamped struct {
	Time  int64
	Value []byte
}

// stampFn encodes a side's values with their event time.
type stampFn struct {
	Value coders.Element
}

func (f *stampFn) Setup() error { return f.Value.Setup() }

func (f *stampFn) ProcessElement(et beam.EventTime, k beam.X, v beam.Y) (beam.X, stamped, error) {
	b, err := f.Value.Encode(v)
	if err != nil {
		return nil, stamped{}, fmt.Errorf("beamjoin: join.Window: %w", err)
	}
	return k, stamped{Time: et.Milliseconds(), Value: b}, nil
}

// windowJoinFn joins one key's values in one window. Like tagFn it is not
// generic: the WindowResult type is a field, bound to the output's universal
// type at construction.
type windowJoinFn struct {
	Type        match.Type
	Left, Right coders.Element // the inputs' value coders, to decode stamped values
	Out         beam.EncodedType

	fields struct {
		kind, key, time, start, end int
		value, valueTime            [2]int // by side
	}
}

func (f *windowJoinFn) Setup() error {
	if err := f.Left.Setup(); err != nil {
		return err
	}
	if err := f.Right.Setup(); err != nil {
		return err
	}
	t, fs := f.Out.T, &f.fields
	fs.kind, fs.key, fs.time = fieldIndex(t, "Kind"), fieldIndex(t, "Key"), fieldIndex(t, "Time")
	fs.start, fs.end = fieldIndex(t, "WindowStart"), fieldIndex(t, "WindowEnd")
	for _, s := range []Side{Left, Right} {
		fs.value[s] = fieldIndex(t, sideField[s])
		fs.valueTime[s] = fieldIndex(t, sideField[s]+"Time")
	}
	return nil
}

// joinValue is a decoded value and its event time.
type joinValue struct {
	v    any
	time time.Time
}

func (f *windowJoinFn) decode(s Side, st stamped) (joinValue, error) {
	c := &f.Left
	if s == Right {
		c = &f.Right
	}
	v, err := c.Decode(st.Value)
	if err != nil {
		return joinValue{}, fmt.Errorf("beamjoin: join.Window: decoding a %s value: %w", s, err)
	}
	return joinValue{v: v, time: time.UnixMilli(st.Time).UTC()}, nil
}

// ProcessElement is the nested loop of Flink's JoinCoGroupFunction, plus the
// outer join types: a side's values are unmatched in this window iff the
// other side has none.
func (f *windowJoinFn) ProcessElement(w beam.Window, k beam.X, lefts, rights func(*stamped) bool, emit func(beam.EventTime, beam.Y)) error {
	sp, err := spanOf(w)
	if err != nil {
		return err
	}
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
		out.Field(f.fields.time).Set(reflect.ValueOf(sp.max.ToTime().UTC()))
		out.Field(f.fields.start).Set(reflect.ValueOf(sp.start))
		out.Field(f.fields.end).Set(reflect.ValueOf(sp.end))
		emit(sp.max, out.Interface())
	}

	// The right values are held, the left ones streamed past them.
	var rs []joinValue
	var st stamped
	for rights(&st) {
		r, err := f.decode(Right, st)
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	anyLeft := false
	for lefts(&st) {
		anyLeft = true
		l, err := f.decode(Left, st)
		if err != nil {
			return err
		}
		if len(rs) == 0 {
			if f.Type.Outer(match.Left) {
				emitRecord(KindUnmatched, [2]*joinValue{Left: &l})
			}
			continue
		}
		for i := range rs {
			emitRecord(KindPair, [2]*joinValue{Left: &l, Right: &rs[i]})
		}
	}
	if !anyLeft && f.Type.Outer(match.Right) {
		for i := range rs {
			emitRecord(KindUnmatched, [2]*joinValue{Right: &rs[i]})
		}
	}
	return nil
}
