package interval

// This file holds the split layout's two stateful DoFns (SplitKeys):
// spreadFn, keyed by the join's key, which judges lateness and sends each
// element to its buckets, and bucketFn, keyed by key and bucket, which
// matches and cleans up. Their timers share one grid, the multiples of
// CleanupEvery, and the first stage's hold keeps the second stage's
// cleanup behind its own: see spreader.

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bagstate"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/runnerkey"
	"github.com/beamjoin/beamjoin/transforms/join/internal/timertag"
)

func init() {
	register.DoFn7x1[context.Context, beam.EventTime, state.Provider, timers.Provider, beam.X, raw.Encoded,
		func(beam.EventTime, []byte, Piece), error](&spreadFn{})
	register.Emitter3[beam.EventTime, []byte, Piece]()
	register.DoFn8x1[context.Context, beam.EventTime, state.Provider, timers.Provider, []byte, Piece,
		func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded), error](&bucketFn{})
}

// spreadFn is the split layout's first stage, keyed by the join's key.
type spreadFn struct {
	Spread spreader
	Ticks  state.Bag[[]byte]
	Tick   timers.EventTime
}

func (f *spreadFn) Setup() error { return f.Spread.Key.Setup() }

// StartBundle and FinishBundle drop the bundle's cache of key states.
func (f *spreadFn) StartBundle(func(beam.EventTime, []byte, Piece))  { f.Spread.cache.clear() }
func (f *spreadFn) FinishBundle(func(beam.EventTime, []byte, Piece)) { f.Spread.cache.clear() }

func (f *spreadFn) ProcessElement(ctx context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, in raw.Encoded,
	emit func(beam.EventTime, []byte, Piece)) error {
	return f.Spread.process(ctx, splitStores{sp: sp, tp: tp, bag: &f.Ticks, timer: &f.Tick}, et, key, in, emit)
}

func (f *spreadFn) OnTimer(ctx context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, tc timers.Context,
	_ func(beam.EventTime, []byte, Piece)) error {
	return f.Spread.fire(ctx, splitStores{sp: sp, tp: tp, bag: &f.Ticks, timer: &f.Tick}, key, firedOf(tc, et))
}

// splitStores is the state and timer of the key (or bucket) being
// processed.
type splitStores struct {
	sp    state.Provider
	tp    timers.Provider
	bag   *state.Bag[[]byte]
	timer *timers.EventTime
}

// spreader is the split layout's first stage. Per key it keeps its cleanup
// progress p (the time of its latest tick) and the set of multiples of the
// grid (CleanupEvery) at which something it sent on expires, as runs of
// consecutive multiples. Its timer ticks at the earliest; a tick at g
// drops the multiples up to g and makes g the progress, from which
// lateness is judged as in the default layout (match.Rules.IsLate). With
// no multiple left, the timer forgets the key's progress after a join
// memory and the progress horizon (forgetTime): the default layout waits
// the horizon only, but a bucket may lag its key's first stage. A key whose elements come closer together than CleanupEvery, a
// hot key, has one run, however much it buffers.
//
// The runs are kept in the key's bag as stand-ins: value-less left
// entries that expire at a multiple, each adding that multiple, or, with
// the matched flag set, every multiple from the greatest one below it
// (the end of a run); a tick appends a cleanup record, and every
// compactAfter dead records the bag is rewritten as the progress and two
// stand-ins per run.
//
// Its buckets clean up on the same grid, each at the multiples its own
// elements expire at, all of which are ticks of their key. A tick's timer
// holds the output watermark a millisecond before its time, so a bucket,
// whose input watermark is the first stage's output watermark, cleans up
// at g only after its key has ticked at g. An element judged on time
// against p has no partner that expires by p, and every partner expires
// after the element's own time: a bucket that cleans up at some g > p
// before the element arrives removes none of them as long as the runner
// gives the bucket the element (sent before the tick at g) before its
// timer fires at g, as every runner does that processes a stage's pending
// input before letting its watermark pass it, for an element that arrived
// at most LateBehind behind the watermark. Two partners that both arrived
// further behind, on a key whose progress does not reach them, can miss
// each other (the watermark had passed before the pieces were sent, so they
// hold nothing): see docs/design/interval.md, "Why the split is exact".
type spreader struct {
	Rules      match.Rules
	Grid       int64 // CleanupEvery, ms
	Split      splitting
	Horizon    int64 // ProgressHorizon, ms
	Key        coders.Element
	NoCache    bool
	CacheBytes int64

	cache keyCache
}

// gridRun is every multiple of the grid from from to to.
type gridRun struct{ from, to int64 }

// load returns the key's state, from the bundle cache or read (one call).
func (s *spreader) load(ctx context.Context, st splitStores, key beam.X) (*keyState, error) {
	k, err := s.Key.Encode(key)
	if err != nil {
		return nil, err
	}
	ck := cacheKey{string(k), window.GlobalWindow{}}
	if !s.NoCache {
		if ks, ok := s.cache.get(ctx, ck); ok {
			return ks, nil
		}
	}
	d, stored, err := readState(st.sp, st.bag)
	if err != nil {
		return nil, err
	}
	ks := &keyState{key: k, stored: stored, b: match.NewBuffer[[]byte]()}
	ks.b.Progress = d.Progress
	next := 0
	for _, c := range d.Cleanups {
		s.replay(ks, d.Entries[next:c.Entries])
		next = c.Entries
		s.drop(ks, c.At)
	}
	s.replay(ks, d.Entries[next:])
	ks.inBag = len(d.Entries) + len(d.Cleanups)
	ks.timer = s.timerFor(ks)
	if !s.NoCache {
		s.cache.limit = s.CacheBytes
		s.cache.put(ck, ks)
	}
	return ks, nil
}

// replay adds the multiples of stand-ins to the key's runs, in bag order.
func (s *spreader) replay(ks *keyState, es []match.Entry[[]byte]) {
	for _, e := range es {
		m := s.Rules.Expiry(e.Side, e.Time)
		from := m
		if e.Matched {
			for _, r := range ks.runs {
				if r.to < m {
					from = r.to
				}
			}
		}
		s.add(ks, from, m)
	}
}

// add adds every multiple from from to to to the key's runs.
func (s *spreader) add(ks *keyState, from, to int64) {
	step := max(s.Grid, 1)
	var out []gridRun
	for _, r := range ks.runs {
		if r.to+step < from || to+step < r.from {
			out = append(out, r)
			continue
		}
		from, to = min(from, r.from), max(to, r.to)
	}
	out = append(out, gridRun{from, to})
	slices.SortFunc(out, func(a, b gridRun) int { return cmp.Compare(a.from, b.from) })
	ks.runs = out
}

// drop applies a tick at g: the multiples up to g go, and g is the
// progress.
func (s *spreader) drop(ks *keyState, g int64) {
	step := max(s.Grid, 1)
	var out []gridRun
	for _, r := range ks.runs {
		if r.to <= g {
			continue
		}
		if r.from <= g {
			r.from = g + step
		}
		out = append(out, r)
	}
	ks.runs = out
	ks.b.Progress = max(ks.b.Progress, g)
}

// has reports whether the key's runs hold multiple m.
func (ks *keyState) has(m int64) bool {
	for _, r := range ks.runs {
		if r.from <= m && m <= r.to {
			return true
		}
	}
	return false
}

// grid is the tick at which an element of side side at t expires: its
// expiry rounded up to the grid.
func (s *spreader) grid(side match.Side, t int64) int64 {
	return roundUp(s.Rules.Expiry(side, t), s.Grid)
}

// standIn is a stand-in that expires at multiple m: a left entry without a
// value, marked matched if it ends a run.
func (s *spreader) standIn(m int64, endsRun bool) match.Entry[[]byte] {
	return match.Entry[[]byte]{Side: match.Left, Time: m - s.Rules.Expiry(match.Left, 0), Matched: endsRun}
}

// timerFor is where the key's timer must be, from its state alone: a tick
// at its earliest multiple, holding the output watermark a millisecond
// before it; with none, the forgetting of the progress; with no progress
// either, none.
func (s *spreader) timerFor(ks *keyState) timer {
	if len(ks.runs) > 0 {
		fire := ks.runs[0].from
		return timer{fire: fire, hold: fire - 1, set: true}
	}
	if p := ks.b.Progress; p != match.NoProgress {
		return timer{fire: forgetTime(s.Rules, p, s.Horizon, s.Grid), hold: timertag.NoHold, set: true}
	}
	return timer{}
}

// process judges an arriving element and sends it on: if late, to its own
// bucket only, marked late; else to its own bucket and those of its
// partner range, after adding the multiple it expires at to the key's
// runs if they lack it (one state call).
func (s *spreader) process(ctx context.Context, st splitStores, et beam.EventTime, key beam.X, in raw.Encoded,
	emit func(beam.EventTime, []byte, Piece)) error {
	ks, err := s.load(ctx, st, key)
	if err != nil {
		return err
	}
	defer s.cache.resized(ks)
	side, t := match.Side(in.Side), et.Milliseconds()
	if s.Rules.IsLate(side, t, ks.b.Progress) {
		emit(et, runnerkey.Bucket(s.Split.bucketOf(t), ks.key), Piece{Side: in.Side, Late: true, Time: t, Value: in.Value})
		return nil
	}
	before := ks.timer
	if g := s.grid(side, t); !ks.has(g) {
		if err := st.bag.Add(st.sp, bagstate.AppendEntry(nil, s.standIn(g, false))); err != nil {
			return fmt.Errorf("beamjoin: join.Interval: writing state: %w", err)
		}
		if !ks.stored {
			ks.stored = true
			counters.keysWithState.Inc(ctx, 1)
		}
		s.add(ks, g, g)
		ks.inBag++
	}
	s.Split.buckets(s.Rules, side, t, func(b int64) {
		emit(et, runnerkey.Bucket(b, ks.key), Piece{Side: in.Side, Time: t, Value: in.Value})
	})
	ks.timer = s.timerFor(ks)
	moveTimers(st, plainArmed(before), ks.timer)
	return nil
}

// fire is a firing f of the key's timer: a tick, or the forgetting of a
// key that holds only its progress. A firing for an earlier time than the
// state implies, or for a key with no state, is stale: counted, the timer
// set again, nothing done (see joiner.firing). A tick appends a tick
// record (one state call), or rewrites the bag once it holds compactAfter
// records more than its runs need (two).
func (s *spreader) fire(ctx context.Context, st splitStores, key beam.X, f timertag.Fired) error {
	ks, err := s.load(ctx, st, key)
	if err != nil {
		return err
	}
	defer s.cache.resized(ks)
	t := ks.timer
	pending, ok := splitFiring(ctx, st, t, f)
	if !ok {
		return nil
	}
	if len(ks.runs) == 0 {
		if err := st.bag.Clear(st.sp); err != nil {
			return fmt.Errorf("beamjoin: join.Interval: clearing state: %w", err)
		}
		if ks.stored {
			counters.keysWithState.Inc(ctx, -1)
		}
		ks.forgotten()
		moveTimers(st, pending, timer{})
		return nil
	}
	if err := s.tick(st, ks, t.fire); err != nil {
		return err
	}
	ks.timer = s.timerFor(ks)
	moveTimers(st, pending, ks.timer)
	return nil
}

// tick applies a tick at g to the key's runs and records it: a tick
// record appended (one state call), or the bag rewritten once it holds
// compactAfter records more than its runs need (two).
func (s *spreader) tick(st splitStores, ks *keyState, g int64) error {
	s.drop(ks, g)
	ks.inBag++ // the tick record, or rewritten below
	if ks.inBag-2*len(ks.runs) >= compactAfter {
		var standIns []match.Entry[[]byte]
		for _, r := range ks.runs {
			standIns = append(standIns, s.standIn(r.from, false))
			if r.to > r.from {
				standIns = append(standIns, s.standIn(r.to, true))
			}
		}
		if err := writeBag(st.sp, st.bag, [][]byte{bagstate.EncodeState(ks.b.Progress, nil, standIns)}); err != nil {
			return err
		}
		ks.inBag = len(standIns)
	} else if err := st.bag.Add(st.sp, bagstate.AppendCleanup(nil, g)); err != nil {
		return fmt.Errorf("beamjoin: join.Interval: writing state: %w", err)
	}
	return nil
}

// bucketFn is the split layout's second stage, keyed by a key's bucket
// (groupKey).
type bucketFn struct {
	Bucket  bucketJoiner
	Buffer  state.Bag[[]byte]
	Cleanup timers.EventTime
}

func (f *bucketFn) Setup() error { return f.Bucket.Key.Setup() }

// StartBundle and FinishBundle drop the bundle's cache of bucket states.
func (f *bucketFn) StartBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded)) {
	f.Bucket.cache.clear()
}

func (f *bucketFn) FinishBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded)) {
	f.Bucket.cache.clear()
}

func (f *bucketFn) ProcessElement(ctx context.Context, _ beam.EventTime, sp state.Provider, tp timers.Provider, group []byte, in Piece,
	emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) error {
	return f.Bucket.process(ctx, splitStores{sp: sp, tp: tp, bag: &f.Buffer, timer: &f.Cleanup}, group, in, emit, emitLate)
}

func (f *bucketFn) OnTimer(ctx context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, group []byte, tc timers.Context,
	emit func(beam.EventTime, beam.X, raw.Record), _ func(beam.EventTime, beam.X, raw.Encoded)) error {
	return f.Bucket.cleanup(ctx, splitStores{sp: sp, tp: tp, bag: &f.Buffer, timer: &f.Cleanup}, group, firedOf(tc, et), emit)
}

// bucketJoiner is the split layout's second stage: one bucket of a key
// holds its own elements and copies of its neighbours' that its own may
// pair with, joins each arriving piece against them, and emits only what
// it owns (splitting). It never judges lateness: the first stage has.
type bucketJoiner struct {
	Rules      match.Rules
	Grid       int64 // CleanupEvery, ms
	Split      splitting
	Key        coders.Element
	NoCache    bool
	CacheBytes int64
	Fates      bool // TrackFates

	cache keyCache
}

// load returns the bucket's state, from the bundle cache or read (one
// call), and its bucket number and the join's key, decoded.
func (j *bucketJoiner) load(ctx context.Context, st splitStores, group []byte) (*keyState, int64, error) {
	ck := cacheKey{string(group), window.GlobalWindow{}}
	if !j.NoCache {
		if ks, ok := j.cache.get(ctx, ck); ok {
			bucket, _, err := runnerkey.Split(group)
			return ks, bucket, err
		}
	}
	bucket, key, err := decodeGroupKey(j.Key, group)
	if err != nil {
		return nil, 0, err
	}
	d, stored, err := readState(st.sp, st.bag)
	if err != nil {
		return nil, 0, err
	}
	if len(d.Cleanups) > 0 || d.Progress != match.NoProgress {
		return nil, 0, fmt.Errorf("beamjoin: join.Interval: a bucket's state holds records the split layout never writes there")
	}
	ks := &keyState{key: group, decoded: key, stored: stored, b: match.Restore(d.Entries, match.NoProgress), inBag: len(d.Entries)}
	for _, e := range d.Entries {
		if j.Split.owns(bucket, e.Time) {
			ks.owned++
		}
	}
	ks.timer = j.timerFor(ks, bucket)
	if !j.NoCache {
		j.cache.limit = j.CacheBytes
		j.cache.put(ck, ks)
	}
	return ks, bucket, nil
}

// timerFor is where the bucket's cleanup timer must be: at the grid
// multiple its earliest expiry rounds up to, holding the output watermark
// at its oldest outer element of its own when EmitFinal or EmitRetract may
// still emit it.
func (j *bucketJoiner) timerFor(ks *keyState, bucket int64) timer {
	next, ok := ks.b.NextExpiry(j.Rules)
	if !ok {
		return timer{}
	}
	t := timer{fire: roundUp(next, j.Grid), hold: timertag.NoHold, set: true}
	if j.Rules.Emit != match.Immediate {
		start := bucket * j.Split.Width
		for _, s := range []match.Side{match.Left, match.Right} {
			if !j.Rules.Type.Outer(s) {
				continue
			}
			if o, ok := ks.b.OldestFrom(s, start); ok && j.Split.owns(bucket, o) && (t.hold == timertag.NoHold || o < t.hold) {
				t.hold = o
			}
		}
	}
	return t
}

// process joins an arriving piece and buffers it, or reports it if the
// first stage judged it late.
func (j *bucketJoiner) process(ctx context.Context, st splitStores, group []byte, in Piece,
	emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) error {
	side := match.Side(in.Side)
	if in.Late {
		_, key, err := decodeGroupKey(j.Key, group)
		if err != nil {
			return err
		}
		counters.In[side].Inc(ctx, 1)
		counters.Fate[side][match.Late].Inc(ctx, 1)
		j.emitFate(key, side, in.Time, match.Late, emit)
		emitLate(beam.EventTime(in.Time), key, raw.Encoded{Side: in.Side, Value: in.Value})
		return nil
	}
	ks, bucket, err := j.load(ctx, st, group)
	if err != nil {
		return err
	}
	defer j.cache.resized(ks)
	key := ks.decoded
	own := j.Split.owns(bucket, in.Time)
	before := ks.timer
	e := match.Entry[[]byte]{Side: side, Time: in.Time, Value: in.Value}
	a := ks.b.Add(j.Rules, e)
	if !ks.stored {
		ks.stored = true
		counters.keysWithState.Inc(ctx, 1)
	}
	emitOwned(ctx, key, e, a, func(t int64) bool { return j.Split.owns(bucket, t) }, emit)
	e.Matched = len(a.Partners) > 0
	if err := st.bag.Add(st.sp, bagstate.AppendEntry(nil, e)); err != nil {
		return fmt.Errorf("beamjoin: join.Interval: writing state: %w", err)
	}
	ks.inBag++
	if own {
		counters.In[side].Inc(ctx, 1)
		counters.buffered.Inc(ctx, 1)
		ks.owned++
		// What the bucket holds, its own elements and copies: the state
		// of one runner key.
		counters.bufferedPerKey.Update(ctx, int64(ks.b.Len()))
	}
	ks.timer = j.timerFor(ks, bucket)
	moveTimers(st, plainArmed(before), ks.timer)
	return nil
}

// cleanup is the firing f of the bucket's timer: remove what has expired
// by the time the state implies, reporting what the bucket owns, and write
// the rest back (or clear the bucket). A stale firing (see joiner.firing)
// changes nothing but is counted and the timer set again.
func (j *bucketJoiner) cleanup(ctx context.Context, st splitStores, group []byte, f timertag.Fired, emit func(beam.EventTime, beam.X, raw.Record)) error {
	ks, bucket, err := j.load(ctx, st, group)
	if err != nil {
		return err
	}
	defer j.cache.resized(ks)
	t := ks.timer
	pending, ok := splitFiring(ctx, st, t, f)
	if !ok {
		return nil
	}
	removed := ks.b.Expire(j.Rules, t.fire)
	ks.b.Progress = match.NoProgress // a bucket never judges lateness
	for _, x := range removed {
		if !j.Split.owns(bucket, x.Time) {
			continue
		}
		if j.Rules.UnmatchedOnRemoval(x.Side, x.Matched) {
			emit(beam.EventTime(x.Time), ks.decoded, single(raw.Unmatched, x))
			counters.UnmatchedOut[x.Side].Inc(ctx, 1)
		}
		fate := j.Rules.FateOf(x.Side, x.Matched, false)
		counters.Fate[x.Side][fate].Inc(ctx, 1)
		j.emitFate(ks.decoded, x.Side, x.Time, fate, emit)
		counters.buffered.Inc(ctx, -1)
		ks.owned--
	}
	if err := writeBag(st.sp, st.bag, bagstate.EncodeChunks(match.NoProgress, ks.b.Entries(), bagstate.MaxValue)); err != nil {
		return err
	}
	ks.inBag = ks.b.Len()
	if ks.inBag == 0 && ks.stored {
		ks.stored = false
		counters.keysWithState.Inc(ctx, -1)
	}
	ks.timer = j.timerFor(ks, bucket)
	moveTimers(st, pending, ks.timer)
	return nil
}

// emitOwned emits what the arrival a of e makes in a place that owns the
// elements owns reports (a bucket of the split layout, a hot key's bag
// part), the others being copies it holds for them: the retractions of
// its own elements, the pairs whose left element it owns, and e's
// unmatched record if it owns e.
func emitOwned(ctx context.Context, key beam.X, e match.Entry[[]byte], a match.Arrival[[]byte], owns func(int64) bool, emit func(beam.EventTime, beam.X, raw.Record)) {
	for _, x := range a.Retracted {
		if owns(x.Time) {
			emit(beam.EventTime(x.Time), key, single(raw.Retract, x))
			counters.Retractions.Inc(ctx, 1)
		}
	}
	pairs := 0
	for _, x := range a.Partners {
		l, r := e, x
		if e.Side == match.Right {
			l, r = x, e
		}
		if !owns(l.Time) {
			continue
		}
		emit(beam.EventTime(max(l.Time, r.Time)), key, raw.Record{
			Kind: raw.Pair, HasLeft: true, HasRight: true,
			LeftTime: l.Time, RightTime: r.Time, Left: l.Value, Right: r.Value,
		})
		pairs++
	}
	counters.Pairs.Inc(ctx, int64(pairs))
	if a.Unmatched && owns(e.Time) {
		emit(beam.EventTime(e.Time), key, single(raw.Unmatched, e))
		counters.UnmatchedOut[e.Side].Inc(ctx, 1)
	}
}

// emitFate emits the fate f of x if the join tracks fates, at x's time.
func (j *bucketJoiner) emitFate(key beam.X, s match.Side, t int64, f match.Fate, emit func(beam.EventTime, beam.X, raw.Record)) {
	if j.Fates {
		emit(beam.EventTime(t), key, fateRecordOf(s, t, f))
	}
}

// plainArmed is the runner timer that stands for t, a timer that is
// never a record timer (the split layout's): none if t is not set.
func plainArmed(t timer) []armed {
	if !t.set {
		return nil
	}
	hold := t.hold
	if hold == timertag.NoHold {
		hold = t.fire
	}
	return []armed{{tag: t.tag(), fire: t.fire, hold: hold}}
}

// splitFiring judges firing f of a split-layout timer whose state says
// t: a stale firing (timertag.Fired.Stale) is counted and t set again
// (ok false), as in joiner.firing. Otherwise it
// returns what stays armed once f is consumed.
func splitFiring(ctx context.Context, st splitStores, t timer, f timertag.Fired) (pending []armed, ok bool) {
	if f.Stale(t.set, t.fire) {
		counters.StaleFirings.Inc(ctx, 1)
		moveTimers(st, nil, t)
		return nil, false
	}
	return without(plainArmed(t), f.Tag), true
}

// moveTimers moves a split stage's runner timers from those set (before)
// to the one that stands for after.
func moveTimers(st splitStores, before []armed, after timer) {
	setArmed(st.timer, st.tp, before, plainArmed(after))
}
