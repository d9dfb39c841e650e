package join

// This file holds the as-of join's bounded-input path (the Bounded
// option): each bundle's elements of each side are gathered by shard of
// the keys (shardGatherFn, gatherSides), collected in state until the
// input is done (boundedGroups, eventtime_bounded.go), and then each key's
// left elements are joined with its versions in memory by the same rules
// as the streaming path.

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

func init() {
	register.DoFn4x1[beam.EventTime, beam.X, encoded, func(beam.EventTime, []byte, []part), error](&shardGatherFn{})
	register.DoFn8x1[context.Context, beam.EventTime, state.Provider, timers.Provider, []byte, []part,
		func(beam.EventTime, beam.X, record), func(beam.EventTime, beam.X, encoded), error](&asofSweepFn{})
}

// asofBounded is the bounded path: sides, each side's tagged
// PCollection<KV<K, encoded>>, become the join's records and its (empty)
// late elements, the PCollections the streaming path's DoFn produces. key
// is the coder of K; op names the join in errors.
func asofBounded(s beam.Scope, op string, cfg config, key coders.Element, sides [2]beam.PCollection) (raw, rawLate beam.PCollection, err error) {
	hold, shards := gatherBytes, boundedShards
	if cfg.gatherBytes > 0 {
		hold = cfg.gatherBytes
	}
	if cfg.boundedShards > 0 {
		shards = cfg.boundedShards
	}
	gathered, err := gatherSides(s, op, sides, func() any { return &shardGatherFn{Hold: hold, Shards: shards, Key: key} })
	if err != nil {
		return beam.PCollection{}, beam.PCollection{}, err
	}
	fn := &asofSweepFn{Rules: cfg.asofRules(), Key: key}
	fn.Groups, fn.Release = newBoundedState()
	keyType := beam.TypeDefinition{Var: beam.XType, T: sides[Left].Type().Components()[0].Type()}
	raw, rawLate = beam.ParDo2(s, fn, gathered, keyType)
	return raw, rawLate, nil
}

// shardGatherFn stamps each tagged value with its event time and gathers
// a bundle's values by shard of the keys (shardOf), so that the stateful
// step after it gets one element per shard and bundle rather than one per
// value, and its state calls fall with the number of shards, not of keys.
// It holds at most Hold bytes of values (counting 40 more for each) and
// hands everything on when it would hold more, and at the end of the
// bundle, each element at the start of time, the hold of a key's values
// that may be at any time. The order does not matter: the join sorts a
// key's values.
type shardGatherFn struct {
	Hold   int
	Shards int
	Key    coders.Element

	g gatherer
}

// Setup readies the key coder.
func (f *shardGatherFn) Setup() error { return f.Key.Setup() }

func (f *shardGatherFn) ProcessElement(et beam.EventTime, key beam.X, in encoded, emit func(beam.EventTime, []byte, []part)) error {
	k, err := f.Key.Encode(key)
	if err != nil {
		return fmt.Errorf("beamjoin: join.AsOf: bounded path: key %v: %w", key, err)
	}
	f.g.add(string(appendShard(nil, shardOf(k, f.Shards))), string(k), timed{Side: in.Side, Time: et.Milliseconds(), Value: in.Value})
	if f.g.held > f.Hold {
		f.g.flush(anyTime, emit)
	}
	return nil
}

// anyTime is the hold of a shard's values, which may be at any time.
func anyTime([]byte) beam.EventTime { return noEarlierHold }

// StartBundle drops what a failed bundle may have left.
func (f *shardGatherFn) StartBundle(func(beam.EventTime, []byte, []part)) { f.g.reset() }

// FinishBundle hands on the bundle's values.
func (f *shardGatherFn) FinishBundle(emit func(beam.EventTime, []byte, []part)) {
	f.g.flush(anyTime, emit)
}

// asofSweepFn joins the keys of one shard once the input is done: it
// collects each gathered element in state (boundedGroups), and the firing
// that releases them joins each key's values. Every version is known
// then, so each left element's record is final at once. The records are
// those of the streaming path, under EmitFinal, for any arrival order in
// which nothing is late; under EmitRetract too, since with every version
// known no record needs retracting.
type asofSweepFn struct {
	Rules asofRules
	Key   coders.Element
	// Groups and Release collect the shard's values (boundedGroups).
	Groups  state.Bag[[]byte]
	Release timers.EventTime
}

// Setup readies the key coder.
func (f *asofSweepFn) Setup() error { return f.Key.Setup() }

func (f *asofSweepFn) ProcessElement(_ context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, _ []byte, parts []part,
	_ func(beam.EventTime, beam.X, record), _ func(beam.EventTime, beam.X, encoded)) error {
	return groupsOf(&f.Groups, &f.Release).add("join.AsOf", sp, tp, et, parts)
}

func (f *asofSweepFn) OnTimer(ctx context.Context, sp state.Provider, tp timers.Provider, _ []byte, tc timers.Context,
	emit func(beam.EventTime, beam.X, record), _ func(beam.EventTime, beam.X, encoded)) error {
	byKey, ok, err := groupsOf(&f.Groups, &f.Release).release("join.AsOf", sp, tc.Tag)
	if !ok || err != nil {
		return err
	}
	for _, k := range sortedKeys(byKey) {
		key, err := f.Key.Decode([]byte(k))
		if err != nil {
			return fmt.Errorf("beamjoin: join.AsOf: bounded path: decoding a key: %w", err)
		}
		f.join(ctx, key, byKey[k], emit)
	}
	return nil
}

// join joins a key's entries and emits the records.
func (f *asofSweepFn) join(ctx context.Context, key beam.X, entries []match.Entry[[]byte], emit func(beam.EventTime, beam.X, record)) {
	k := newAsofKey()
	final := f.Rules
	final.Retract = false
	var lefts []asofEntry
	var in [2]int64
	var superseded int64
	for _, t := range entries {
		e := asofEntry{Time: t.Time, Value: t.Value}
		if t.Side == match.Left {
			lefts = append(lefts, e)
		} else if kept, _ := k.addVersion(final, e); !kept {
			superseded++
		}
		in[t.Side]++
	}
	slices.SortFunc(lefts, compareEntries)
	var pairs, unmatched int64
	for _, l := range lefts {
		v, ok := f.Rules.match(k.Versions, l.Time)
		if r, emitted := asofRecord(f.Rules, KindPair, l, v, ok); emitted {
			emit(beam.EventTime(l.Time), key, r)
			if ok {
				pairs++
			} else {
				unmatched++
			}
		}
	}
	for s, n := range in {
		if n > 0 {
			counters.in[s].Inc(ctx, n)
		}
	}
	if pairs > 0 {
		counters.pairs.Inc(ctx, pairs)
	}
	if unmatched > 0 {
		counters.unmatchedOut[Left].Inc(ctx, unmatched)
	}
	if superseded > 0 {
		asofCounters.superseded.Inc(ctx, superseded)
	}
}
