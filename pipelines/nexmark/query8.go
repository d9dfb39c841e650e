package nexmark

// This file holds Query 8, monitor new users, on join.Window.

import (
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() {
	beam.RegisterType(reflect.TypeFor[Q8Row]())
	register.Function2x0(personByID)
	register.Function2x0(auctionBySeller)
	register.Function2x0(q8RowOf)
	register.Emitter1[Q8Row]()
}

// Q8Window is the size of Query 8's tumbling windows (Beam Java's
// windowSizeSec default).
const Q8Window = 10 * time.Second

// Q8Row is a row of Query 8: a person and one auction they opened in the
// same window, which starts at WindowStart (epoch ms).
type Q8Row struct {
	ID          int64  `json:"id"` // the person's id
	Name        string `json:"name"`
	Reserve     int64  `json:"reserve"`
	WindowStart int64  `json:"window_start"`
}

// Query8 is Nexmark's Query 8, monitor new users: the persons who opened an
// auction in the same 10 s tumbling window (Q8Window, aligned to the epoch)
// in which they registered, one row per person and such auction. In CQL,
// from the Nexmark suite:
//
//	SELECT Rstream(P.id, P.name, A.reserve)
//	FROM Person [RANGE 10 SECOND SLIDE 10 SECOND] P,
//	     Auction [RANGE 10 SECOND SLIDE 10 SECOND] A
//	WHERE P.id = A.seller
//
// It returns a PCollection<Q8Row>, each row timestamped with its window's
// max timestamp. The join is join.Window, persons keyed by id and auctions
// by seller, in fixed windows of Q8Window.
func Query8(s beam.Scope, ev Events) beam.PCollection {
	s = s.Scope("nexmark.Query8")
	persons, auctions := beam.ParDo(s, personByID, ev.Persons), beam.ParDo(s, auctionBySeller, ev.Auctions)
	out := join.Window[int64, Person, Auction](s, persons, auctions, join.WindowInto(window.NewFixedWindows(Q8Window)))
	return beam.ParDo(s, q8RowOf, out.Records)
}

func personByID(p Person, emit func(int64, Person))        { emit(p.ID, p) }
func auctionBySeller(a Auction, emit func(int64, Auction)) { emit(a.Seller, a) }

func q8RowOf(r join.WindowResult[int64, Person, Auction], emit func(Q8Row)) {
	if r.Kind == join.KindPair {
		emit(Q8Row{ID: r.Left.ID, Name: r.Left.Name, Reserve: r.Right.Reserve, WindowStart: r.WindowStart.UnixMilli()})
	}
}
