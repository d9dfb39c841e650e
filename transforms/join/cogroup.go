package join

// This file holds CoGroup, and the windowing and grouping that CoGroup and
// Window share.

import (
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/typex"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn5x1[beam.Window, beam.X, func(*beam.Y) bool, func(*beam.Z) bool, func(beam.EventTime, beam.W), error](&coGroupFn{})
	register.Iter1[beam.Y]()
	register.Iter1[beam.Z]()
	register.Emitter2[beam.EventTime, beam.W]()
}

// Group is everything CoGroup collected for one key in one window: the
// values of the left input and of the right input, each in no particular
// order. One of Left and Right may be empty, never both.
//
// WindowStart and WindowEnd are the window's bounds, [WindowStart,
// WindowEnd). The Group's element timestamp is the window's max timestamp,
// WindowEnd minus one millisecond. Inputs in the global window (not windowed
// at all) give one Group per key, with WindowStart at Beam's minimum
// timestamp and WindowEnd just past the end of the global window; on an
// unbounded input that window only closes when the input ends.
type Group[K, L, R any] struct {
	Key         K
	Left        []L
	Right       []R
	WindowStart time.Time
	WindowEnd   time.Time
}

// CoGroup groups left, a PCollection<KV<K,L>>, and right, a
// PCollection<KV<K,R>>, by key and window: Flink's coGroup. The result is a
// PCollection<Group[K,L,R]> with one Group per key and window in which either
// input has values, timestamped with the window's max timestamp. The type
// arguments must be given, because Go cannot infer them from a
// beam.PCollection:
//
//	groups := join.CoGroup[string, Order, Payment](s, orders, payments,
//		join.WindowInto(window.NewFixedWindows(time.Hour)))
//
// Without the WindowInto option the inputs' own windowing is used, as set by
// the caller with beam.WindowInto; both inputs must then be windowed alike.
// Fixed, sliding and session windows all work. With sliding windows an
// element is in several windows, so it appears in several Groups; with
// sessions, a session spans the values of both inputs whose gaps are short
// enough, merged across the two.
//
// CoGroup is beam.CoGroupByKey with the values collected into one typed
// record, so windows fire as Beam's GroupByKey fires them: by default once,
// when the watermark passes the window's end, with elements that arrive
// later dropped. A trigger the caller sets with beam.WindowInto applies, and
// each firing gives its own Group. CoGroup holds a key and window's values
// in memory. It panics on misuse; TryCoGroup returns the error.
func CoGroup[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) beam.PCollection {
	out, err := TryCoGroup[K, L, R](s, left, right, opts...)
	if err != nil {
		panic(err)
	}
	return out
}

// TryCoGroup is CoGroup returning an error instead of panicking: for an
// option CoGroup does not take, for inputs that are not PCollections of KV
// pairs with the type arguments' key and value types, and for inputs that are
// windowed differently.
func TryCoGroup[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) (beam.PCollection, error) {
	const op = "join.CoGroup"
	s, cfg, err := windowedSetup[K, L, R](s, op, coGroupOptions, opts, left, right)
	if err != nil {
		return beam.PCollection{}, err
	}
	grouped, err := groupByKeyAndWindow(s, op, cfg.window, left, right)
	if err != nil {
		return beam.PCollection{}, err
	}
	out := reflect.TypeFor[Group[K, L, R]]()
	groups, err := beam.TryParDo(s, &coGroupFn{Out: beam.EncodedType{T: out}}, grouped,
		beam.TypeDefinition{Var: beam.WType, T: out})
	if err != nil {
		return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	return groups[0], nil
}

// windowedSetup is the setup that CoGroup and Window (named op) share:
// their options checked, the inputs checked against the type arguments,
// and the transform's scope.
func windowedSetup[K, L, R any](s beam.Scope, op string, allowed setMask, opts []Option, left, right beam.PCollection) (beam.Scope, config, error) {
	cfg, err := windowedConfig(op, allowed, opts)
	if err != nil {
		return s, cfg, err
	}
	if err := checkInputs[K, L, R](op, left, right); err != nil {
		return s, cfg, err
	}
	return s.Scope(op), cfg, nil
}

// groupByKeyAndWindow windows both inputs with fn, if it is not nil, and
// groups them by key and window: a PCollection<CoGBK<K,L,R>>.
func groupByKeyAndWindow(s beam.Scope, op string, fn *window.Fn, left, right beam.PCollection) (beam.PCollection, error) {
	if fn != nil {
		var err error
		if left, err = beam.TryWindowInto(s.Scope("left"), fn, left); err != nil {
			return beam.PCollection{}, fmt.Errorf("beamjoin: %s: windowing the left input: %w", op, err)
		}
		if right, err = beam.TryWindowInto(s.Scope("right"), fn, right); err != nil {
			return beam.PCollection{}, fmt.Errorf("beamjoin: %s: windowing the right input: %w", op, err)
		}
	}
	// CoGroupByKey checks this too, but its message names neither the
	// inputs nor the remedy.
	if lw, rw := left.WindowingStrategy(), right.WindowingStrategy(); !lw.Equals(rw) {
		return beam.PCollection{}, fmt.Errorf("beamjoin: %s: the left input is windowed by %s and the right by %s: window both alike with beam.WindowInto, or pass join.WindowInto",
			op, windowFnName(lw.Fn), windowFnName(rw.Fn))
	}
	grouped, err := beam.TryCoGroupByKey(s, left, right)
	if err != nil {
		return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	return grouped, nil
}

// span is a window's bounds, as CoGroup and Window report them, and its max
// timestamp, the element timestamp of their records.
type span struct {
	start, end time.Time
	max        mtime.Time
}

func spanOf(w typex.Window) (span, error) {
	switch w := w.(type) {
	case window.IntervalWindow:
		return span{
			start: mtime.Time(w.Start).ToTime().UTC(),
			end:   mtime.Time(w.End).ToTime().UTC(),
			max:   mtime.Time(w.MaxTimestamp()),
		}, nil
	case window.GlobalWindow:
		return span{
			start: mtime.MinTimestamp.ToTime().UTC(),
			end:   mtime.EndOfGlobalWindowTime.Add(time.Millisecond).ToTime().UTC(),
			max:   mtime.EndOfGlobalWindowTime,
		}, nil
	}
	return span{}, fmt.Errorf("beamjoin: unsupported window %v of type %T", w, w)
}

// coGroupFn turns a CoGBK result into a Group. Like tagFn it is not
// generic: the Group type is a field, bound to the output's universal type
// at construction.
type coGroupFn struct {
	Out beam.EncodedType

	key, left, right, start, end int // field indexes in Out
}

func (f *coGroupFn) Setup() {
	t := f.Out.T
	f.key, f.left, f.right = fieldIndex(t, "Key"), fieldIndex(t, "Left"), fieldIndex(t, "Right")
	f.start, f.end = fieldIndex(t, "WindowStart"), fieldIndex(t, "WindowEnd")
}

func (f *coGroupFn) ProcessElement(w beam.Window, k beam.X, lefts func(*beam.Y) bool, rights func(*beam.Z) bool, emit func(beam.EventTime, beam.W)) error {
	sp, err := spanOf(w)
	if err != nil {
		return err
	}
	g := reflect.New(f.Out.T).Elem()
	g.Field(f.key).Set(reflect.ValueOf(k))
	ls := g.Field(f.left)
	var l beam.Y
	for lefts(&l) {
		ls.Set(reflect.Append(ls, valueOf(l, ls.Type().Elem())))
	}
	rs := g.Field(f.right)
	var r beam.Z
	for rights(&r) {
		rs.Set(reflect.Append(rs, valueOf(r, rs.Type().Elem())))
	}
	g.Field(f.start).Set(reflect.ValueOf(sp.start))
	g.Field(f.end).Set(reflect.ValueOf(sp.end))
	emit(sp.max, g.Interface())
	return nil
}
