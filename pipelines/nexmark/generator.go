// Package nexmark generates the events of the Nexmark auction benchmark
// (Person, Auction and Bid) and writes them as JSON lines.
//
// The generator follows the Nexmark model as Beam's Java Nexmark suite
// implements it (org.apache.beam.sdk.nexmark.sources.generator): events are
// numbered 0..N-1, each block of 50 holds 1 person, 3 auctions and 46 bids,
// event time advances by 1/rate seconds per event, sellers and bidders are
// drawn among the most recent persons and bids among the most recent
// auctions, with hot sellers, hot auctions and hot bidders. Every event is a
// function of the seed and its number alone, so the same Config always gives
// the same events. Departures from the reference generator are listed on
// Config and in docs/nexmark.md.
package nexmark

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
)

// Person is a Nexmark person event.
type Person struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	EmailAddress string `json:"emailAddress"`
	CreditCard   string `json:"creditCard"`
	City         string `json:"city"`
	State        string `json:"state"`
	DateTime     int64  `json:"dateTime"`
}

// Auction is a Nexmark auction event; DateTime and Expires are epoch ms.
type Auction struct {
	ID         int64  `json:"id"`
	ItemName   string `json:"itemName"`
	InitialBid int64  `json:"initialBid"`
	Reserve    int64  `json:"reserve"`
	DateTime   int64  `json:"dateTime"`
	Expires    int64  `json:"expires"`
	Seller     int64  `json:"seller"`
	Category   int64  `json:"category"`
}

// Bid is a Nexmark bid event; DateTime is epoch ms.
type Bid struct {
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	Channel  string `json:"channel"`
	DateTime int64  `json:"dateTime"`
}

// Event is one generated event: exactly one of Person, Auction, Bid is set.
type Event struct {
	Person  *Person
	Auction *Auction
	Bid     *Bid
}

// Time is the event's dateTime in epoch ms.
func (e Event) Time() int64 {
	switch {
	case e.Person != nil:
		return e.Person.DateTime
	case e.Auction != nil:
		return e.Auction.DateTime
	default:
		return e.Bid.DateTime
	}
}

// Proportions of the event kinds in every block of ProportionTotal events.
const (
	PersonProportion  = 1
	AuctionProportion = 3
	BidProportion     = 46
	ProportionTotal   = PersonProportion + AuctionProportion + BidProportion
)

// First ids, as in the reference generator, so that small runs still match
// the queries' constants.
const (
	FirstPersonID  = 1000
	FirstAuctionID = 1000
	FirstCategory  = 10
)

// Config fixes a generated stream. The zero value of a field takes the
// default given beside it (DefaultConfig).
//
// Departures from Beam's reference generator: an auction's expiry is drawn
// uniformly in (0, 2×AvgAuctionMs] instead of from the reference's
// events-until-close estimate; a bid names one of the last InFlightAuctions
// auctions still open at the bid's time (the reference draws among recent
// auction ids regardless of expiry), falling back to the latest auction when
// none is open; names, cities and item names come from short fixed lists;
// the extra padding field is not generated.
type Config struct {
	Seed             uint64
	Events           int64
	Rate             float64 // events per second of event time; default 10000
	BaseTime         int64   // epoch ms of event 0; default 1_700_000_000_000
	ActivePeople     int64   // sellers and bidders drawn among the last this many persons; default 1000
	InFlightAuctions int64   // bids drawn among the last this many auctions; default 100
	HotSellersRatio  int64   // an auction is by the hot seller with probability 1-1/this; default 4
	HotAuctionRatio  int64   // a bid is on the hot auction with probability 1-1/this; default 2
	HotBiddersRatio  int64   // a bid is by the hot bidder with probability 1-1/this; default 4
	Categories       int64   // categories FirstCategory..FirstCategory+Categories-1; default 5
}

// DefaultConfig returns the defaults, with the given seed and event count.
func DefaultConfig(seed uint64, events int64) Config {
	return Config{Seed: seed, Events: events}.withDefaults()
}

func (c Config) withDefaults() Config {
	c.Rate = cmp.Or(c.Rate, 10000)
	c.BaseTime = cmp.Or(c.BaseTime, 1_700_000_000_000)
	c.ActivePeople = cmp.Or(c.ActivePeople, 1000)
	c.InFlightAuctions = cmp.Or(c.InFlightAuctions, 100)
	c.HotSellersRatio = cmp.Or(c.HotSellersRatio, 4)
	c.HotAuctionRatio = cmp.Or(c.HotAuctionRatio, 2)
	c.HotBiddersRatio = cmp.Or(c.HotBiddersRatio, 4)
	c.Categories = cmp.Or(c.Categories, 5)
	return c
}

// Check reports a configuration that cannot generate, naming the field.
func (c Config) Check() error {
	c = c.withDefaults()
	switch {
	case c.Events < 0:
		return fmt.Errorf("nexmark: Config.Events = %d, want >= 0", c.Events)
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("nexmark: Config.Rate = %v, want a positive number of events per second", c.Rate)
	case c.ActivePeople < 0 || c.InFlightAuctions < 0 || c.HotSellersRatio < 0 ||
		c.HotAuctionRatio < 0 || c.HotBiddersRatio < 0 || c.Categories < 0:
		return fmt.Errorf("nexmark: Config has a negative count or ratio: %+v", c)
	}
	return nil
}

// AvgAuctionMs is the mean auction duration in ms: the event time in which
// InFlightAuctions auctions are created.
func (c Config) AvgAuctionMs() int64 {
	c = c.withDefaults()
	eventsPerAuction := float64(ProportionTotal) / AuctionProportion
	ms := float64(c.InFlightAuctions) * eventsPerAuction * 1000 / c.Rate
	return max(1, int64(ms))
}

// MaxAuctionMs bounds every auction's expires - dateTime.
func (c Config) MaxAuctionMs() int64 { return 2 * c.AvgAuctionMs() }

// timeOf is the dateTime of event n.
func (c Config) timeOf(n int64) int64 {
	return c.BaseTime + int64(float64(n)*1000/c.Rate)
}

// counts of persons and auctions among events 0..n-1.
func personsBefore(n int64) int64 {
	return n/ProportionTotal*PersonProportion + min(n%ProportionTotal, PersonProportion)
}

func auctionsBefore(n int64) int64 {
	off := n % ProportionTotal
	return n/ProportionTotal*AuctionProportion + min(max(off-PersonProportion, 0), AuctionProportion)
}

// rng returns the generator of event n: a PCG seeded by (seed, n), so that
// any event can be made without making the ones before it.
func (c Config) rng(n int64) *rand.Rand {
	return rand.New(rand.NewPCG(c.Seed, uint64(n)*0x9E3779B97F4A7C15+1))
}

// pick chooses among the last `window` of `count` ids base..base+count-1,
// the hot one (the newest multiple of ratio) with probability 1-1/ratio
// when hot is set, as the reference's hot-key draws do.
func pick(r *rand.Rand, base, count, window, ratio int64) int64 {
	last := count - 1
	if ratio > 1 && r.Int64N(ratio) > 0 {
		return base + last/ratio*ratio
	}
	w := min(window, count)
	return base + last - r.Int64N(w)
}

// At returns event n (0 <= n < Events) of the stream c fixes.
func (c Config) At(n int64) Event {
	c = c.withDefaults()
	r := c.rng(n)
	t := c.timeOf(n)
	off := n % ProportionTotal
	switch {
	case off < PersonProportion:
		id := FirstPersonID + personsBefore(n)
		first := firstNames[r.IntN(len(firstNames))]
		last := lastNames[r.IntN(len(lastNames))]
		state := states[r.IntN(len(states))]
		return Event{Person: &Person{
			ID:           id,
			Name:         first + " " + last,
			EmailAddress: fmt.Sprintf("%s%d@%s.com", first, id, last),
			CreditCard:   fmt.Sprintf("%04d %04d %04d %04d", r.IntN(10000), r.IntN(10000), r.IntN(10000), r.IntN(10000)),
			City:         cities[r.IntN(len(cities))],
			State:        state,
			DateTime:     t,
		}}
	case off < PersonProportion+AuctionProportion:
		id := FirstAuctionID + auctionsBefore(n)
		seller := pick(r, FirstPersonID, personsBefore(n), c.ActivePeople, c.HotSellersRatio)
		initial := price(r)
		return Event{Auction: &Auction{
			ID:         id,
			ItemName:   items[r.IntN(len(items))],
			InitialBid: initial,
			Reserve:    initial + price(r),
			DateTime:   t,
			Expires:    t + 1 + r.Int64N(c.MaxAuctionMs()),
			Seller:     seller,
			Category:   FirstCategory + r.Int64N(c.Categories),
		}}
	default:
		auctions := auctionsBefore(n)
		auction := pick(r, FirstAuctionID, auctions, c.InFlightAuctions, c.HotAuctionRatio)
		if !c.open(auction, t) {
			auction = c.openAuction(r, auctions, t)
		}
		bidder := pick(r, FirstPersonID, personsBefore(n), c.ActivePeople, c.HotBiddersRatio)
		return Event{Bid: &Bid{
			Auction:  auction,
			Bidder:   bidder,
			Price:    price(r),
			Channel:  channels[r.IntN(len(channels))],
			DateTime: t,
		}}
	}
}

// auctionEvent is the event number of auction id.
func auctionEvent(id int64) int64 {
	k := id - FirstAuctionID
	return k/AuctionProportion*ProportionTotal + PersonProportion + k%AuctionProportion
}

// open reports whether auction id is open at t (its expires is after t).
func (c Config) open(id, t int64) bool {
	return c.At(auctionEvent(id)).Auction.Expires > t
}

// openAuction draws among the last InFlightAuctions auctions still open at
// t, or returns the latest auction when none is.
func (c Config) openAuction(r *rand.Rand, auctions, t int64) int64 {
	var open []int64
	for k := auctions - 1; k >= 0 && k >= auctions-c.InFlightAuctions; k-- {
		if c.open(FirstAuctionID+k, t) {
			open = append(open, FirstAuctionID+k)
		}
	}
	if len(open) == 0 {
		return FirstAuctionID + auctions - 1
	}
	return open[r.IntN(len(open))]
}

// price draws a price in cents spread over six decades, as the reference's
// nextPrice does.
func price(r *rand.Rand) int64 {
	return int64(math.Round(math.Pow(10, r.Float64()*6) * 100))
}

// Generate returns the Events events of c in event-number (and dateTime)
// order.
func Generate(c Config) ([]Event, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	c = c.withDefaults()
	out := make([]Event, 0, c.Events)
	for n := int64(0); n < c.Events; n++ {
		out = append(out, c.At(n))
	}
	return out, nil
}

var (
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	states     = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	cities     = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	items      = []string{"lamp", "chair", "clock", "bicycle", "camera", "guitar", "kettle", "rug", "stamp", "watch"}
	channels   = []string{"Google", "Facebook", "Baidu", "Apple"}
)
