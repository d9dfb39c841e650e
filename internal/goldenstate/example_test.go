package goldenstate_test

import (
	"fmt"

	"github.com/beamjoin/beamjoin/internal/goldenstate"
)

// A golden file's text, and its records read back.
func Example() {
	f := goldenstate.File{
		Header: []string{"Counter state (package example), one chunk per line in hex."},
		Records: []goldenstate.Record{
			{Kind: "bag", Name: "two-chunks", Chunks: [][]byte{{0x01, 0x02}, {0xff}}},
			{Kind: "value", Name: "empty"},
		},
	}
	text := f.Format()
	fmt.Print(string(text))
	records, err := goldenstate.Parse("example.hex", text)
	if err != nil {
		fmt.Println(err)
	}
	for _, r := range records {
		fmt.Printf("%s: %d chunks\n", r.Key(), len(r.Chunks))
	}
	// Output:
	// # Counter state (package example), one chunk per line in hex.
	// # Frozen: a later release must decode it as golden_test.go says.
	// bag two-chunks
	// 0102
	// ff
	// value empty
	// bag two-chunks: 2 chunks
	// value empty: 0 chunks
}
