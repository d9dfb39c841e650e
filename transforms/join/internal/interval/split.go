package interval

// This file holds the interval join's split layout (SplitKeys): how a key's
// elements are spread over time buckets, each a runner key of its own, and
// the composite that wires its two stateful stages (split_fn.go).
// docs/design/interval.md gives its rules and costs.

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/runnerkey"
)

func init() {
	// Registered by name, so that a worker in another process decodes it
	// as such.
	beam.RegisterType(reflect.TypeOf(Piece{}))
}

// Piece is an element on its way from the split layout's first stage to
// one of its key's buckets, with the element's own timestamp: its side,
// event time, encoded value, and whether the first stage judged it late
// (then it goes to its own bucket only, which reports it).
type Piece struct {
	Side  uint8
	Late  bool
	Time  int64
	Value []byte
}

// splitting is how the split layout cuts a key's event time into buckets:
// bucket b holds the elements with b*Width <= time < (b+1)*Width, which it
// owns, and copies of the elements of other buckets whose partners it may
// own. An element goes to its own bucket and to every bucket its partner
// range [PartnerRange] overlaps, so that:
//   - a left element's bucket holds all its partners, and makes its pairs
//     (whichever of the two comes second);
//   - an element's bucket holds all its partners, and decides its
//     unmatched record, its retraction and its fate.
type splitting struct {
	Width int64 // milliseconds
}

// bucketOf is the bucket that owns an element at time t.
func (sp splitting) bucketOf(t int64) int64 { return runnerkey.FloorDiv(t, sp.Width) }

// owns reports whether bucket b owns an element at time t.
func (sp splitting) owns(b, t int64) bool { return sp.bucketOf(t) == b }

// buckets calls yield with each bucket an element of side s at ts goes to,
// in order: its own and those its partner range overlaps.
func (sp splitting) buckets(r match.Rules, s match.Side, ts int64, yield func(b int64)) {
	from, to := r.PartnerRange(s, ts)
	first, last := sp.bucketOf(from), sp.bucketOf(to)
	home := sp.bucketOf(ts)
	if home < first {
		yield(home)
	}
	for b := first; b <= last; b++ {
		yield(b)
	}
	if home > last {
		yield(home)
	}
}

// buildSplit is the split layout: tagged, the PCollection<KV<K,
// raw.Encoded>> of both sides, becomes the join's records and late
// elements, the same PCollections the default layout's stateful DoFn
// produces. key is the coder of K.
func buildSplit(s beam.Scope, cfg Config, key coders.Element, tagged beam.PCollection) (records, late beam.PCollection) {
	spread, bucket := NewSplitFns(cfg, key, nil)
	pieces := beam.ParDo(s.Scope("spread"), spread, tagged)
	keyType := beam.TypeDefinition{Var: beam.XType, T: tagged.Type().Components()[0].Type()}
	return beam.ParDo2(s.Scope("buckets"), bucket, pieces, keyType)
}
