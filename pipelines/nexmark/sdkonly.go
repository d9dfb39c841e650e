package nexmark

// This file holds the three queries written with the Beam SDK's own
// transforms only, as a Beam user without beamjoin would: Query 3 and the
// winning bids as hand-written stateful DoFns on streams (Beam Java's
// Query3 is one; its WinningBids uses a custom WindowFn, which the Go SDK
// does not have) and with CoGroupByKey on bounded events, as a batch
// pipeline would; Query 8 with CoGroupByKey (as Beam Java's Query8). They
// are the peers the beamjoin versions are measured against, and must give
// the same rows.

import (
	"context"
	"iter"
	"reflect"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	beam.RegisterType(reflect.TypeFor[sellerEvent]())
	beam.RegisterType(reflect.TypeFor[auctionOrBid]())
	register.Function2x0(sellerEventOfPerson)
	register.Function2x0(sellerEventOfAuction)
	register.Function2x0(auctionOrBidOfAuction)
	register.Function2x0(auctionOrBidOfBid)
	register.Emitter2[int64, sellerEvent]()
	register.Emitter2[int64, auctionOrBid]()
	register.DoFn7x1[context.Context, beam.EventTime, state.Provider, timers.Provider, int64, sellerEvent, func(Q3Row), error](&q3JoinFn{})
	register.DoFn5x0[beam.Window, int64, func(*Person) bool, func(*Auction) bool, func(Q8Row)](&q8JoinFn{})
	register.DoFn7x1[context.Context, beam.EventTime, state.Provider, timers.Provider, int64, auctionOrBid, func(beam.EventTime, WinningBid), error](&winningBidFn{})
	register.Emitter2[beam.EventTime, WinningBid]()
	register.Iter1[Person]()
	register.Iter1[Auction]()
	register.Iter1[Bid]()
	register.DoFn4x0[int64, func(*Person) bool, func(*Auction) bool, func(Q3Row)](&q3GroupFn{})
	register.Function4x0(winningBidOfGroup)
}

// sellerEvent is a person or an auction, keyed by the person's id.
type sellerEvent struct {
	IsPerson bool
	Person   Person
	Auction  Auction
}

func sellerEventOfPerson(p Person, emit func(int64, sellerEvent)) {
	if q3States[p.State] {
		emit(p.ID, sellerEvent{IsPerson: true, Person: p})
	}
}

func sellerEventOfAuction(a Auction, emit func(int64, sellerEvent)) {
	if a.Category == Q3Category {
		emit(a.Seller, sellerEvent{Auction: a})
	}
}

// Query3SDK is Query3 with the SDK's transforms only: the persons and
// auctions Query 3 selects, keyed by seller, flattened into one stateful
// DoFn that keeps the person in a Value, auctions that came before their
// person in a Bag, and clears both retain after the key's latest event
// (the rule of Beam Java's Query3.JoinDoFn, with retain for its
// maxAuctionsWaitingTime). Its rows equal Query3's when retain is at least
// c.SellerReachMs(). On bounded events it is a CoGroupByKey of the two
// in the global window and, per seller, each auction with the person when
// it is at most retain after it.
func Query3SDK(s beam.Scope, ev Events, retain time.Duration) beam.PCollection {
	s = s.Scope("nexmark.Query3SDK")
	if ev.Bounded {
		persons, auctions := q3Inputs(s, ev)
		return beam.ParDo(s, &q3GroupFn{RetainMs: retain.Milliseconds()}, beam.CoGroupByKey(s, persons, auctions))
	}
	keyed := beam.Flatten(s, beam.ParDo(s, sellerEventOfPerson, ev.Persons), beam.ParDo(s, sellerEventOfAuction, ev.Auctions))
	return beam.ParDo(s, &q3JoinFn{
		RetainMs: retain.Milliseconds(),
		Seller:   state.MakeValueState[Person]("seller"),
		Pending:  state.MakeBagState[Auction]("pending"),
		Expiry:   timers.InEventTime("expiry"),
	}, keyed)
}

// q3JoinFn is Query3SDK's join of one seller's person and auctions.
type q3JoinFn struct {
	RetainMs int64
	Seller   state.Value[Person]
	Pending  state.Bag[Auction] // auctions that came before their seller
	Expiry   timers.EventTime
}

func (f *q3JoinFn) ProcessElement(ctx context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, _ int64, e sellerEvent, emit func(Q3Row)) error {
	seller, known, err := f.Seller.Read(sp)
	if err != nil {
		return err
	}
	f.Expiry.Set(tp, time.UnixMilli(et.Milliseconds()+f.RetainMs))
	if !e.IsPerson {
		if known {
			emit(q3Row(seller, e.Auction))
			return nil
		}
		return f.Pending.Add(sp, e.Auction)
	}
	if known {
		return nil // a person id is generated once
	}
	if err := f.Seller.Write(sp, e.Person); err != nil {
		return err
	}
	pending, _, err := f.Pending.Read(sp)
	if err != nil || len(pending) == 0 {
		return err
	}
	for _, a := range pending {
		emit(q3Row(e.Person, a))
	}
	return f.Pending.Clear(sp)
}

func (f *q3JoinFn) OnTimer(ctx context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, _ int64, _ timers.Context, emit func(Q3Row)) error {
	if err := f.Seller.Clear(sp); err != nil {
		return err
	}
	return f.Pending.Clear(sp)
}

// q3GroupFn is Query3SDK's join on bounded events: one seller's persons
// (one, or none if not in OR, ID or CA) and auctions.
type q3GroupFn struct{ RetainMs int64 }

func (f *q3GroupFn) ProcessElement(_ int64, persons func(*Person) bool, auctions func(*Auction) bool, emit func(Q3Row)) {
	sellerPairs(persons, auctions, func(p Person, a Auction) {
		if d := a.DateTime - p.DateTime; d >= 0 && d <= f.RetainMs {
			emit(q3Row(p, a))
		}
	})
}

// sellerPairs calls pair for every person and auction of one seller's
// CoGroupByKey group.
func sellerPairs(persons func(*Person) bool, auctions func(*Auction) bool, pair func(Person, Auction)) {
	var ps []Person
	var p Person
	for persons(&p) {
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		return
	}
	var a Auction
	for auctions(&a) {
		for _, p := range ps {
			pair(p, a)
		}
	}
}

func q3Row(p Person, a Auction) Q3Row {
	return Q3Row{Name: p.Name, City: p.City, State: p.State, ID: a.ID}
}

// Query8SDK is Query8 with the SDK's transforms only: persons keyed by id
// and auctions by seller, each windowed into Q8Window fixed windows, then
// beam.CoGroupByKey and the cross product of each group.
func Query8SDK(s beam.Scope, ev Events) beam.PCollection {
	s = s.Scope("nexmark.Query8SDK")
	fixed := window.NewFixedWindows(Q8Window)
	persons := beam.WindowInto(s, fixed, beam.ParDo(s, personByID, ev.Persons))
	auctions := beam.WindowInto(s, fixed, beam.ParDo(s, auctionBySeller, ev.Auctions))
	return beam.ParDo(s, &q8JoinFn{}, beam.CoGroupByKey(s, persons, auctions))
}

// q8JoinFn is Query8SDK's cross product of a seller's persons and auctions
// in one window.
type q8JoinFn struct{}

func (f *q8JoinFn) ProcessElement(w beam.Window, _ int64, persons func(*Person) bool, auctions func(*Auction) bool, emit func(Q8Row)) {
	start := w.(window.IntervalWindow).Start.Milliseconds()
	sellerPairs(persons, auctions, func(p Person, a Auction) {
		emit(Q8Row{ID: p.ID, Name: p.Name, Reserve: a.Reserve, WindowStart: start})
	})
}

// auctionOrBid is an auction or a bid, keyed by the auction's id.
type auctionOrBid struct {
	IsAuction bool
	Auction   Auction
	Bid       Bid
}

func auctionOrBidOfAuction(a Auction, emit func(int64, auctionOrBid)) {
	emit(a.ID, auctionOrBid{IsAuction: true, Auction: a})
}

func auctionOrBidOfBid(b Bid, emit func(int64, auctionOrBid)) {
	emit(b.Auction, auctionOrBid{Bid: b})
}

// Tags of winningBidFn's timer family.
const (
	closeTag  = "close"
	forgetTag = "forget"
)

// WinningBidsSDK is WinningBids with the SDK's transforms only: auctions
// and bids keyed by auction, flattened into one stateful DoFn that keeps
// the auction in a Value and its bids in a Bag (one append per bid), and,
// when the watermark passes the auction's close (a timer at expires - 1),
// emits the best valid bid by WinningBids' rule and clears both. Bids of
// an auction that never closes here are cleared maxAuction after the
// latest of them. On bounded events it is a CoGroupByKey of auctions and
// bids in the global window and the best valid bid of each group.
func WinningBidsSDK(s beam.Scope, ev Events, maxAuction time.Duration) beam.PCollection {
	s = s.Scope("nexmark.WinningBidsSDK")
	if ev.Bounded {
		auctions, bids := beam.ParDo(s, auctionByID, ev.Auctions), beam.ParDo(s, bidByAuction, ev.Bids)
		return beam.ParDo(s, winningBidOfGroup, beam.CoGroupByKey(s, auctions, bids))
	}
	keyed := beam.Flatten(s, beam.ParDo(s, auctionOrBidOfAuction, ev.Auctions), beam.ParDo(s, auctionOrBidOfBid, ev.Bids))
	return beam.ParDo(s, &winningBidFn{
		MaxAuctionMs: maxAuction.Milliseconds(),
		Open:         state.MakeValueState[Auction]("auction"),
		Bids:         state.MakeBagState[Bid]("bids"),
		Timer:        timers.InEventTime("timer"),
	}, keyed)
}

// winningBidFn is WinningBidsSDK's per-auction state.
type winningBidFn struct {
	MaxAuctionMs int64
	Open         state.Value[Auction]
	Bids         state.Bag[Bid]
	Timer        timers.EventTime
}

func (f *winningBidFn) ProcessElement(ctx context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, _ int64, e auctionOrBid, emit func(beam.EventTime, WinningBid)) error {
	if e.IsAuction {
		f.Timer.Set(tp, time.UnixMilli(e.Auction.Expires-1), timers.WithTag(closeTag))
		return f.Open.Write(sp, e.Auction)
	}
	f.Timer.Set(tp, time.UnixMilli(e.Bid.DateTime+f.MaxAuctionMs+1), timers.WithTag(forgetTag))
	return f.Bids.Add(sp, e.Bid)
}

func (f *winningBidFn) OnTimer(ctx context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, id int64, tm timers.Context, emit func(beam.EventTime, WinningBid)) error {
	if tm.Tag == closeTag {
		a, ok, err := f.Open.Read(sp)
		if err != nil || !ok {
			return err
		}
		bids, _, err := f.Bids.Read(sp)
		if err != nil {
			return err
		}
		if best, found := bestBid(a, slices.Values(bids)); found {
			emit(mtime.FromMilliseconds(a.Expires-1), WinningBid{Auction: id, Price: best.Price, Bidder: best.Bidder, DateTime: best.DateTime})
		}
	}
	if err := f.Open.Clear(sp); err != nil {
		return err
	}
	return f.Bids.Clear(sp)
}

// winningBidOfGroup is WinningBidsSDK's pick on bounded events: the best
// valid bid of an auction's group, if any.
func winningBidOfGroup(id int64, auctions func(*Auction) bool, bids func(*Bid) bool, emit func(WinningBid)) {
	var a Auction
	if !auctions(&a) {
		return
	}
	all := func(yield func(Bid) bool) {
		var b Bid
		for bids(&b) {
			if !yield(b) {
				return
			}
		}
	}
	if best, found := bestBid(a, all); found {
		emit(WinningBid{Auction: id, Price: best.Price, Bidder: best.Bidder, DateTime: best.DateTime})
	}
}

// bestBid is the winner among an auction's bids by WinningBids' rule:
// the best (betterBid) of those made while it was open, at or above its
// reserve; found is false if there is none.
func bestBid(a Auction, bids iter.Seq[Bid]) (best Bid, found bool) {
	for b := range bids {
		if b.DateTime < a.DateTime || b.DateTime >= a.Expires || b.Price < a.Reserve {
			continue
		}
		if !found {
			best, found = b, true
		} else {
			best = betterBid(best, b)
		}
	}
	return best, found
}
