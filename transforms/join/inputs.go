package join

// This file holds what the joins check of their inputs (their types and
// the key type's encoding, SPEC §2.8), and what the event-time joins,
// Interval and AsOf, do around their engine: move both inputs into the
// global window, encode and tag them, and decode the engine's records and
// late elements back into the inputs' windowing.

import (
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/coder"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/typex"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/windowing"
)

// checkInputs reports why left and right are not a PCollection<KV<K,L>> and
// a PCollection<KV<K,R>>, or why K cannot be a key (checkKeyType). The
// type arguments are checked against the PCollections because the DoFns
// build their output types from the former and receive values of the
// latter: a mismatch would otherwise surface as a reflection panic on a
// worker.
func checkInputs[K, L, R any](op string, left, right beam.PCollection) error {
	cols := [2]beam.PCollection{Left: left, Right: right}
	var keys, values [2]reflect.Type
	for side, col := range cols {
		name := Side(side).String()
		if !col.IsValid() {
			return fmt.Errorf("beamjoin: %s: the %s input is not a valid PCollection", op, name)
		}
		if !typex.IsKV(col.Type()) {
			return fmt.Errorf("beamjoin: %s: the %s input is a PCollection<%v>, want a PCollection<KV<key, value>>", op, name, col.Type())
		}
		k, v := beam.ValidateKVType(col)
		keys[side], values[side] = k.Type(), v.Type()
	}
	if keys[Left] != keys[Right] {
		return fmt.Errorf("beamjoin: %s: the left key type %v differs from the right key type %v", op, keys[Left], keys[Right])
	}
	want := []struct {
		param      string
		arg, input reflect.Type
		what       string
	}{
		{"K", reflect.TypeFor[K](), keys[Left], "the inputs' key type"},
		{"L", reflect.TypeFor[L](), values[Left], "the left value type"},
		{"R", reflect.TypeFor[R](), values[Right], "the right value type"},
	}
	for _, w := range want {
		if w.arg != w.input {
			return fmt.Errorf("beamjoin: %s: type argument %s is %v, but %s is %v", op, w.param, w.arg, w.what, w.input)
		}
	}
	return checkKeyType(op, keys[Left])
}

// checkKeyType reports a key type whose Beam encoding is not deterministic:
// two equal keys could then encode differently and reach different state
// (or groups), and a key's elements would silently never meet. Beam encodes
// a struct's exported fields, so those are what is checked. A type with a
// custom coder registered as deterministic is taken at its word.
func checkKeyType(op string, t reflect.Type) error {
	if cc := coder.LookupCustomCoder(t); cc != nil && cc.IsDeterministic() {
		return nil
	}
	where, why, ok := nondeterministic(t, "", map[reflect.Type]bool{})
	if ok {
		return nil
	}
	return fmt.Errorf("beamjoin: %s: the key type %v has no deterministic encoding: %s%s; "+
		"convert the key to a string or an integer (or register a deterministic coder for it with coder.RegisterDeterministicCoder)",
		op, t, where, why)
}

// nondeterministic walks t and returns where in it (a field path such as
// "its field Loc.Lat holds a float64, and ") and why its encoding is not
// deterministic, or ok.
func nondeterministic(t reflect.Type, path string, seen map[reflect.Type]bool) (where, why string, ok bool) {
	if seen[t] {
		return "", "", true
	}
	seen[t] = true
	at := func(what string) string {
		if path == "" {
			return ""
		}
		return fmt.Sprintf("its field %s holds %s, and ", path, what)
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return at(fmt.Sprintf("a %v", t)), "floating-point numbers that are equal can encode differently (0 and -0), and NaN equals nothing", false
	case reflect.Map:
		return at(fmt.Sprintf("a %v", t)), "a map encodes its entries in Go's random iteration order", false
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return nondeterministic(t.Elem(), path, seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := f.Name
			if path != "" {
				name = path + "." + f.Name
			}
			if where, why, ok := nondeterministic(f.Type, name, seen); !ok {
				return where, why, false
			}
		}
	}
	return "", "", true
}

// eventTimeInput is both inputs of an event-time join, checked and tagged:
// Sides holds each in the global window as encoded, side-tagged values
// keyed by their key, ready to be flattened (raw.Flatten) for the join's
// own step.
type eventTimeInput struct {
	Sides                [2]beam.PCollection // by Side
	Key, Left, Right     coders.Element      // the key's and each side's value coder
	windows              windowing.Inputs
	resultType, lateType reflect.Type
}

// tagEventTime checks the inputs of the event-time join op (their types,
// the registration of Result and LateElement, their shared windowing) and
// tags each side's values in the global window.
func tagEventTime[K, L, R any](s beam.Scope, op string, left, right beam.PCollection) (eventTimeInput, error) {
	if err := checkInputs[K, L, R](op, left, right); err != nil {
		return eventTimeInput{}, err
	}
	in := eventTimeInput{resultType: reflect.TypeFor[Result[K, L, R]](), lateType: reflect.TypeFor[LateElement[K, L, R]]()}
	if err := checkRegistered[K, L, R](op, in.resultType, in.lateType); err != nil {
		return eventTimeInput{}, err
	}
	var err error
	if in.windows, err = windowing.Shared(op, left, right); err != nil {
		return eventTimeInput{}, err
	}
	left, right = in.windows.IntoGlobal(s.Scope("left"), left), in.windows.IntoGlobal(s.Scope("right"), right)
	if in.Left, err = coders.KVValue(left); err != nil {
		return eventTimeInput{}, err
	}
	if in.Right, err = coders.KVValue(right); err != nil {
		return eventTimeInput{}, err
	}
	if in.Key, err = coders.KVKey(left); err != nil {
		return eventTimeInput{}, err
	}
	if in.Sides[Left], err = raw.Encode(s.Scope("left"), match.Left, in.Left, left); err != nil {
		return eventTimeInput{}, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	if in.Sides[Right], err = raw.Encode(s.Scope("right"), match.Right, in.Right, right); err != nil {
		return eventTimeInput{}, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	return in, nil
}

// outputs decodes the join step's raw records and late elements into
// Result and LateElement values and gives them the inputs' windowing back,
// with at least the join's allowed lateness (see windowing.Inputs.Restore).
func (in eventTimeInput) outputs(s beam.Scope, raw, rawLate beam.PCollection, lateness time.Duration) Outputs {
	results := beam.ParDo(s.Scope("results"), &resultFn{Out: beam.EncodedType{T: in.resultType}, Left: in.Left, Right: in.Right}, raw,
		beam.TypeDefinition{Var: beam.YType, T: in.resultType})
	late := beam.ParDo(s.Scope("late"), &lateFn{Out: beam.EncodedType{T: in.lateType}, Left: in.Left, Right: in.Right}, rawLate,
		beam.TypeDefinition{Var: beam.YType, T: in.lateType})
	return Outputs{Records: in.windows.Restore(s.Scope("results"), results, lateness), Late: in.windows.Restore(s.Scope("late"), late, lateness)}
}
