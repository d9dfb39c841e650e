package bagstate_test

import (
	"fmt"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bagstate"
)

// An arrival appends a one-entry chunk to the key's bag; reading the bag
// back decodes every chunk into the key's buffer.
func Example() {
	chunk := bagstate.AppendEntry(nil, match.Entry[[]byte]{Side: match.Right, Time: 1_700_000_000_000, Value: []byte("payment")})

	buf, err := bagstate.DecodeChunks([][]byte{chunk})
	if err != nil {
		panic(err)
	}
	for _, e := range buf.Entries() {
		fmt.Printf("side %d at %d: %s\n", e.Side, e.Time, e.Value)
	}
	// Output:
	// side 1 at 1700000000000: payment
}
