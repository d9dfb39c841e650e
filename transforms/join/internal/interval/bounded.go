package interval

// This file holds the interval join's bounded-input path (the Bounded
// option): each element is placed in the time buckets of its key that it
// belongs to or that need it (bounded.Buckets), each bundle's placements
// are gathered by group, each group (a key and a bucket) is collected in
// state until the input is done (package bounded),
// then sorted by event time and swept through the matching core in one
// timer firing. The sweep replays the streaming path's own steps
// (arrival, cleanup timer, eviction) on the sorted elements and emits
// only what the bucket owns, so the two paths give the same records and
// counters for inputs that arrive in event-time order.

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bounded"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/runnerkey"
)

func init() {
	register.DoFn8x1[context.Context, beam.EventTime, state.Provider, timers.Provider, []byte, []bounded.Part,
		func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded), error](&sweepFn{})
}

// buildBounded is the bounded path: sides, each side's tagged
// PCollection<KV<K, raw.Encoded>>, become the join's records and its late
// elements, the same PCollections the streaming path's stateful DoFn
// produces. key is the coder of K, with which a group's key is written; op
// names the join in errors.
func buildBounded(s beam.Scope, op string, cfg Config, key coders.Element, sides [2]beam.PCollection) (records, late beam.PCollection, err error) {
	buckets := cfg.boundedBuckets()
	placed, err := bounded.Gather(s, op, sides, bounded.Gathering{Buckets: buckets, Key: key, Hold: cfg.GatherBytes, Shards: cfg.Shards})
	if err != nil {
		return beam.PCollection{}, beam.PCollection{}, err
	}
	fn := &sweepFn{Rules: cfg.Rules, MaxBuffered: cfg.MaxBuffered, CleanupEvery: cfg.CleanupEvery, Buckets: buckets, Key: key, Fates: cfg.Fates}
	fn.Groups, fn.Release = bounded.NewState()
	keyType := beam.TypeDefinition{Var: beam.XType, T: sides[match.Left].Type().Components()[0].Type()}
	records, late = beam.ParDo2(s, fn, placed, keyType)
	return records, late, nil
}

// minBoundedBucket is the narrowest default bucket: one second, so that
// bounds of a few milliseconds do not cut a key into a group per element.
const minBoundedBucket = 1000

// boundedBuckets is the bounded path's bucketing: BoundedBucket's width,
// or by default eight times the context a bucket needs (Back + Ahead, at
// least minBoundedBucket), so that placing the context costs at most an
// eighth more grouping.
//
// The rules, with S = max(-lower, upper, 0) the farthest a partner can be
// from an element, either way:
//   - A pair is made by the group that owns its later element in arrival
//     order, whose partners all lie within S before it (Back >= S).
//   - An arrival's unmatched record (EmitImmediate, EmitRetract) and its
//     retractions are made by the group that owns it. A retraction needs
//     to know whether the buffered partner had matched before, which its
//     own partners up to S before it say: under EmitRetract Back is 2S.
//   - An element's removal (its EmitFinal record, its fate) is decided by
//     the group that owns it, which sees every partner it can still get,
//     all within S after it (Ahead = S).
//   - Counts (in, fates, buffered) are counted by the owner only.
//
// Nothing in the records depends on when cleanup ran, only on which
// partners arrived before which, so each element's records come out
// exactly once, as one sweep of the whole key gives them. Eviction under
// MaxBufferedPerKey does depend on when cleanup ran, and so on the key's
// whole history: then Width is 0, one group per key.
func (c Config) boundedBuckets() bounded.Buckets {
	if c.MaxBuffered > 0 {
		return bounded.Buckets{}
	}
	lo, hi := c.Rules.Bounds.Millis()
	reach := max(-lo, hi, 0)
	b := bounded.Buckets{Back: reach, Ahead: reach}
	if c.Rules.Emit == match.Retract {
		b.Back = 2 * reach
	}
	b.Width = max(8*(b.Back+b.Ahead), minBoundedBucket)
	if c.BucketWidth > 0 {
		b.Width = c.BucketWidth
	}
	return b
}

// decodeGroupKey splits a split layout's group key into its bucket and
// the join's key, decoded with c.
func decodeGroupKey(c coders.Element, g []byte) (int64, beam.X, error) {
	b, k, err := runnerkey.Split(g)
	if err != nil {
		return 0, nil, err
	}
	key, err := c.Decode(k)
	if err != nil {
		return 0, nil, fmt.Errorf("beamjoin: join.Interval: group key: %w", err)
	}
	return b, key, nil
}

// sweepFn joins the groups of one runner key, a bucket of a shard of the
// keys, once the input is done: it collects each gathered element in
// state (bounded.Groups), and the firing that releases them sorts and
// sweeps each key's values, its group: the bucket's own and the context
// it needs.
type sweepFn struct {
	Rules        match.Rules
	MaxBuffered  int
	CleanupEvery int64
	Buckets      bounded.Buckets
	Key          coders.Element
	Fates        bool // TrackFates
	// Groups and Release collect the groups' values (bounded.Groups).
	Groups  state.Bag[[]byte]
	Release timers.EventTime
}

// Setup readies the key coder.
func (f *sweepFn) Setup() error { return f.Key.Setup() }

func (f *sweepFn) ProcessElement(_ context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, _ []byte, parts []bounded.Part,
	_ func(beam.EventTime, beam.X, raw.Record), _ func(beam.EventTime, beam.X, raw.Encoded)) error {
	return bounded.GroupsOf(&f.Groups, &f.Release).Add("join.Interval", sp, tp, et, parts)
}

func (f *sweepFn) OnTimer(ctx context.Context, sp state.Provider, tp timers.Provider, rk []byte, tc timers.Context,
	emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) error {
	bucket, _, err := runnerkey.Split(rk)
	if err != nil {
		return err
	}
	return bounded.GroupsOf(&f.Groups, &f.Release).Each("join.Interval", sp, tc.Tag, &f.Key, func(key beam.X, entries []match.Entry[[]byte]) {
		f.sweep(ctx, bucket, key, entries, emit, emitLate)
	})
}

// sweep joins the values of one key's group in bucket and emits what the
// group owns.
func (f *sweepFn) sweep(ctx context.Context, bucket int64, key beam.X, entries []match.Entry[[]byte],
	emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) {
	var held int64
	for _, e := range entries {
		held += int64(len(e.Value)) + sweptEntryBytes
	}
	counters.boundedGroupBytes.Update(ctx, held)
	out := sweepOutput{
		owns:   func(t int64) bool { return f.Buckets.Owns(bucket, t) },
		record: func(ts int64, r raw.Record) { emit(beam.EventTime(ts), key, r) },
		late: func(e match.Entry[[]byte]) {
			emitLate(beam.EventTime(e.Time), key, raw.Encoded{Side: uint8(e.Side), Value: e.Value})
		},
		bufferedAt: func(n int) { counters.bufferedPerKey.Update(ctx, int64(n)) },
		fates:      f.Fates,
	}
	sweeper{Rules: f.Rules, MaxBuffered: f.MaxBuffered, CleanupEvery: f.CleanupEvery}.sweep(entries, &out)
	out.count(ctx)
}

// sweptEntryBytes is what a swept element costs in memory besides its
// value: its match.Entry (48 bytes on 64-bit platforms).
var sweptEntryBytes = int64(reflect.TypeFor[match.Entry[[]byte]]().Size())

// sweeper joins one key's elements, all known at once, as the streaming
// path joins them when they arrive in event-time order.
type sweeper struct {
	Rules        match.Rules
	MaxBuffered  int
	CleanupEvery int64
}

// arrivalOrder is the order in which the sweep lets a key's elements
// arrive: by event time, on equal times left before right, then by encoded
// value, so that the result does not depend on the order of the grouping.
func arrivalOrder(a, b match.Entry[[]byte]) int {
	if c := cmp.Compare(a.Time, b.Time); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Side, b.Side); c != 0 {
		return c
	}
	return bytes.Compare(a.Value, b.Value)
}

// sweep sorts entries into arrival order and plays them through a buffer
// as the streaming path's stateful DoFn would see them: before each
// arrival the watermark reaches its time, so every cleanup timer due by
// then fires first (CleanupEvery less a millisecond after the earliest
// expiry, as timerFor places it); then the element is joined and buffered, and the
// oldest are evicted beyond MaxBuffered. At the end the watermark passes
// everything and what is left expires.
func (sw sweeper) sweep(entries []match.Entry[[]byte], out *sweepOutput) {
	slices.SortFunc(entries, arrivalOrder)
	b := match.NewBuffer[[]byte]()
	var timer int64
	timerSet := false
	reset := func() {
		next, ok := b.NextExpiry(sw.Rules)
		timer, timerSet = cleanupAt(next, sw.CleanupEvery), ok
	}
	for _, e := range entries {
		for timerSet && timer <= e.Time {
			out.removed(sw.Rules, b.Expire(sw.Rules, timer), false)
			reset()
		}
		out.arrived(sw.Rules, e, b.Add(sw.Rules, e))
		if sw.MaxBuffered > 0 && b.Len() > sw.MaxBuffered {
			out.removed(sw.Rules, b.Evict(sw.Rules, sw.MaxBuffered), true)
		}
		if out.owns == nil || out.owns(e.Time) {
			out.bufferedAt(b.Len())
		}
		reset()
	}
	out.removed(sw.Rules, b.Expire(sw.Rules, math.MaxInt64), false)
}

// sweepOutput receives a sweep's records and late elements, and counts what
// the streaming path counts, to report once per key.
type sweepOutput struct {
	// owns reports whether the group owns an element at a time: only what
	// it owns is emitted and counted (see bounded.Buckets). Nil owns everything.
	owns       func(t int64) bool
	record     func(ts int64, r raw.Record)
	late       func(e match.Entry[[]byte])
	bufferedAt func(n int) // the key's buffered count after an arrival
	fates      bool        // emit each element's fate record (TrackFates)

	SweepCounts
}

// SweepCounts are what a sweep counts, as the streaming path counts it,
// to report once per key: per side the elements in, the unmatched records
// out and each fate; the pairs and retractions out; the arrivals buffered
// and the removals from the buffer.
type SweepCounts struct {
	In, UnmatchedOut  [2]int64
	Fate              [2][match.Late + 1]int64
	Pairs, Retracted  int64
	Buffered, Removes int64
}

// Sweep runs the bounded path's sweeps of one key's entries, given in any
// order, as a join with config cfg runs them: placed in buckets
// (Config.boundedBuckets), each bucket's group swept alone, in the order
// of the buckets. It gives each record, with its timestamp, to record,
// each late element to late, and the key's buffered count after each
// arrival a group owns to bufferedAt, and returns what the sweeps
// counted. Package join's tests compare it with the streaming path.
func Sweep(cfg Config, entries []match.Entry[[]byte], record func(ts int64, r raw.Record), late func(match.Entry[[]byte]), bufferedAt func(n int)) SweepCounts {
	buckets := cfg.boundedBuckets()
	groups := map[int64][]match.Entry[[]byte]{}
	for _, e := range entries {
		first, last := buckets.Placement(e.Time)
		for b := first; b <= last; b++ {
			groups[b] = append(groups[b], e)
		}
	}
	var owner int64
	out := sweepOutput{
		owns:       func(t int64) bool { return buckets.Owns(owner, t) },
		record:     record,
		late:       late,
		bufferedAt: bufferedAt,
	}
	for _, b := range slices.Sorted(maps.Keys(groups)) {
		owner = b
		sweeper{Rules: cfg.Rules, MaxBuffered: cfg.MaxBuffered, CleanupEvery: cfg.CleanupEvery}.sweep(groups[b], &out)
	}
	return out.SweepCounts
}

// arrived emits what the arrival of e produced, as joiner.process does.
func (o *sweepOutput) arrived(r match.Rules, e match.Entry[[]byte], a match.Arrival[[]byte]) {
	if o.owns != nil && !o.owns(e.Time) {
		return
	}
	o.In[e.Side]++
	if a.Late {
		o.countFate(e.Side, e.Time, match.Late)
		o.late(e)
		return
	}
	for _, x := range a.Retracted {
		o.record(x.Time, single(raw.Retract, x))
		o.Retracted++
	}
	for _, x := range a.Partners {
		l, rt := e, x
		if e.Side == match.Right {
			l, rt = x, e
		}
		o.record(max(l.Time, rt.Time), raw.Record{
			Kind: raw.Pair, HasLeft: true, HasRight: true,
			LeftTime: l.Time, RightTime: rt.Time, Left: l.Value, Right: rt.Value,
		})
	}
	o.Pairs += int64(len(a.Partners))
	if a.Unmatched {
		o.record(e.Time, single(raw.Unmatched, e))
		o.UnmatchedOut[e.Side]++
	}
	o.Buffered++
}

// removed accounts for elements leaving the buffer, as joiner.remove does.
func (o *sweepOutput) removed(r match.Rules, xs []match.Entry[[]byte], evicted bool) {
	for _, x := range xs {
		if o.owns != nil && !o.owns(x.Time) {
			continue
		}
		if r.UnmatchedOnRemoval(x.Side, x.Matched) {
			o.record(x.Time, single(raw.Unmatched, x))
			o.UnmatchedOut[x.Side]++
		}
		o.countFate(x.Side, x.Time, r.FateOf(x.Side, x.Matched, evicted))
		o.Removes++
	}
}

// countFate counts the fate f of an element of side s at time t, and
// emits its fate record if the join tracks fates.
func (o *sweepOutput) countFate(s match.Side, t int64, f match.Fate) {
	o.Fate[s][f]++
	if o.fates {
		o.record(t, fateRecordOf(s, t, f))
	}
}

// count reports the key's counts to the counters: one update per counter
// and key rather than per element.
func (o *sweepOutput) count(ctx context.Context) {
	add := func(c beam.Counter, n int64) {
		if n != 0 {
			c.Inc(ctx, n)
		}
	}
	for s := range o.In {
		add(counters.In[s], o.In[s])
		add(counters.UnmatchedOut[s], o.UnmatchedOut[s])
		for f, n := range o.Fate[s] {
			add(counters.Fate[s][f], n)
		}
	}
	add(counters.Pairs, o.Pairs)
	add(counters.Retractions, o.Retracted)
	if o.Buffered > 0 {
		counters.keysWithState.Inc(ctx, 1)
		counters.buffered.Inc(ctx, o.Buffered)
		counters.buffered.Inc(ctx, -o.Removes)
		counters.keysWithState.Inc(ctx, -1)
	}
}
