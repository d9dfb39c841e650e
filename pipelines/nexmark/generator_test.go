package nexmark

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGeneratorProportionsAndIntegrity(t *testing.T) {
	c := DefaultConfig(7, 5000)
	events, err := Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 5000 {
		t.Fatalf("got %d events, want 5000", len(events))
	}
	persons, auctions := map[int64]bool{}, map[int64]Auction{}
	var np, na, nb int
	last := int64(0)
	for n, e := range events {
		if e.Time() < last {
			t.Fatalf("event %d at %d before previous %d", n, e.Time(), last)
		}
		last = e.Time()
		switch {
		case e.Person != nil:
			np++
			persons[e.Person.ID] = true
		case e.Auction != nil:
			na++
			if !persons[e.Auction.Seller] {
				t.Fatalf("auction %d names seller %d before it exists", e.Auction.ID, e.Auction.Seller)
			}
			if d := e.Auction.Expires - e.Auction.DateTime; d <= 0 || d > c.MaxAuctionMs() {
				t.Fatalf("auction %d lasts %d ms, want in (0, %d]", e.Auction.ID, d, c.MaxAuctionMs())
			}
			auctions[e.Auction.ID] = *e.Auction
		case e.Bid != nil:
			nb++
			if _, ok := auctions[e.Bid.Auction]; !ok || !persons[e.Bid.Bidder] {
				t.Fatalf("bid %+v names an auction or bidder not yet generated", *e.Bid)
			}
		}
	}
	if diff := cmp.Diff([]int{100, 300, 4600}, []int{np, na, nb}); diff != "" {
		t.Errorf("persons, auctions, bids (-want +got):\n%s", diff)
	}
}

func TestGeneratorDeterminedBySeed(t *testing.T) {
	a, _ := Generate(DefaultConfig(1, 500))
	b, _ := Generate(DefaultConfig(1, 500))
	other, _ := Generate(DefaultConfig(2, 500))
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different events (-first +second):\n%s", diff)
	}
	if cmp.Equal(a, other) {
		t.Error("seeds 1 and 2 gave the same events")
	}
}

// TestGeneratorHotKeys checks the share of events naming the hot key of the
// moment (an id whose offset from the first id is a multiple of the ratio):
// 1-1/ratio hot draws plus the uniform draws that land on a multiple, about
// 0.81 for ratio 4 and 0.5+ for ratio 2. Seeded, so the shares are exact
// for the seed; the bounds say what the ratio implies.
func TestGeneratorHotKeys(t *testing.T) {
	events, _ := Generate(DefaultConfig(3, 50_000))
	var auctions, hotSellers, bids, hotBidders, hotAuctions int
	for _, e := range events {
		switch {
		case e.Auction != nil:
			auctions++
			if (e.Auction.Seller-FirstPersonID)%4 == 0 {
				hotSellers++
			}
		case e.Bid != nil:
			bids++
			if (e.Bid.Bidder-FirstPersonID)%4 == 0 {
				hotBidders++
			}
			if (e.Bid.Auction-FirstAuctionID)%2 == 0 {
				hotAuctions++
			}
		}
	}
	for _, c := range []struct {
		name     string
		hot, all int
		lo, hi   float64
	}{
		{"sellers (ratio 4)", hotSellers, auctions, 0.75, 0.87},
		{"bidders (ratio 4)", hotBidders, bids, 0.75, 0.87},
		{"auctions (ratio 2)", hotAuctions, bids, 0.5, 0.85},
	} {
		if f := float64(c.hot) / float64(c.all); f < c.lo || f > c.hi {
			t.Errorf("hot %s: %d of %d = %.3f, want in [%.2f, %.2f]", c.name, c.hot, c.all, f, c.lo, c.hi)
		}
	}
}

func TestConfigCheckNamesField(t *testing.T) {
	err := Config{Events: -1}.Check()
	if got, want := fmt.Sprint(err), "nexmark: Config.Events = -1, want >= 0"; got != want {
		t.Errorf("Check() = %q, want %q", got, want)
	}
}
