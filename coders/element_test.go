package coders_test

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/google/go-cmp/cmp"
)

func TestElementRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		value any
	}{
		{"string", "héllo"},
		{"int", 42},
		{"struct", Payment{OrderID: "o7", Cents: -5}},
		{"bytes", []byte{0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			col := beam.AddFixedKey(s, beam.Create(s, tc.value))
			value, err := coders.KVValue(col)
			if err != nil {
				t.Fatal(err)
			}
			// An Element must survive being a DoFn field: only Coder travels.
			rebuilt := coders.Element{Coder: value.Coder}
			if err := rebuilt.Setup(); err != nil {
				t.Fatal(err)
			}
			b, err := value.Encode(tc.value)
			if err != nil {
				t.Fatal(err)
			}
			got, err := rebuilt.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.value, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			key, err := coders.KVKey(col)
			if err != nil {
				t.Fatal(err)
			}
			if kb, err := key.Encode(7); err != nil || len(kb) == 0 {
				t.Errorf("key Encode(7) = %v, %v", kb, err)
			}
		})
	}
}

func TestElementErrors(t *testing.T) {
	_, s := beam.NewPipelineWithRoot()
	if _, err := coders.KVValue(beam.Create(s, "not a KV")); err == nil || err.Error() != "beamjoin: coders: string is not a KV coder" {
		t.Errorf("KVValue(non-KV) error = %v", err)
	}
	col := beam.AddFixedKey(s, beam.Create(s, Payment{}))
	value, err := coders.KVValue(col)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := value.Decode([]byte{0xff}); err == nil {
		t.Error("Decode(garbage) succeeded")
	}
}
