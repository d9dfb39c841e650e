package join

// This file holds the interval join's bounded-input path (the Bounded
// option): each element is placed in the time buckets of its key that it
// belongs to or that need it (bucketing), each bundle's placements are
// gathered by group, each group (a key and a bucket) is collected in
// state until the input is done (boundedGroups, eventtime_bounded.go),
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

// Bounded makes Interval or AsOf run their bounded-input path, for inputs
// that end (files read whole, a database table, beam.Create): it collects
// each key's elements of both sides until the input is done, sorts them by
// event time and sweeps them through the same matching rules as the
// streaming path, in memory, with a few state calls per key rather than
// per element. On Prism that is tens of times faster than the streaming
// path, which pays a state round trip per element; on Flink's batch mode
// 7.6 times at 20,000 elements and 29 times at 80,000.
//
// Interval and AsOf take this path by themselves when both inputs are
// bounded PCollections; Streaming makes them take the streaming path
// instead. Bounded forces this path on an input that Beam marks unbounded
// but that ends, such as a TestStream: records come only once it has.
//
//	results, _ := join.Interval[string, Order, Payment](s, orders, payments,
//		join.Between(0, 15*time.Minute), join.LeftOuter, join.EmitFinal, join.Bounded())
//
// The result is what the streaming path gives when the elements arrive in
// event-time order (on equal times, left before right, then in the order
// of their encoded values) with the watermark at each element's time: the
// same pairs and, whatever the emission mode, the same unmatched and
// retract records. Nothing is late, so the late output is empty.
// MaxBufferedPerKey keeps its meaning: the elements still buffered at an
// arrival are those whose cleanup timer (placed as CleanupEvery says) has
// not yet fired, and the oldest are evicted beyond the cap, as they would
// be in that stream. SplitKeys and ProgressHorizon do not apply; nor does
// UniqueLeft, which a stream's records do not depend on while the left
// input keeps it: every element is joined as without it, even a second
// left element of a key. TrackFates gives each element's fate. The
// counters are the streaming path's, each counted once, by the group that
// owns the element; buffered and keys_with_state rise and fall back to zero within
// each group's sweep, and buffered_per_key is what a group's sweep holds at
// each arrival it owns, which under AllowedLateness or a coarse
// CleanupEvery can be less than the streaming path holds (elements kept
// only for lateness are outside a bucket's context).
//
// The records carry their own event times, as on the streaming path, and
// are on time downstream: a timer holds the output watermark at or
// before each group's elements until the group is swept, so a windowed
// aggregation after the join (beam.WindowInto, then a GroupByKey or a
// Combine) counts every record, as Beam's watermark holds promise.
//
// What it costs: records come only once the whole input has been read
// (the input watermark passes the end of the global window), so an input
// that never ends yields nothing. A key's elements are not held together:
// each group is a key and a time bucket (see BoundedBucket), holding the
// bucket's own elements and those within the bounds' reach before and
// after it that its sweep needs, so a key of any size is swept in as many
// groups as it spans buckets, in parallel where the runner parallelizes
// keys, and a worker holds one group at a time: about the size of its
// encoded values plus 48 bytes per element (the distribution
// bounded_group_bytes says how much). Elements near a bucket's edges are
// placed in two or three groups, which costs their share of the width in
// more state. Under MaxBufferedPerKey a key is swept in one group, as
// before: which elements the cap evicts depends on the key's whole
// history. Before they reach state, each bundle's elements are gathered
// by group, each side on its own (up to 16 MiB of values per side and
// bundle, then handed on), so that the runner flattens the two sides and
// stores one element per group, side and bundle rather than one per
// input element.
func Bounded() Option {
	return optionFunc(func(c *config) { c.bounded = true; c.set |= setBounded })
}

// joinBounded is the bounded path: sides, each side's tagged
// PCollection<KV<K, encoded>>, become the join's records and its late
// elements, the same PCollections the streaming path's stateful DoFn
// produces. key is the coder of K, with which a group's key is written; op
// names the join in errors.
func joinBounded(s beam.Scope, op string, cfg config, key coders.Element, sides [2]beam.PCollection) (records, late beam.PCollection, err error) {
	buckets := cfg.boundedBuckets()
	placed, err := bounded.Gather(s, op, sides, bounded.Gathering{Buckets: buckets, Key: key, Hold: cfg.gatherBytes, Shards: cfg.boundedShards})
	if err != nil {
		return beam.PCollection{}, beam.PCollection{}, err
	}
	fn := &sweepFn{Rules: cfg.rules(), MaxBuffered: cfg.maxBuffered, CleanupEvery: cfg.cleanupMillis(), Buckets: buckets, Key: key, Fates: cfg.trackFates}
	fn.Groups, fn.Release = bounded.NewState()
	keyType := beam.TypeDefinition{Var: beam.XType, T: sides[Left].Type().Components()[0].Type()}
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
func (c config) boundedBuckets() bounded.Buckets {
	if c.maxBuffered > 0 {
		return bounded.Buckets{}
	}
	lo, hi := c.bounds.Millis()
	reach := max(-lo, hi, 0)
	b := bounded.Buckets{Back: reach, Ahead: reach}
	if c.emit == EmitRetract {
		b.Back = 2 * reach
	}
	b.Width = max(8*(b.Back+b.Ahead), minBoundedBucket)
	if c.bucketWidth > 0 {
		b.Width = c.bucketWidth.Milliseconds()
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
// state (boundedGroups), and the firing that releases them sorts and
// sweeps each key's values, its group: the bucket's own and the context
// it needs.
type sweepFn struct {
	Rules        match.Rules
	MaxBuffered  int
	CleanupEvery int64
	Buckets      bounded.Buckets
	Key          coders.Element
	Fates        bool // TrackFates
	// Groups and Release collect the groups' values (boundedGroups).
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
	byKey, ok, err := bounded.GroupsOf(&f.Groups, &f.Release).Release("join.Interval", sp, tc.Tag)
	if !ok || err != nil {
		return err
	}
	bucket, _, err := runnerkey.Split(rk)
	if err != nil {
		return err
	}
	for _, k := range bounded.SortedKeys(byKey) {
		key, err := f.Key.Decode([]byte(k))
		if err != nil {
			return fmt.Errorf("beamjoin: join.Interval: bounded path: decoding a key: %w", err)
		}
		f.sweep(ctx, bucket, key, byKey[k], emit, emitLate)
	}
	return nil
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
	// it owns is emitted and counted (see bucketing). Nil owns everything.
	owns       func(t int64) bool
	record     func(ts int64, r raw.Record)
	late       func(e match.Entry[[]byte])
	bufferedAt func(n int) // the key's buffered count after an arrival
	fates      bool        // emit each element's fate record (TrackFates)

	in, unmatchedOut  [2]int64
	fate              [2][match.Late + 1]int64
	pairs, retracted  int64
	buffered, removes int64
}

// arrived emits what the arrival of e produced, as joiner.process does.
func (o *sweepOutput) arrived(r match.Rules, e match.Entry[[]byte], a match.Arrival[[]byte]) {
	if o.owns != nil && !o.owns(e.Time) {
		return
	}
	o.in[e.Side]++
	if a.Late {
		o.countFate(e.Side, e.Time, match.Late)
		o.late(e)
		return
	}
	for _, x := range a.Retracted {
		o.record(x.Time, single(raw.Retract, x))
		o.retracted++
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
	o.pairs += int64(len(a.Partners))
	if a.Unmatched {
		o.record(e.Time, single(raw.Unmatched, e))
		o.unmatchedOut[e.Side]++
	}
	o.buffered++
}

// removed accounts for elements leaving the buffer, as joiner.remove does.
func (o *sweepOutput) removed(r match.Rules, xs []match.Entry[[]byte], evicted bool) {
	for _, x := range xs {
		if o.owns != nil && !o.owns(x.Time) {
			continue
		}
		if r.UnmatchedOnRemoval(x.Side, x.Matched) {
			o.record(x.Time, single(raw.Unmatched, x))
			o.unmatchedOut[x.Side]++
		}
		o.countFate(x.Side, x.Time, r.FateOf(x.Side, x.Matched, evicted))
		o.removes++
	}
}

// countFate counts the fate f of an element of side s at time t, and
// emits its fate record if the join tracks fates.
func (o *sweepOutput) countFate(s match.Side, t int64, f match.Fate) {
	o.fate[s][f]++
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
	for s := range o.in {
		add(counters.in[s], o.in[s])
		add(counters.unmatchedOut[s], o.unmatchedOut[s])
		for f, n := range o.fate[s] {
			add(counters.fate[s][f], n)
		}
	}
	add(counters.pairs, o.pairs)
	add(counters.retractions, o.retracted)
	if o.buffered > 0 {
		counters.keysWithState.Inc(ctx, 1)
		counters.buffered.Inc(ctx, o.buffered)
		counters.buffered.Inc(ctx, -o.removes)
		counters.keysWithState.Inc(ctx, -1)
	}
}
