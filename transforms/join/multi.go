package join

// This file holds Multi, the multi-way interval join composite, its
// inputs (Required, Optional), its record types and their decoding, and
// RegisterMultiTypes. Its engine is transforms/join/internal/multiway;
// docs/design/multiway.md explains how it runs.

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bounded"
	"github.com/beamjoin/beamjoin/transforms/join/internal/multiway"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/windowing"
)

func init() {
	register.DoFn4x1[beam.EventTime, beam.X, multiway.Row, func(beam.Y), error](&multiResultFn{})
	register.DoFn4x1[beam.EventTime, beam.X, raw.Encoded, func(beam.Y), error](&multiLateFn{})
}

// MultiInput is an input of Multi after the anchor, made by Required or
// Optional.
type MultiInput struct {
	col      beam.PCollection
	opts     []Option
	optional bool
}

// Required is an input of Multi that every row has an element of: an
// anchor element without a matching element of it gives no row (an inner
// join). Its options are its bounds relative to the anchor, Between
// (required), and LowerExclusive or UpperExclusive.
func Required(col beam.PCollection, opts ...Option) MultiInput {
	return MultiInput{col: col, opts: opts}
}

// Optional is an input of Multi that a row may lack: an anchor element
// without a matching element of it still has rows, with nil for it (a
// left join). Its options are those of Required.
func Optional(col beam.PCollection, opts ...Option) MultiInput {
	return MultiInput{col: col, opts: opts, optional: true}
}

// MultiResult is one row of Multi: Values[i] is the element of input i
// (the anchor is input 0, then the inputs in the order given), or nil for
// an optional input without a match; Times[i] is its event time, the zero
// time.Time when absent. Kind is KindPair for a row and, under
// EmitRetract, KindRetract for a row withdrawn. The row's element
// timestamp is Time, the latest of its elements' times.
type MultiResult[K, V any] struct {
	Kind   Kind
	Key    K
	Values []*V
	Times  []time.Time
	Time   time.Time
}

// MultiLateElement is an element Multi judged late: neither joined nor
// buffered. Input is its input's index (0 for the anchor); Time is its
// event time, also its element timestamp.
type MultiLateElement[K, V any] struct {
	Input int
	Key   K
	Time  time.Time
	Value V
}

// MultiFate is what became of one input element of Multi (TrackFates):
// its input's index (0 for the anchor), key, event time and Outcome. An
// anchor element is matched if it is in a row with another element,
// unmatched if its one row has none (every other input optional and
// absent), expired if it is in no row; an element of another input is
// matched if it is in a row, else expired; late elements are late.
type MultiFate[K any] struct {
	Input   int
	Key     K
	Time    time.Time
	Outcome Outcome
}

// MaxMultiInputs is the most inputs Multi joins, the anchor included.
const MaxMultiInputs = multiway.MaxInputs

// RegisterMultiTypes registers with Beam the types Multi emits for keys K
// and values V (MultiResult, MultiLateElement, MultiFate), and K and V
// when they are named types. Call it from an init function of the
// program, as RegisterTypes:
//
//	func init() { join.RegisterMultiTypes[string, Event]() }
func RegisterMultiTypes[K, V any]() {
	for _, t := range multiTypes[K, V]() {
		if _, ok := runtime.TypeKey(t); ok && t.Kind() != reflect.Interface {
			beam.RegisterType(t)
		}
	}
}

func multiTypes[K, V any]() []reflect.Type {
	return []reflect.Type{reflect.TypeFor[MultiResult[K, V]](), reflect.TypeFor[MultiLateElement[K, V]](),
		reflect.TypeFor[MultiFate[K]](), reflect.TypeFor[K](), reflect.TypeFor[V]()}
}

// Multi joins three or more inputs on their key in one stateful step: the
// anchor, a PCollection<KV<K,V>>, with each of inputs, PCollections of the
// same type. For an anchor element a, an element of input i matches when
// lower_i <= ts - ts(a) <= upper_i, with the bounds given by its Between;
// a has one row for each combination of one matching element per input,
// with nil for an Optional input without one, and none if a Required
// input has none: the SQL
//
//	SELECT ... FROM a JOIN b ON <key, b's bounds> LEFT JOIN c ON <key, c's bounds>
//
// with every condition on the key and the anchor's time.
// Outputs.Records is a PCollection<MultiResult[K,V]>, Outputs.Late a
// PCollection<MultiLateElement[K,V]>, and with TrackFates Outputs.Fates a
// PCollection<MultiFate[K]>.
//
//	out := join.Multi[string, Event](s, impressions, []join.MultiInput{
//		join.Required(clicks, join.Between(0, 30*time.Minute)),
//		join.Optional(conversions, join.Between(0, 24*time.Hour)),
//	}, join.EmitFinal)
//
// The emission mode says when rows come out:
//   - EmitImmediate (the default) emits a row as soon as its elements are
//     there: an anchor element and one element of each Required input,
//     with nil for each Optional input that has no match buffered yet. A
//     later match of an Optional input adds its rows; the earlier rows
//     with nil stand. Without Optional inputs this is exactly the final
//     result, as early as possible.
//   - EmitFinal emits an anchor element's rows once, when event time
//     proves they are whole (its cleanup time), at their own timestamps:
//     the join holds the output watermark for them. The rows equal the
//     SQL join's.
//   - EmitRetract is EmitImmediate, and when the first match of an
//     Optional input comes for an anchor element, its rows with nil there
//     are withdrawn first (KindRetract records): the changelog nets to
//     EmitFinal's rows.
//
// AllowedLateness, CleanupEvery and ProgressHorizon are as for Interval;
// Bounded inputs take the bounded path by themselves (the interval join's
// gathering into state, then the rows of EmitFinal, whatever the mode, on
// time downstream), unless Streaming is given; Bounded forces it; TrackFates adds Outputs.Fates. Join types
// are not options here: Required and Optional say it per input.
//
// An anchor element is kept until event time passes ts + max(upper, 0)
// + allowed lateness, where upper is the largest upper bound; an element
// of input i until ts - lower_i + max(upper, 0) + allowed lateness, since
// a row needs its anchor's other partners too. An element is late iff a
// partner it could make a row with may already have been removed on its
// key; late elements go to Outputs.Late. All inputs must be windowed
// alike; the join runs in the global window and gives its outputs back
// the inputs' windowing, as Interval does.
//
// The program must call RegisterMultiTypes[K, V]() in an init function.
// Multi panics on misuse with a clear message; TryMulti returns the error.
func Multi[K, V any](s beam.Scope, anchor beam.PCollection, inputs []MultiInput, opts ...Option) Outputs {
	out, err := TryMulti[K, V](s, anchor, inputs, opts...)
	if err != nil {
		panic(err)
	}
	return out
}

// multiOptions are the options Multi takes; multiInputOptions those of
// one of its inputs.
const (
	multiOptions      = setEmit | setLateness | setCleanupEvery | setProgressHorizon | setTrackFates | setBounded | setStreaming | setTestOnly
	multiInputOptions = setBounds | setLowerExclusive | setUpperExclusive
)

// multiConfig checks Multi's options and each input's, and returns the
// config and the engine's rules.
func multiConfig(anchor beam.PCollection, inputs []MultiInput, opts []Option) (config, multiway.Rules, error) {
	const op = "join.Multi"
	cols := []beam.PCollection{anchor}
	for _, in := range inputs {
		cols = append(cols, in.col)
	}
	c, err := newConfig(op, multiOptions, withInputs(opts, cols...))
	if err != nil {
		if c.set&setType != 0 {
			err = fmt.Errorf("%w: say per input whether it is Required or Optional", err)
		}
		return c, multiway.Rules{}, err
	}
	if c.lateness < 0 || c.lateness%time.Millisecond != 0 {
		return c, multiway.Rules{}, &OptionError{Option: "AllowedLateness",
			Err: &reasonError{prefix: "beamjoin: " + op + ": ", reason: fmt.Sprintf("allowed lateness %v must be zero or a positive whole number of milliseconds", c.lateness)}}
	}
	if len(inputs) < 2 || len(inputs)+1 > multiway.MaxInputs {
		return c, multiway.Rules{}, fmt.Errorf("beamjoin: %s takes the anchor and 2 to %d further inputs, not %d: join two inputs with join.Interval", op, multiway.MaxInputs-1, len(inputs))
	}
	r := multiway.Rules{Inputs: make([]multiway.Input, len(inputs)+1), Emit: c.emit.core(), Lateness: c.lateness.Milliseconds()}
	for i, in := range inputs {
		name := fmt.Sprintf("%s input %d", op, i+2)
		ic, err := newConfig(name, multiInputOptions, in.opts)
		if err != nil {
			return c, r, err
		}
		if ic.set&setBounds == 0 {
			return c, r, fmt.Errorf("beamjoin: %s needs bounds relative to the anchor: add join.Between(lower, upper)", name)
		}
		if err := ic.bounds.Validate(); err != nil {
			return c, r, &OptionError{Option: "Between", Err: &reasonError{prefix: "beamjoin: " + name + ": ", reason: strings.TrimPrefix(err.Error(), "beamjoin: ")}}
		}
		lo, hi := ic.bounds.Millis()
		r.Inputs[i+1] = multiway.Input{Lower: lo, Upper: hi, Optional: in.optional}
	}
	return c, r, r.Validate()
}

// cleanupEvery is Multi's CleanupEvery in milliseconds: the option's, or
// a quarter of the time an element is kept beyond its own, at least 1.
func (c config) multiCleanupEvery(r multiway.Rules) int64 {
	if c.set&setCleanupEvery != 0 {
		return c.cleanupEvery.Milliseconds()
	}
	return max((r.Expiry(multiway.Anchor, 0)-1+r.Lateness)/4, 1)
}

// TryMulti is Multi returning an error instead of panicking: for options
// Multi or an input does not take or that contradict each other, for
// bounds no element can satisfy, for inputs that are not PCollections of
// KV pairs of the type arguments' types or are windowed differently, and
// for types not registered with RegisterMultiTypes.
func TryMulti[K, V any](s beam.Scope, anchor beam.PCollection, inputs []MultiInput, opts ...Option) (Outputs, error) {
	const op = "join.Multi"
	s = s.Scope(op)
	cfg, rules, err := multiConfig(anchor, inputs, opts)
	if err != nil {
		return Outputs{}, err
	}
	cols := []beam.PCollection{anchor}
	for _, in := range inputs {
		cols = append(cols, in.col)
	}
	for i, col := range cols {
		if err := checkInputs[K, V, V](op, anchor, col); err != nil {
			return Outputs{}, fmt.Errorf("%w (input %d)", err, i+1)
		}
	}
	if err := checkRegisteredBy(op, fmt.Sprintf("join.RegisterMultiTypes[%s, %s]()", typeName[K](), typeName[V]()), multiTypes[K, V]()[:3]...); err != nil {
		return Outputs{}, err
	}
	ws, err := windowing.SharedByAll(op, cols)
	if err != nil {
		return Outputs{}, err
	}
	var key, value coders.Element
	values := make([]coders.Element, len(cols))
	for i, col := range cols {
		cols[i] = ws.IntoGlobal(s.Scope(fmt.Sprintf("input%d", i+1)), col)
		if values[i], err = coders.KVValue(cols[i]); err != nil {
			return Outputs{}, err
		}
	}
	value = values[0]
	if key, err = coders.KVKey(cols[0]); err != nil {
		return Outputs{}, err
	}
	ec := multiway.Config{Rules: rules, CleanupEvery: cfg.multiCleanupEvery(rules), Horizon: cfg.horizon.Milliseconds(), Fates: cfg.trackFates, Key: key, NoWriteBehind: cfg.noWriteBehind}
	var outs []beam.PCollection
	if cfg.bounded {
		outs, err = multiway.Bounded(s.Scope("bounded"), ec, cols, values, bounded.Gathering{Hold: cfg.gatherBytes, Shards: cfg.boundedShards})
		if err != nil {
			return Outputs{}, err
		}
	} else {
		var tagged []beam.PCollection
		for i, col := range cols {
			t, err := raw.Encode(s.Scope(fmt.Sprintf("input%d", i+1)), match.Side(i), values[i], col)
			if err != nil {
				return Outputs{}, err
			}
			tagged = append(tagged, t)
		}
		all, err := beam.TryFlatten(s, tagged...)
		if err != nil {
			return Outputs{}, fmt.Errorf("beamjoin: %s: %w", op, err)
		}
		outs = beam.ParDoN(s, multiway.NewFn(ec), all)
	}
	resultType, lateType, fateType := multiTypes[K, V]()[0], multiTypes[K, V]()[1], multiTypes[K, V]()[2]
	records := beam.ParDo(s.Scope("results"), &multiResultFn{Out: beam.EncodedType{T: resultType}, Value: value}, outs[0],
		beam.TypeDefinition{Var: beam.YType, T: resultType})
	late := beam.ParDo(s.Scope("late"), &multiLateFn{Out: beam.EncodedType{T: lateType}, Value: value}, outs[1],
		beam.TypeDefinition{Var: beam.YType, T: lateType})
	out := Outputs{Records: ws.Restore(s.Scope("results"), records, cfg.lateness), Late: ws.Restore(s.Scope("late"), late, cfg.lateness)}
	if cfg.trackFates {
		out.Fates = beam.ParDo(s.Scope("fates"), &fateFn{Out: beam.EncodedType{T: fateType}, Input: "Input"}, outs[2], beam.TypeDefinition{Var: beam.YType, T: fateType})
	}
	return out, nil
}

// multiResultFn decodes rows into the author's MultiResult[K,V].
type multiResultFn struct {
	Out   beam.EncodedType
	Value coders.Element

	kind, key, values, times, time int
}

func (f *multiResultFn) Setup() error {
	return setupDecoding(f.Out.T, map[string]*int{"Kind": &f.kind, "Key": &f.key, "Values": &f.values, "Times": &f.times, "Time": &f.time}, &f.Value)
}

func (f *multiResultFn) ProcessElement(et beam.EventTime, key beam.X, r multiway.Row, emit func(beam.Y)) error {
	v := reflect.New(f.Out.T).Elem()
	v.Field(f.kind).Set(reflect.ValueOf(Kind(r.Kind)))
	v.Field(f.key).Set(reflect.ValueOf(key))
	n := len(r.Times)
	values := reflect.MakeSlice(v.Field(f.values).Type(), n, n)
	times := make([]time.Time, n)
	for i := range n {
		if r.Present&(1<<i) == 0 {
			continue
		}
		if err := setDecoded(values.Index(i), &f.Value, r.Values[i]); err != nil {
			return err
		}
		times[i] = time.UnixMilli(r.Times[i]).UTC()
	}
	v.Field(f.values).Set(values)
	v.Field(f.times).Set(reflect.ValueOf(times))
	v.Field(f.time).Set(reflect.ValueOf(et.ToTime().UTC()))
	emit(v.Interface())
	return nil
}

// multiLateFn decodes late elements into the author's MultiLateElement[K,V].
type multiLateFn struct {
	Out   beam.EncodedType
	Value coders.Element

	input, key, time, value int
}

func (f *multiLateFn) Setup() error {
	return setupDecoding(f.Out.T, map[string]*int{"Input": &f.input, "Key": &f.key, "Time": &f.time, "Value": &f.value}, &f.Value)
}

func (f *multiLateFn) ProcessElement(et beam.EventTime, key beam.X, in raw.Encoded, emit func(beam.Y)) error {
	v := reflect.New(f.Out.T).Elem()
	v.Field(f.input).Set(reflect.ValueOf(int(in.Side)))
	v.Field(f.key).Set(reflect.ValueOf(key))
	v.Field(f.time).Set(reflect.ValueOf(et.ToTime().UTC()))
	x, err := f.Value.Decode(in.Value)
	if err != nil {
		return err
	}
	v.Field(f.value).Set(valueOf(x, v.Field(f.value).Type()))
	emit(v.Interface())
	return nil
}
