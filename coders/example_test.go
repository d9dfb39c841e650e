package coders_test

import (
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/join/match"
)

// Payment is an example value type; any type with a Beam coder works.
type Payment struct {
	OrderID string
	Cents   int64
}

// Encode a value with the coder its PCollection already has, buffer it in a
// state chunk, and read it back.
func Example() {
	_, s := beam.NewPipelineWithRoot()
	payments := beam.AddFixedKey(s, beam.Create(s, Payment{"o1", 3000})) // PCollection<KV<int,Payment>>

	value, err := coders.KVValue(payments)
	if err != nil {
		panic(err)
	}
	b, err := value.Encode(Payment{OrderID: "o1", Cents: 3000})
	if err != nil {
		panic(err)
	}
	chunk := coders.AppendEntry(nil, match.Entry[[]byte]{Side: match.Right, Time: 1_700_000_000_000, Value: b})

	buf, err := coders.DecodeChunks([][]byte{chunk})
	if err != nil {
		panic(err)
	}
	for _, e := range buf.Entries() {
		v, err := value.Decode(e.Value)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%v at %d: %+v\n", e.Side, e.Time, v)
	}
	// Output:
	// right at 1700000000000: {OrderID:o1 Cents:3000}
}
