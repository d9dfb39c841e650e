package join

// This file holds the as-of join's bounded-input path (the Bounded
// option): each bundle's elements of each side are gathered by shard of
// the keys (bounded.Gather, with one bucket), collected in state until the
// input is done (bounded.Groups), and then each key's
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
	"github.com/beamjoin/beamjoin/transforms/join/internal/bounded"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
)

func init() {
	register.DoFn8x1[context.Context, beam.EventTime, state.Provider, timers.Provider, []byte, []bounded.Part,
		func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded), error](&asofSweepFn{})
}

// asofBounded is the bounded path: sides, each side's tagged
// PCollection<KV<K, encoded>>, become the join's records and its (empty)
// late elements, the PCollections the streaming path's DoFn produces. key
// is the coder of K; op names the join in errors.
func asofBounded(s beam.Scope, op string, cfg config, key coders.Element, sides [2]beam.PCollection) (records, late beam.PCollection, err error) {
	// One bucket: a key's versions may be at any time before its left
	// elements.
	gathered, err := bounded.Gather(s, op, sides, bounded.Gathering{Key: key, Hold: cfg.gatherBytes, Shards: cfg.boundedShards})
	if err != nil {
		return beam.PCollection{}, beam.PCollection{}, err
	}
	fn := &asofSweepFn{Rules: cfg.asofRules(), Key: key}
	fn.Groups, fn.Release = bounded.NewState()
	keyType := beam.TypeDefinition{Var: beam.XType, T: sides[Left].Type().Components()[0].Type()}
	records, late = beam.ParDo2(s, fn, gathered, keyType)
	return records, late, nil
}

// asofSweepFn joins the keys of one shard once the input is done: it
// collects each gathered element in state (bounded.Groups), and the firing
// that releases them joins each key's values. Every version is known
// then, so each left element's record is final at once. The records are
// those of the streaming path, under EmitFinal, for any arrival order in
// which nothing is late; under EmitRetract too, since with every version
// known no record needs retracting.
type asofSweepFn struct {
	Rules asofRules
	Key   coders.Element
	// Groups and Release collect the shard's values (bounded.Groups).
	Groups  state.Bag[[]byte]
	Release timers.EventTime
}

// Setup readies the key coder.
func (f *asofSweepFn) Setup() error { return f.Key.Setup() }

func (f *asofSweepFn) ProcessElement(_ context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, _ []byte, parts []bounded.Part,
	_ func(beam.EventTime, beam.X, raw.Record), _ func(beam.EventTime, beam.X, raw.Encoded)) error {
	return bounded.GroupsOf(&f.Groups, &f.Release).Add("join.AsOf", sp, tp, et, parts)
}

func (f *asofSweepFn) OnTimer(ctx context.Context, sp state.Provider, tp timers.Provider, _ []byte, tc timers.Context,
	emit func(beam.EventTime, beam.X, raw.Record), _ func(beam.EventTime, beam.X, raw.Encoded)) error {
	byKey, ok, err := bounded.GroupsOf(&f.Groups, &f.Release).Release("join.AsOf", sp, tc.Tag)
	if !ok || err != nil {
		return err
	}
	for _, k := range bounded.SortedKeys(byKey) {
		key, err := f.Key.Decode([]byte(k))
		if err != nil {
			return fmt.Errorf("beamjoin: join.AsOf: bounded path: decoding a key: %w", err)
		}
		f.join(ctx, key, byKey[k], emit)
	}
	return nil
}

// join joins a key's entries and emits the records.
func (f *asofSweepFn) join(ctx context.Context, key beam.X, entries []match.Entry[[]byte], emit func(beam.EventTime, beam.X, raw.Record)) {
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
		if r, emitted := asofRecord(f.Rules, raw.Pair, l, v, ok); emitted {
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
