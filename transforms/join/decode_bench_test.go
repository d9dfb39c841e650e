package join

import (
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
)

// benchAuction and benchBid stand for a fan-out join's two sides: one
// left value joined with many right ones (Nexmark's winning bids).
type benchAuction struct {
	ID, InitialBid, Reserve, Seller, Category int64
	ItemName                                  string
	DateTime, Expires                         int64
}

type benchBid struct {
	Auction, Bidder, Price int64
	Channel                string
	DateTime               int64
}

// fanOutRecords is the records of n left values each paired with per right
// values, in the order a sweep emits them, and a resultFn set up for them.
func fanOutRecords(b testing.TB, n, per int) (*resultFn, []raw.Record) {
	b.Helper()
	s := beam.NewPipeline().Root()
	lc, err := coders.KVValue(beam.AddFixedKey(s, beam.Create(s, benchAuction{})))
	if err != nil {
		b.Fatal(err)
	}
	rc, err := coders.KVValue(beam.AddFixedKey(s, beam.Create(s, benchBid{})))
	if err != nil {
		b.Fatal(err)
	}
	f := &resultFn{Out: beam.EncodedType{T: reflect.TypeFor[Result[int64, benchAuction, benchBid]]()}, Left: lc, Right: rc}
	if err := f.Setup(); err != nil {
		b.Fatal(err)
	}
	var recs []raw.Record
	for i := range n {
		a := benchAuction{ID: int64(1000 + i), InitialBid: 100, Reserve: 150, Seller: 1234, Category: 10, ItemName: "vintage clock", DateTime: 1e12, Expires: 1e12 + 3000}
		ab, err := f.Left.Encode(a)
		if err != nil {
			b.Fatal(err)
		}
		ab = append([]byte(nil), ab...)
		for j := range per {
			bb, err := f.Right.Encode(benchBid{Auction: a.ID, Bidder: int64(2000 + j), Price: int64(100 + j), Channel: "Google", DateTime: 1e12 + int64(j)})
			if err != nil {
				b.Fatal(err)
			}
			recs = append(recs, raw.Record{Kind: raw.Pair, HasLeft: true, HasRight: true, LeftTime: 1e12, RightTime: 1e12 + int64(j), Left: ab, Right: append([]byte(nil), bb...)})
		}
	}
	return f, recs
}

// BenchmarkResultDecode decodes a join's records into Results, with the
// cache of the last value decoded on each side and without it, on 4,600
// records of two shapes: fan-out, 100 left values with 46 partners each
// (winning bids' proportion of bids to auctions is 46 : 3, and a bid names
// one of the last 100 auctions), where the cache saves most left decodes;
// and one-to-one, 4,600 left values with one partner each, where it saves
// none and costs its compare and copy.
func BenchmarkResultDecode(b *testing.B) {
	shapes := []struct {
		name   string
		n, per int
	}{{"fan-out", 100, 46}, {"one-to-one", 4600, 1}}
	for _, shape := range shapes {
		for _, cached := range []bool{false, true} {
			name := shape.name + "/uncached"
			if cached {
				name = shape.name + "/cached"
			}
			b.Run(name, func(b *testing.B) {
				f, recs := fanOutRecords(b, shape.n, shape.per)
				f.noCache = !cached
				var n int
				emit := func(beam.Y) { n++ }
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					for _, r := range recs {
						if err := f.ProcessElement(beam.EventTime(0), int64(1), r, emit); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/record")
			})
		}
	}
}
