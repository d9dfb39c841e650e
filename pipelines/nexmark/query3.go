package nexmark

// This file holds Query 3, local item suggestion, on join.Interval.

import (
	"math"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	join.RegisterTypes[int64, Person, Auction]()
	beam.RegisterType(reflect.TypeFor[Q3Row]())
	register.Function2x0(personInQ3States)
	register.Function2x0(auctionInQ3Category)
	register.Function2x0(q3RowOf)
	register.Emitter2[int64, Person]()
	register.Emitter2[int64, Auction]()
	register.Emitter1[Q3Row]()
}

// Q3Row is a row of Query 3: a seller in OR, ID or CA and one of their
// auctions in category 10.
type Q3Row struct {
	Name  string `json:"name"`
	City  string `json:"city"`
	State string `json:"state"`
	ID    int64  `json:"id"` // the auction's id
}

// q3States are the states Query 3 selects persons in.
var q3States = map[string]bool{"OR": true, "ID": true, "CA": true}

// Q3Category is the auction category Query 3 selects.
const Q3Category = 10

// SellerReachMs is how far back in event time an auction's seller can be:
// the generator draws sellers among the last max(ActivePeople,
// HotSellersRatio) persons, and ProportionTotal events make one person, so
// a seller is never more than that many persons' worth of events, at
// Rate, older than the auction (rounded up to the millisecond).
func (c Config) SellerReachMs() int64 {
	c = c.withDefaults()
	people := max(c.ActivePeople, c.HotSellersRatio)
	return int64(math.Ceil(float64(people*ProportionTotal) * 1000 / c.Rate))
}

// Query3 is Nexmark's Query 3, local item suggestion: every auction in
// category 10 with its seller, when the seller lives in OR, ID or CA. In
// CQL, from the Nexmark suite:
//
//	SELECT Istream(P.name, P.city, P.state, A.id)
//	FROM Auction A [ROWS UNBOUNDED], Person P [ROWS UNBOUNDED]
//	WHERE A.seller = P.id AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')
//	AND A.category = 10
//
// It returns a PCollection<Q3Row>. The join is join.Interval, persons on
// the left keyed by id, auctions on the right keyed by seller, with
// Between(0, retain): an unbounded join must forget persons at some point,
// and this is its retention rule, a person joins the auctions up to retain
// after it. With retain = c.SellerReachMs() the result is the unbounded
// join's, since no auction names a seller older than that; Beam Java's
// Query3 instead keeps a person 600 s of event time after its last event
// (maxAuctionsWaitingTime). Interval rather than Connect because the rule
// is an interval: the join buffers each person for retain and, since a
// person is its id's only element (join.UniqueLeft), no auction of a
// person it holds (the first one rewrites the person as matched), and
// cleans up with its own timers. Each row's timestamp is its auction's.
// On bounded events (ev.Bounded) the join takes join.Bounded's path: no
// state or timers, each key's elements swept in memory.
func Query3(s beam.Scope, ev Events, retain time.Duration) beam.PCollection {
	s = s.Scope("nexmark.Query3")
	persons, auctions := q3Inputs(s, ev)
	// A person's id never comes back once its auctions are past (sellers
	// are recent persons), and the stream's watermark is exact (no event
	// is ever behind it), so its key is forgotten in the firing that
	// removes its data (ProgressHorizon(0)) rather than kept an hour. A
	// person is the only left element of its id (UniqueLeft), so the join
	// buffers no auction whose seller it holds. An auction whose seller it
	// does not hold (about half of them: the seller lives elsewhere)
	// expires as soon as the watermark passes it, and a hot seller has one
	// nearly every second: cleaning up every retain (CleanupEvery) rather
	// than every retain/4, the default, takes one firing for such a key's
	// retain worth of auctions, which keeps elements at most retain past
	// their expiry.
	out := join.Interval[int64, Person, Auction](s, persons, auctions,
		boundedIf(ev, join.Between(0, retain), join.ProgressHorizon(0), join.UniqueLeft(),
			join.CleanupEvery(max(retain.Truncate(time.Millisecond), time.Millisecond)))...)
	return beam.ParDo(s, q3RowOf, out.Records)
}

// q3Inputs are Query 3's selections, keyed: persons by id, auctions by
// seller.
func q3Inputs(s beam.Scope, ev Events) (persons, auctions beam.PCollection) {
	return beam.ParDo(s, personInQ3States, ev.Persons), beam.ParDo(s, auctionInQ3Category, ev.Auctions)
}

func personInQ3States(p Person, emit func(int64, Person)) {
	if q3States[p.State] {
		emit(p.ID, p)
	}
}

func auctionInQ3Category(a Auction, emit func(int64, Auction)) {
	if a.Category == Q3Category {
		emit(a.Seller, a)
	}
}

func q3RowOf(r join.Result[int64, Person, Auction], emit func(Q3Row)) {
	if r.Kind == join.KindPair {
		emit(Q3Row{Name: r.Left.Name, City: r.Left.City, State: r.Left.State, ID: r.Right.ID})
	}
}

// boundedIf adds join.Bounded to opts when ev is bounded: on bounded input
// the interval join sweeps each key in memory instead of keeping state
// and timers, the choice a pipeline author makes for batch.
func boundedIf(ev Events, opts ...join.Option) []join.Option {
	if ev.Bounded {
		return append(opts, join.Bounded())
	}
	return opts
}
