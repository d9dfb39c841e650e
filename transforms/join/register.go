package join

// This file holds RegisterTypes, and the check each transform makes at
// construction that the generic types it emits are registered.

import (
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime"
)

// RegisterTypes registers with Beam every type the joins emit for keys K,
// left values L and right values R (Result, LateElement, WindowResult,
// WindowLateElement, Group, Tagged and Fate), and K, L and R themselves
// when they are named types. Call it from an init function of the program,
// once for each K, L, R it joins:
//
//	func init() { join.RegisterTypes[string, Order, Payment]() }
//
// Beam's workers find a type of a PCollection or of a DoFn's field by the
// name it was registered under. A package cannot register the instances
// of its generic types that its users make, and a worker that does not know
// one rebuilds it as an unnamed struct and fails on its first record. That
// holds for Prism's workers in the launching process too, and for workers
// in other processes (Dataflow, Flink, Prism's PROCESS environment), which
// run the program's own binary and so its init functions. Each transform
// checks at construction that its types are registered and, if not, fails
// with an error that names this call. Beam refuses registrations once
// beam.Init has run, so the call belongs in init, not in main.
func RegisterTypes[K, L, R any]() {
	for _, t := range []reflect.Type{
		reflect.TypeFor[Result[K, L, R]](),
		reflect.TypeFor[LateElement[K, L, R]](),
		reflect.TypeFor[WindowResult[K, L, R]](),
		reflect.TypeFor[WindowLateElement[K, L, R]](),
		reflect.TypeFor[Group[K, L, R]](),
		reflect.TypeFor[Tagged[L, R]](),
		reflect.TypeFor[Fate[K]](),
		reflect.TypeFor[K](),
		reflect.TypeFor[L](),
		reflect.TypeFor[R](),
	} {
		if _, ok := runtime.TypeKey(t); ok && t.Kind() != reflect.Interface {
			beam.RegisterType(t)
		}
	}
}

// checkRegistered reports the first of types that Beam's registry does
// not hold, as the transform op's error naming the RegisterTypes call to
// add.
func checkRegistered[K, L, R any](op string, types ...reflect.Type) error {
	for _, t := range types {
		key, ok := runtime.TypeKey(t)
		if !ok {
			continue
		}
		if _, ok := runtime.LookupType(key); !ok {
			return fmt.Errorf("beamjoin: %s: the type %v is not registered with Beam, so a worker could not decode it: "+
				"add join.RegisterTypes[%s, %s, %s]() to an init function of the program",
				op, t, typeName[K](), typeName[L](), typeName[R]())
		}
	}
	return nil
}

// typeName writes T as Go source names it from another package
// ("main.Order", "string").
func typeName[T any]() string { return reflect.TypeFor[T]().String() }
