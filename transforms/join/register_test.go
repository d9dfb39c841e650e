package join_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// The key and value types this package's tests join.
func init() {
	join.RegisterTypes[string, string, string]()
	join.RegisterTypes[string, string, note]()
	join.RegisterTypes[string, note, note]()
	join.RegisterTypes[int, string, note]()
	join.RegisterTypes[int, order, payment]()
}

// unregistered is a value type that no init function registers.
type unregistered struct{ N int }

// TestUnregisteredTypesAreAConstructionError checks that each route,
// given value types whose join types were never registered, fails when it
// is built, with an error that names the call to add, rather than on a
// worker, where the record could not be decoded.
func TestUnregisteredTypesAreAConstructionError(t *testing.T) {
	const want = "add join.RegisterTypes[string, string, join_test.unregistered]() to an init function of the program"
	for _, tc := range []struct {
		route string
		build func(s beam.Scope, left, right beam.PCollection) error
	}{
		{"join.Interval", func(s beam.Scope, left, right beam.PCollection) error {
			_, err := join.TryInterval[string, string, unregistered](s, left, right, join.Between(0, time.Second))
			return err
		}},
		{"join.Window", func(s beam.Scope, left, right beam.PCollection) error {
			_, err := join.TryWindow[string, string, unregistered](s, left, right, join.WindowInto(window.NewFixedWindows(time.Minute)))
			return err
		}},
		{"join.CoGroup", func(s beam.Scope, left, right beam.PCollection) error {
			_, err := join.TryCoGroup[string, string, unregistered](s, left, right, join.WindowInto(window.NewFixedWindows(time.Minute)))
			return err
		}},
		{"join.Connect", func(s beam.Scope, left, right beam.PCollection) error {
			_, err := join.TryConnect[string, string, unregistered](s, left, right)
			return err
		}},
	} {
		t.Run(tc.route, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			left := beam.Create(s, kvString{K: "a", V: "x"})
			right := beam.Create(s, kvUnregistered{K: "a", V: unregistered{1}})
			err := tc.build(s, beam.ParDo(s, splitKV, left), beam.ParDo(s, splitUnregistered, right))
			if err == nil || !strings.HasPrefix(err.Error(), "beamjoin: "+tc.route+": the type ") || !strings.HasSuffix(err.Error(), want) {
				t.Errorf("error = %v, want one from %s ending %q", err, tc.route, want)
			}
		})
	}
}

// TestRegisterTypesRegistersEveryRoutesTypes checks that RegisterTypes
// registers each type a route emits, and the named key and value types.
func TestRegisterTypesRegistersEveryRoutesTypes(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[join.Result[int, order, payment]](),
		reflect.TypeFor[join.LateElement[int, order, payment]](),
		reflect.TypeFor[join.WindowResult[int, order, payment]](),
		reflect.TypeFor[join.WindowLateElement[int, order, payment]](),
		reflect.TypeFor[join.Group[int, order, payment]](),
		reflect.TypeFor[join.Tagged[order, payment]](),
		reflect.TypeFor[join.Fate[int]](),
		reflect.TypeFor[order](),
		reflect.TypeFor[payment](),
	} {
		key, _ := runtime.TypeKey(typ)
		if got, ok := runtime.LookupType(key); !ok || got != typ {
			t.Errorf("%v is not registered (key %q)", typ, key)
		}
	}
}

type kvString struct{ K, V string }

type kvUnregistered struct {
	K string
	V unregistered
}

func splitKV(kv kvString) (string, string)                       { return kv.K, kv.V }
func splitUnregistered(kv kvUnregistered) (string, unregistered) { return kv.K, kv.V }
