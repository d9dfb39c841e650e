package nexmark_test

import (
	"fmt"

	"github.com/beamjoin/beamjoin/pipelines/nexmark"
)

// Example generates the first block of 50 events and counts the kinds.
func Example() {
	events, err := nexmark.Generate(nexmark.DefaultConfig(42, 50))
	if err != nil {
		panic(err)
	}
	var persons, auctions, bids int
	for _, e := range events {
		switch {
		case e.Person != nil:
			persons++
		case e.Auction != nil:
			auctions++
		default:
			bids++
		}
	}
	fmt.Println(persons, auctions, bids, events[0].Person.ID, events[1].Auction.Seller)
	// Output: 1 3 46 1000 1000
}
