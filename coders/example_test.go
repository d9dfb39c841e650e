package coders_test

import (
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/coders"
)

// Payment is an example value type; any type with a Beam coder works.
type Payment struct {
	OrderID string
	Cents   int64
}

// Encode a value with the coder its PCollection already has, as a DoFn
// does before buffering it in state, and read it back.
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
	v, err := value.Decode(b)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", v)
	// Output:
	// {OrderID:o1 Cents:3000}
}
