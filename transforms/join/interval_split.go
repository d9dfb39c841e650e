package join

// This file holds the interval join's split layout (SplitKeys): how a key's
// elements are spread over time buckets, each a runner key of its own, and
// the composite that wires its two stateful stages (interval_split_fn.go).
// docs/design/interval.md gives its rules and costs.

import (
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/runnerkey"
)

func init() {
	// Registered by name, so that a worker in another process decodes it
	// as such.
	beam.RegisterType(reflect.TypeOf(piece{}))
}

// SplitKeys makes the interval join keep each key's buffer in time buckets
// of width d of event time, each processed by the runner as a key of its
// own, so that a hot key's state and work are spread over several runner
// keys and no arrival or cleanup reads or writes more than the few buckets
// its element's partners can be in, however much the key buffers. It uses
// bag state and event-time timers only, which every portable runner
// supports, and writes no state value larger than a mebibyte.
//
// A first stage keyed by the join's key judges lateness and sends each
// element to its own bucket and to the buckets its partners can be in; a
// second stage keyed by key and bucket matches and cleans up. Each
// element's records and fate come from its own bucket, and a pair from its
// left element's bucket, so every record is made exactly once. The records
// are those of the default layout with cleanup at multiples of
// CleanupEvery: a key's cleanup for an expiry t runs when event time
// reaches t rounded up to the next multiple, instead of CleanupEvery less a
// millisecond after the key's earliest expiry. Under
// EmitImmediate and EmitRetract an element is reported unmatched if no
// partner had reached its bucket when it did.
//
// What it costs: several times the state calls per element of the
// default layout on keys with few elements (two stages, elements near a
// bucket's edge sent to two or three buckets), while a hot key's cost per
// element no longer grows with what it buffers, provided its elements come
// closer together than CleanupEvery (docs/performance.md). The default
// width, d = 0, is the larger of CleanupEvery and the bounds' span
// (upper - lower + 1 ms): an element's partners are then in at most two
// buckets. MaxBufferedPerKey, which caps a key's elements across its
// buckets, cannot be combined with it; Bounded ignores it.
//
// What it does not cover: two partners that both arrive further behind
// the watermark than LateBehind, on a key whose cleanup progress does not
// reach them (a new or forgotten key), can miss each other and their pair
// be lost, on any runner, where the default layout pairs them or judges
// the second late. A source that sends such elements to a late output of
// its own first, as the beamjoin command does, closes the gap
// (docs/design/interval.md, "Why the split is exact").
func SplitKeys(d time.Duration) Option {
	return optionFunc(func(c *config) { c.split, c.splitWidth = true, d; c.set |= setSplitKeys })
}

// piece is an element on its way from the split layout's first stage to
// one of its key's buckets, with the element's own timestamp: its side,
// event time, encoded value, and whether the first stage judged it late
// (then it goes to its own bucket only, which reports it).
type piece struct {
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

// splitMillis is the split layout's bucket width in milliseconds:
// SplitKeys's, or by default the larger of CleanupEvery and the bounds'
// span.
func (c config) splitMillis() int64 {
	if c.splitWidth > 0 {
		return c.splitWidth.Milliseconds()
	}
	lo, hi := c.bounds.Millis()
	return max(c.cleanupMillis(), hi-lo+1, 1)
}

// joinSplit is the split layout: tagged, the PCollection<KV<K, encoded>> of
// both sides, becomes the join's records and late elements, the same
// PCollections the default layout's stateful DoFn produces. key is the
// coder of K.
func joinSplit(s beam.Scope, cfg config, key coders.Element, tagged beam.PCollection) (raw, rawLate beam.PCollection) {
	spread, bucket := splitFns(cfg, key)
	pieces := beam.ParDo(s.Scope("spread"), spread, tagged)
	keyType := beam.TypeDefinition{Var: beam.XType, T: tagged.Type().Components()[0].Type()}
	return beam.ParDo2(s.Scope("buckets"), bucket, pieces, keyType)
}

// splitFns are the split layout's two stateful DoFns for a join with
// config cfg and key coder key: joinSplit's, and the runner-model
// harness's (model_backend_test.go).
func splitFns(cfg config, key coders.Element) (*spreadFn, *bucketFn) {
	sp := splitting{Width: cfg.splitMillis()}
	spread := &spreadFn{
		Spread: spreader{Rules: cfg.rules(), Grid: cfg.cleanupMillis(), Split: sp, Horizon: cfg.horizon.Milliseconds(),
			Key: key, NoCache: cfg.noCache, CacheBytes: cfg.cacheBytes},
		Ticks: state.MakeBagState[[]byte]("ticks"), Tick: timers.InEventTime("tick"),
	}
	bucket := &bucketFn{
		Bucket: bucketJoiner{Rules: cfg.rules(), Grid: cfg.cleanupMillis(), Split: sp, Key: key,
			NoCache: cfg.noCache, CacheBytes: cfg.cacheBytes, Fates: cfg.trackFates},
		Buffer: state.MakeBagState[[]byte]("buffer"), Cleanup: timers.InEventTime("cleanup"),
	}
	return spread, bucket
}
