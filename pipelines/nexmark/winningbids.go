package nexmark

// This file holds the winning bids query (Query 9, the base of Queries 4
// and 6) on join.Interval.

import (
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	join.RegisterTypes[int64, Auction, Bid]()
	beam.RegisterType(reflect.TypeFor[WinningBid]())
	register.Function2x0(auctionByID)
	register.Function2x0(bidByAuction)
	register.Function2x0(validBidAtClose)
	register.Function2x1(betterBid)
	register.Function3x0(winningBidOf)
	register.Emitter2[int64, Bid]()
	register.Emitter3[beam.EventTime, int64, Bid]()
	register.Emitter1[WinningBid]()
}

// WinningBid is a row of the winning bids query: the bid that won an
// auction.
type WinningBid struct {
	Auction  int64 `json:"auction"`
	Price    int64 `json:"price"`
	Bidder   int64 `json:"bidder"`
	DateTime int64 `json:"dateTime"`
}

// WinningBids is Nexmark's winning bids query (Query 9; Queries 4 and 6
// build on it): for each auction, the highest bid made while it was open
// (auction.dateTime <= bid.dateTime < auction.expires) at or above its
// reserve, the earliest of equal prices, then the lowest bidder id, so
// that the winner is a function of the bids alone. An auction without such
// a bid has no row. In CQL, from Beam Java's WinningBids:
//
//	SELECT Rstream(A.*, B.auction, B.bidder, MAX(B.price), B.dateTime)
//	FROM Auction A [ROWS UNBOUNDED], Bid B [ROWS UNBOUNDED]
//	WHERE A.id = B.auction AND B.datetime < A.expires AND A.expires < CURRENT_TIME
//	GROUP BY A.id
//
// It returns a PCollection<WinningBid>. The join is join.Interval, auctions
// on the left keyed by id, bids on the right keyed by auction, with
// Between(0, maxAuction): no bid of an open auction is later than that
// after it (c.MaxAuctionMs() bounds every generated auction's length).
// An auction is its id's only element (join.UniqueLeft), so the join
// buffers no bid of an auction it holds (the first one rewrites the
// auction as matched; the others make no state write), and an auction's
// id never comes back once its bids are past and no event is behind the
// stream's watermark, so its key is forgotten in the firing that removes
// its data (ProgressHorizon(0)).
// The pairs are filtered on expires and the reserve, each moved to its
// auction's last open millisecond (expires - 1), and combined per auction
// in a 1 ms window there, so that an auction's winner is emitted once,
// when the watermark passes its close, timestamped expires - 1. On bounded
// events (ev.Bounded), as a pipeline author would write it for batch, the
// join takes join.Bounded's path and the combine is in the global window,
// emitted once the input is done.
func WinningBids(s beam.Scope, ev Events, maxAuction time.Duration) beam.PCollection {
	s = s.Scope("nexmark.WinningBids")
	auctions, bids := beam.ParDo(s, auctionByID, ev.Auctions), beam.ParDo(s, bidByAuction, ev.Bids)
	out := join.Interval[int64, Auction, Bid](s, auctions, bids,
		boundedIf(ev, join.Between(0, maxAuction), join.UniqueLeft(), join.ProgressHorizon(0))...)
	valid := beam.ParDo(s, validBidAtClose, out.Records)
	if ev.Bounded {
		return beam.ParDo(s, winningBidOf, beam.CombinePerKey(s, betterBid, valid))
	}
	return bestPerAuction(s, valid)
}

// bestPerAuction takes KV<auction, Bid>, each timestamped at its
// auction's close, to the winning bid of each auction.
func bestPerAuction(s beam.Scope, valid beam.PCollection) beam.PCollection {
	atClose := beam.WindowInto(s, window.NewFixedWindows(time.Millisecond), valid)
	return beam.ParDo(s, winningBidOf, beam.CombinePerKey(s, betterBid, atClose))
}

func auctionByID(a Auction, emit func(int64, Auction)) { emit(a.ID, a) }
func bidByAuction(b Bid, emit func(int64, Bid))        { emit(b.Auction, b) }

// validBidAtClose passes on a pair's bid if it may win its auction: made
// before the auction expired, at or above its reserve. The join's bounds
// already make it no earlier than the auction.
func validBidAtClose(r join.Result[int64, Auction, Bid], emit func(beam.EventTime, int64, Bid)) {
	if r.Kind != join.KindPair {
		return
	}
	if a, b := r.Left, r.Right; b.DateTime < a.Expires && b.Price >= a.Reserve {
		emit(mtime.FromMilliseconds(a.Expires-1), a.ID, *b)
	}
}

// betterBid is the winner of two bids on one auction: the higher price,
// then the earlier time, then the lower bidder id.
func betterBid(a, b Bid) Bid {
	switch {
	case a.Price != b.Price:
		if a.Price > b.Price {
			return a
		}
		return b
	case a.DateTime != b.DateTime:
		if a.DateTime < b.DateTime {
			return a
		}
		return b
	case b.Bidder < a.Bidder:
		return b
	}
	return a
}

func winningBidOf(auction int64, b Bid, emit func(WinningBid)) {
	emit(WinningBid{Auction: auction, Price: b.Price, Bidder: b.Bidder, DateTime: b.DateTime})
}
