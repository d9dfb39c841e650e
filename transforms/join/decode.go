package join

// This file holds how the transforms build the author's record types
// (Result, LateElement, WindowResult, Group, Tagged) by reflection, since
// their DoFns cannot be generic and be registered: the interval join's
// decoding DoFns, resultFn and lateFn, and the field helpers that Window,
// CoGroup and Connect use too.

import (
	"bytes"
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/panes"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/windowed"
)

func init() {
	register.DoFn4x1[beam.EventTime, beam.X, raw.Record, func(beam.Y), error](&resultFn{})
	register.DoFn4x1[beam.EventTime, beam.X, raw.Encoded, func(beam.Y), error](&lateFn{})
	register.DoFn4x1[beam.EventTime, beam.X, windowed.MissedRecord, func(beam.Y), error](&missedFn{})
	register.DoFn4x0[beam.EventTime, beam.X, raw.FateRecord, func(beam.Y)](&fateFn{})
	register.Emitter1[beam.Y]()
}

// resultFn decodes records into the author's Result[K,L,R]. It is not
// generic, so it can be registered in init; the result type travels as a
// field and values are built by reflection.
//
// A join emits an element's records in a row (a left element's pairs with
// each of its partners, in a sweep or as its partners arrive), so resultFn
// keeps the last value it decoded on each side with its encoding and
// decodes an equal encoding only once. Each Result still gets its own copy
// of the value; values that hold slices, maps or pointers share what they
// point to with the other Results of that element, as Beam Go shares a
// value among the consumers of one PCollection. Beam's rule applies: a
// DoFn does not modify its input.
type resultFn struct {
	Out         beam.EncodedType
	Left, Right coders.Element

	kind, key, left, right, leftTime, rightTime, time int
	last                                              [2]lastDecoded
	noCache                                           bool // for benchmarks
}

// lastDecoded is the last value a side's coder decoded, and its encoding.
type lastDecoded struct {
	enc []byte
	v   any
	ok  bool
}

// decode returns the value encoded in b, decoding it with c unless it is
// the last one decoded.
func (d *lastDecoded) decode(c *coders.Element, b []byte) (any, error) {
	if d.ok && bytes.Equal(d.enc, b) {
		return d.v, nil
	}
	d.ok = false
	v, err := c.Decode(b)
	if err != nil {
		return nil, err
	}
	d.enc, d.v, d.ok = append(d.enc[:0], b...), v, true
	return v, nil
}

// fieldIndexes sets each *int to the index of the field of t it is named
// after.
func fieldIndexes(t reflect.Type, fields map[string]*int) error {
	for name, p := range fields {
		fl, ok := t.FieldByName(name)
		if !ok {
			return fmt.Errorf("beamjoin: %v has no field %s", t, name)
		}
		*p = fl.Index[0]
	}
	return nil
}

func (f *resultFn) Setup() error {
	return setupDecoding(f.Out.T, map[string]*int{"Kind": &f.kind, "Key": &f.key, "Left": &f.left, "Right": &f.right,
		"LeftTime": &f.leftTime, "RightTime": &f.rightTime, "Time": &f.time}, &f.Left, &f.Right)
}

// setupDecoding is the Setup of the decoding DoFns: it sets each *int to
// the index of the field of t it is named after, and sets up the value
// coders of both sides.
func setupDecoding(t reflect.Type, fields map[string]*int, values ...*coders.Element) error {
	if err := fieldIndexes(t, fields); err != nil {
		return err
	}
	for _, c := range values {
		if err := c.Setup(); err != nil {
			return err
		}
	}
	return nil
}

func (f *resultFn) ProcessElement(et beam.EventTime, key beam.X, r raw.Record, emit func(beam.Y)) error {
	v := reflect.New(f.Out.T).Elem()
	v.Field(f.kind).Set(reflect.ValueOf(Kind(r.Kind)))
	v.Field(f.key).Set(reflect.ValueOf(key))
	if r.HasLeft {
		if err := f.setValue(v.Field(f.left), Left, r.Left); err != nil {
			return err
		}
		v.Field(f.leftTime).Set(reflect.ValueOf(time.UnixMilli(r.LeftTime).UTC()))
	}
	if r.HasRight {
		if err := f.setValue(v.Field(f.right), Right, r.Right); err != nil {
			return err
		}
		v.Field(f.rightTime).Set(reflect.ValueOf(time.UnixMilli(r.RightTime).UTC()))
	}
	v.Field(f.time).Set(reflect.ValueOf(et.ToTime().UTC()))
	emit(v.Interface())
	return nil
}

// setValue sets ptr, the field of type *T of side s, to a new copy of the
// value encoded in b.
func (f *resultFn) setValue(ptr reflect.Value, s Side, b []byte) error {
	c := &f.Left
	if s == Right {
		c = &f.Right
	}
	if f.noCache {
		return setDecoded(ptr, c, b)
	}
	x, err := f.last[s].decode(c, b)
	if err != nil {
		return err
	}
	setPointer(ptr, x)
	return nil
}

// setDecoded decodes b into a new value and stores its address in ptr, a
// field of type *T.
func setDecoded(ptr reflect.Value, c *coders.Element, b []byte) error {
	x, err := c.Decode(b)
	if err != nil {
		return err
	}
	p := reflect.New(ptr.Type().Elem())
	p.Elem().Set(reflect.ValueOf(x))
	ptr.Set(p)
	return nil
}

// lateFn decodes late elements into the author's LateElement[K,L,R].
type lateFn struct {
	Out         beam.EncodedType
	Left, Right coders.Element

	side, key, time, left, right int
}

func (f *lateFn) Setup() error {
	return setupDecoding(f.Out.T, map[string]*int{"Side": &f.side, "Key": &f.key, "Time": &f.time, "Left": &f.left, "Right": &f.right},
		&f.Left, &f.Right)
}

func (f *lateFn) ProcessElement(et beam.EventTime, key beam.X, in raw.Encoded, emit func(beam.Y)) error {
	v := reflect.New(f.Out.T).Elem()
	side := Side(in.Side)
	v.Field(f.side).Set(reflect.ValueOf(side))
	v.Field(f.key).Set(reflect.ValueOf(key))
	v.Field(f.time).Set(reflect.ValueOf(et.ToTime().UTC()))
	field, c := f.left, &f.Left
	if side == Right {
		field, c = f.right, &f.Right
	}
	if err := setDecoded(v.Field(field), c, in.Value); err != nil {
		return err
	}
	emit(v.Interface())
	return nil
}

// sideField names the field that holds a side's value in Tagged, Group and
// WindowResult.
var sideField = [2]string{Left: "Left", Right: "Right"}

// fieldIndex returns the index of the named field of struct type t. The
// types are this package's own, so a missing field is a bug here.
func fieldIndex(t reflect.Type, name string) int {
	sf, ok := t.FieldByName(name)
	if !ok || len(sf.Index) != 1 {
		panic(fmt.Sprintf("beamjoin: %v has no field %s", t, name))
	}
	return sf.Index[0]
}

// setPointer sets dst, a field of type *V, to point to a copy of v, a V.
func setPointer(dst reflect.Value, v any) {
	p := reflect.New(dst.Type().Elem())
	if v != nil { // a nil interface or pointer V stays the zero V
		p.Elem().Set(reflect.ValueOf(v))
	}
	dst.Set(p)
}

// valueOf returns v as a reflect.Value of type t; a nil v (a nil pointer or
// interface value) is t's zero value.
func valueOf(v any, t reflect.Type) reflect.Value {
	if v == nil {
		return reflect.Zero(t)
	}
	return reflect.ValueOf(v)
}

// decodeFates decodes the raw fate records of the join op into Fate[K],
// of type t.
func decodeFates(s beam.Scope, op string, fates beam.PCollection, t reflect.Type) (beam.PCollection, error) {
	out, err := beam.TryParDo(s.Scope("fates"), &fateFn{Out: beam.EncodedType{T: t}, Input: "Side"}, fates, beam.TypeDefinition{Var: beam.YType, T: t})
	if err != nil {
		return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	return out[0], nil
}

// missedFn decodes late elements into the author's
// WindowLateElement[K,L,R].
type missedFn struct {
	Out         beam.EncodedType
	Left, Right coders.Element

	side, key, time, left, right, start, end int
}

func (f *missedFn) Setup() error {
	return setupDecoding(f.Out.T, map[string]*int{"Side": &f.side, "Key": &f.key, "Time": &f.time, "Left": &f.left, "Right": &f.right,
		"WindowStart": &f.start, "WindowEnd": &f.end}, &f.Left, &f.Right)
}

func (f *missedFn) ProcessElement(et beam.EventTime, key beam.X, m windowed.MissedRecord, emit func(beam.Y)) error {
	v := reflect.New(f.Out.T).Elem()
	side := Side(m.Side)
	v.Field(f.side).Set(reflect.ValueOf(side))
	v.Field(f.key).Set(reflect.ValueOf(key))
	v.Field(f.time).Set(reflect.ValueOf(et.ToTime().UTC()))
	v.Field(f.start).Set(reflect.ValueOf(time.UnixMilli(m.Start).UTC()))
	v.Field(f.end).Set(reflect.ValueOf(time.UnixMilli(m.End).UTC()))
	field, c := f.left, &f.Left
	if side == Right {
		field, c = f.right, &f.Right
	}
	if err := setDecoded(v.Field(field), c, m.Value); err != nil {
		return err
	}
	emit(v.Interface())
	return nil
}

// fateFn builds the author's Fate[K], or MultiFate[K], from a fate record:
// Input names the field that says which input the element came from
// ("Side" for Fate, "Input" for MultiFate), which takes the record's side.
type fateFn struct {
	Out   beam.EncodedType
	Input string

	side, key, time, outcome int
}

func (f *fateFn) Setup() error {
	return fieldIndexes(f.Out.T, map[string]*int{f.Input: &f.side, "Key": &f.key, "Time": &f.time, "Outcome": &f.outcome})
}

func (f *fateFn) ProcessElement(et beam.EventTime, key beam.X, r raw.FateRecord, emit func(beam.Y)) {
	v := reflect.New(f.Out.T).Elem()
	v.Field(f.side).Set(reflect.ValueOf(r.Side).Convert(v.Field(f.side).Type()))
	v.Field(f.key).Set(reflect.ValueOf(key))
	v.Field(f.time).Set(reflect.ValueOf(et.ToTime().UTC()))
	v.Field(f.outcome).Set(reflect.ValueOf(Outcome(r.Outcome)))
	emit(v.Interface())
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
