package join

// This file holds the check that a key type has a deterministic encoding
// (SPEC §2.8), which all four transforms make through checkInputs.

import (
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/coder"
)

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
