package asof

// This file holds the as-of join's bounded-input path (the Bounded
// option): each bundle's elements of each side are gathered by shard of
// the keys (bounded.Gather, with one bucket), collected in state until the
// input is done (bounded.Groups), and then each key's
// left elements are joined with its versions in memory by the same rules
// as the streaming path.

import (
	"context"
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

// asofSweepFn joins the keys of one shard once the input is done: it
// collects each gathered element in state (bounded.Groups), and the firing
// that releases them joins each key's values. Every version is known
// then, so each left element's record is final at once. The records are
// those of the streaming path, under EmitFinal, for any arrival order in
// which nothing is late; under EmitRetract too, since with every version
// known no record needs retracting.
type asofSweepFn struct {
	Rules Rules
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
	return bounded.GroupsOf(&f.Groups, &f.Release).Each("join.AsOf", sp, tc.Tag, &f.Key, func(key beam.X, entries []match.Entry[[]byte]) {
		f.join(ctx, key, entries, emit)
	})
}

// join joins a key's entries and emits the records.
func (f *asofSweepFn) join(ctx context.Context, key beam.X, entries []match.Entry[[]byte], emit func(beam.EventTime, beam.X, raw.Record)) {
	k := newKeyState()
	final := f.Rules
	final.Retract = false
	var lefts []entry
	var in [2]int64
	var superseded int64
	for _, t := range entries {
		e := entry{Time: t.Time, Value: t.Value}
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
		if r, emitted := recordOf(f.Rules, raw.Pair, l, v, ok); emitted {
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
			raw.Count.In[s].Inc(ctx, n)
		}
	}
	if pairs > 0 {
		raw.Count.Pairs.Inc(ctx, pairs)
	}
	if unmatched > 0 {
		raw.Count.UnmatchedOut[match.Left].Inc(ctx, unmatched)
	}
	if superseded > 0 {
		counters.superseded.Inc(ctx, superseded)
	}
}
