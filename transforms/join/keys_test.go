package join_test

// Tests of the key check (SPEC §2.8): a key must encode deterministically,
// or equal keys could reach different state and never meet.

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

// The key types that can be keys, joined with string values.
func init() {
	join.RegisterTypes[int, string, string]()
	join.RegisterTypes[account, string, string]()
	join.RegisterTypes[hiddenLoad, string, string]()
}

type (
	point      struct{ Lat, Lon float64 }
	place      struct{ Name string }
	region     struct{ Area struct{ Corner point } }
	tagged     struct{ Tags map[string]string }
	listed     struct{ Weights []float32 }
	hiddenLoad struct {
		ID string
		//lint:ignore U1000 the field is there to show that an unexported field is not part of the key's encoding
		load float64 // not encoded by Beam: not part of the key's encoding
	}
	account struct {
		ID     string
		Number int64
		Ptr    *place
	}
)

// keyedInputs returns two PCollection<KV<K,string>>s.
func keyedInputs[K any](s beam.Scope) (left, right beam.PCollection) {
	key := func(v string) (K, string) {
		var k K
		return k, v
	}
	col := beam.Create(s, "v")
	return beam.ParDo(s.Scope("left"), key, col), beam.ParDo(s.Scope("right"), key, col)
}

// everyTransform builds each of the four transforms on inputs keyed by K
// and returns their errors, by transform.
func everyTransform[K any]() map[string]string {
	out := map[string]string{}
	try := func(name string, build func(s beam.Scope, left, right beam.PCollection) error) {
		_, s := beam.NewPipelineWithRoot()
		left, right := keyedInputs[K](s)
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			err = build(s, left, right)
		}()
		out[name] = fmt.Sprint(err)
	}
	try("join.Interval", func(s beam.Scope, left, right beam.PCollection) error {
		_, err := join.TryInterval[K, string, string](s, left, right, join.Between(0, time.Second))
		return err
	})
	try("join.Window", func(s beam.Scope, left, right beam.PCollection) error {
		_, err := join.TryWindow[K, string, string](s, left, right, join.WindowInto(window.NewFixedWindows(time.Minute)))
		return err
	})
	try("join.CoGroup", func(s beam.Scope, left, right beam.PCollection) error {
		_, err := join.TryCoGroup[K, string, string](s, left, right, join.WindowInto(window.NewFixedWindows(time.Minute)))
		return err
	})
	try("join.Connect", func(s beam.Scope, left, right beam.PCollection) error {
		_, err := join.TryConnect[K, string, string](s, left, right)
		return err
	})
	return out
}

func TestKeysMustEncodeDeterministically(t *testing.T) {
	const (
		float = "floating-point numbers that are equal can encode differently (0 and -0), and NaN equals nothing"
		hint  = "; convert the key to a string or an integer (or register a deterministic coder for it with coder.RegisterDeterministicCoder)"
	)
	tests := []struct {
		name string
		errs map[string]string
		want string // the error after "beamjoin: <transform>: ", or "" for none
	}{
		{"float64", everyTransform[float64](), "the key type float64 has no deterministic encoding: " + float + hint},
		{"float32", everyTransform[float32](), "the key type float32 has no deterministic encoding: " + float + hint},
		{"struct_with_floats", everyTransform[point](),
			"the key type join_test.point has no deterministic encoding: its field Lat holds a float64, and " + float + hint},
		{"nested_struct", everyTransform[region](),
			"the key type join_test.region has no deterministic encoding: its field Area.Corner.Lat holds a float64, and " + float + hint},
		{"slice_of_floats", everyTransform[listed](),
			"the key type join_test.listed has no deterministic encoding: its field Weights holds a float32, and " + float + hint},
		{"map_field", everyTransform[tagged](),
			"the key type join_test.tagged has no deterministic encoding: its field Tags holds a map[string]string, and a map encodes its entries in Go's random iteration order" + hint},
		{"string", everyTransform[string](), ""},
		{"int", everyTransform[int](), ""},
		{"struct_of_strings_ints_and_pointers", everyTransform[account](), ""},
		{"unexported_float_is_not_encoded", everyTransform[hiddenLoad](), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]string{}
			for op := range tc.errs {
				want[op] = "<nil>"
				if tc.want != "" {
					want[op] = "beamjoin: " + op + ": " + tc.want
				}
			}
			if diff := cmp.Diff(want, tc.errs); diff != "" {
				t.Errorf("errors by transform (-want +got):\n%s", diff)
			}
		})
	}
}
