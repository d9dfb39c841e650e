package join

// This file holds Connect, the tagged union of two keyed streams, and the
// input checks that Connect, CoGroup and Window share.

import (
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn2x2[beam.X, beam.Y, beam.X, beam.Z](&tagFn{})
}

// Tagged is one element of Connect's output: a value of the left or of the
// right input, and which. Exactly one of Left and Right is set, the one that
// Side names, so a zero value is never mistaken for an absent one.
//
// Like Group, WindowResult and Result, Tagged is generic: the program
// registers its instances with RegisterTypes.
type Tagged[L, R any] struct {
	Side  Side
	Left  *L
	Right *R
}

// Connect puts two keyed streams into one, for a stateful DoFn of the
// caller's own that sees both sides of a key: Flink's connect followed by a
// keyed CoProcessFunction. left is a PCollection<KV<K,L>>, right a
// PCollection<KV<K,R>>; the result is a PCollection<KV<K, Tagged[L,R]>>
// holding every element of both, with its key, element timestamp and window
// unchanged. The type arguments must be given, because Go cannot infer them
// from a beam.PCollection:
//
//	events := join.Connect[string, Order, Payment](s, orders, payments)
//	alerts := beam.ParDo(s, &timeoutFn{...}, events) // a DoFn on KV<string, join.Tagged[Order, Payment]>
//
// The DoFn's state and timers are per key (and window), so it sees the
// orders and payments of one key together, in whatever order the runner
// delivers them (not necessarily their event-time order), and uses
// event-time timers to act on what has not arrived. Package
// pipelines/ordertimeout is a complete example: an order without a payment
// within a timeout raises an alert.
//
// Connect does no buffering, grouping or matching: it costs one fused ParDo
// per side and a Flatten. The program must call RegisterTypes[K, L, R]() in
// an init function. Connect panics on misuse; TryConnect returns the error.
func Connect[K, L, R any](s beam.Scope, left, right beam.PCollection) beam.PCollection {
	out, err := TryConnect[K, L, R](s, left, right)
	if err != nil {
		panic(err)
	}
	return out
}

// TryConnect is Connect returning an error instead of panicking: when left
// or right is not a PCollection of KV pairs, when their key types differ,
// when the type arguments are not their key and value types, or when
// Tagged[L, R] is not registered with RegisterTypes.
func TryConnect[K, L, R any](s beam.Scope, left, right beam.PCollection) (beam.PCollection, error) {
	const op = "join.Connect"
	if err := checkInputs[K, L, R](op, left, right); err != nil {
		return beam.PCollection{}, err
	}
	out := reflect.TypeFor[Tagged[L, R]]()
	if err := checkRegistered[K, L, R](op, out); err != nil {
		return beam.PCollection{}, err
	}
	s = s.Scope(op)
	tag := func(side Side, col beam.PCollection) ([]beam.PCollection, error) {
		return beam.TryParDo(s.Scope(side.String()), &tagFn{Side: side, Out: beam.EncodedType{T: out}}, col,
			beam.TypeDefinition{Var: beam.ZType, T: out})
	}
	l, err := tag(Left, left)
	if err != nil {
		return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	r, err := tag(Right, right)
	if err != nil {
		return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	merged, err := beam.TryFlatten(s, l[0], r[0])
	if err != nil {
		return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	return merged, nil
}

// tagFn wraps one side's values in a Tagged. It is not generic, so that it
// can be registered; the Tagged type it builds is a field, bound to the
// output's universal type at construction.
type tagFn struct {
	Side Side
	Out  beam.EncodedType

	side, value int // field indexes in Out
}

func (f *tagFn) Setup() {
	f.side = fieldIndex(f.Out.T, "Side")
	f.value = fieldIndex(f.Out.T, sideField[f.Side])
}

func (f *tagFn) ProcessElement(k beam.X, v beam.Y) (beam.X, beam.Z) {
	out := reflect.New(f.Out.T).Elem()
	out.Field(f.side).Set(reflect.ValueOf(f.Side))
	setPointer(out.Field(f.value), v)
	return k, out.Interface()
}
