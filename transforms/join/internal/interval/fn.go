package interval

// This file holds the stateful DoFn of the interval join's default layout,
// whose logic is the joiner's process (an arriving element) and cleanup
// (a timer firing); the split layout's are in split_fn.go. The joiner
// only moves data between state, the timer and the matching core, which
// decides everything.

import (
	"context"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bagstate"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/timertag"
)

func init() {
	register.DoFn9x1[context.Context, beam.Window, beam.EventTime, state.Provider, timers.Provider, beam.X, raw.Encoded,
		func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded), error](&intervalFn{})
}

// intervalDoFn is the default layout's joiner and the methods of its
// stateful DoFn that touch no state.
type intervalDoFn struct {
	Join joiner
}

func (f *intervalDoFn) Setup() error { return f.Join.Key.Setup() }

// StartBundle drops the bundle's cache of key states, FinishBundle writes
// what the bundle left pending in it (joiner.finish) and drops it. (The
// SDK requires them to declare ProcessElement's emitters.)
func (f *intervalDoFn) StartBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded)) {
	f.Join.forget()
}

func (f *intervalDoFn) FinishBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded)) error {
	return f.Join.finish()
}

// intervalFn is the interval join's stateful DoFn in the bag layout: a
// key's whole buffer lives in Buffer. It only moves data between state, the
// timer and the matching core; see joiner.
type intervalFn struct {
	intervalDoFn
	Buffer  state.Bag[[]byte]
	Cleanup timers.EventTime
}

func (f *intervalFn) ProcessElement(ctx context.Context, w beam.Window, et beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, in raw.Encoded,
	emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) error {
	return f.Join.process(ctx, stores{sp: sp, tp: tp, buffer: &f.Buffer, cleanup: &f.Cleanup}, w, et, key, in, emit, emitLate)
}

func (f *intervalFn) OnTimer(ctx context.Context, w beam.Window, et beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, tc timers.Context,
	emit func(beam.EventTime, beam.X, raw.Record), _ func(beam.EventTime, beam.X, raw.Encoded)) error {
	return f.Join.cleanup(ctx, stores{sp: sp, tp: tp, buffer: &f.Buffer, cleanup: &f.Cleanup}, w, key, firedOf(tc, et), emit)
}

// joiner is the interval join's logic in the default layout: its exported
// fields are the join's configuration, the rest is the
// instance's cache of the keys seen in the current bundle. State access
// goes through state.go.
type joiner struct {
	Rules        match.Rules
	MaxBuffered  int
	CleanupEvery int64
	// Key encodes keys, to name them in the bundle cache.
	Key coders.Element
	// NoCache turns the bundle cache off (benchmarks measure it), and
	// with it the write-behind of appends (appendChunk).
	NoCache bool
	// NoWriteBehind makes every append a state call of its own, as
	// before write-behind (benchmarks measure it).
	NoWriteBehind bool
	// Horizon is how long, in milliseconds of event time, a key that
	// holds only its cleanup progress keeps it in state
	// (ProgressHorizon); see forgetAt.
	Horizon int64
	// CacheBytes bounds the bundle cache (BundleCacheBytes; 0: the
	// default).
	CacheBytes int64
	// AppendCleanup lets a cleanup firing append a record instead of
	// reading and rewriting the key's state when everything buffered
	// expires by it (see timer.record): the bag layout, under rules that
	// hold nothing and emit nothing when elements expire (appendable).
	AppendCleanup bool
	// Fates makes the join emit each element's fate among its records
	// (TrackFates; fates.go).
	Fates bool
	// UniqueLeft: a key has at most one left element (UniqueLeft), so
	// a right element that arrives while it is buffered is not.
	UniqueLeft bool

	cache keyCache
}

// process joins an arriving element and buffers it, unless UniqueLeft
// decides it at once.
func (j *joiner) process(ctx context.Context, st stores, w beam.Window, et beam.EventTime, key beam.X, in raw.Encoded,
	emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) error {
	ks, err := j.load(ctx, st, w, key)
	if err != nil {
		return err
	}
	defer j.cache.resized(ks)
	return j.processLoaded(ctx, st, ks, et, key, in, emit, emitLate)
}

// processLoaded is process on the key's state ks, loaded.
func (j *joiner) processLoaded(ctx context.Context, st stores, ks *keyState, et beam.EventTime, key beam.X, in raw.Encoded,
	emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) error {
	side := match.Side(in.Side)
	counters.In[side].Inc(ctx, 1)
	before := ks.timer
	e := match.Entry[[]byte]{Side: side, Time: et.Milliseconds(), Value: in.Value}
	if j.UniqueLeft && side == match.Left && ks.b.SideLen(match.Left) > 0 {
		// A second left element for the key breaks UniqueLeft: right
		// elements the join did not buffer could have matched it.
		counters.leftDuplicate.Inc(ctx, 1)
		j.late(ctx, key, e, et, in, emit, emitLate)
		return nil
	}
	// Under UniqueLeft a right element that arrives while its key's one
	// left element is buffered can match nothing else: it is joined and
	// its fate decided now, and it is not buffered (Buffer.Decided).
	unbuffered := j.UniqueLeft && side == match.Right && ks.b.Decided()
	var a match.Arrival[[]byte]
	if unbuffered {
		a = ks.b.Join(j.Rules, e)
	} else {
		a = ks.b.Add(j.Rules, e)
	}
	if a.Late {
		j.late(ctx, key, e, et, in, emit, emitLate)
		return nil
	}
	if !before.set { // the key gets state (a late element leaves it none)
		counters.keysWithState.Inc(ctx, 1)
	}
	j.arrived(ctx, key, e, a, emit)
	e.Matched = len(a.Partners) > 0

	if unbuffered {
		j.account(ctx, key, e, false, emit)
		counters.notBuffered.Inc(ctx, 1)
		if !a.Marked {
			return nil // no state call
		}
		// The left element's first match, which the bag must show.
		if err := j.rewrite(ctx, st, key, ks, emit); err != nil {
			return err
		}
	} else if err := j.buffer(ctx, st, key, ks, e, true, emit); err != nil {
		return err
	}
	ks.timer = j.timerFor(ks)
	j.moveTimer(st, before, ks.timer)
	return nil
}

// buffer adds e, which has just arrived and been joined, to its key's
// buffer in state: one append, or a rewrite when the size cap evicts or
// the bag holds enough dead elements. own: the bag owns e; a hot key's
// bag part keeps copies of elements it does not own (hot.go), which count
// as nothing.
func (j *joiner) buffer(ctx context.Context, st stores, key beam.X, ks *keyState, e match.Entry[[]byte], own bool, emit func(beam.EventTime, beam.X, raw.Record)) error {
	if own {
		counters.buffered.Inc(ctx, 1)
	}
	ks.inBag++ // appended, or rewritten below
	switch {
	case j.MaxBuffered > 0 && ks.len() > j.MaxBuffered:
		for _, x := range ks.b.Evict(j.Rules, j.MaxBuffered) {
			j.remove(ctx, key, x, true, emit)
		}
		if err := j.rewrite(ctx, st, key, ks, emit); err != nil {
			return err
		}
	case len(ks.dead) >= compactAfter || ks.stale > 0:
		// The bag holds enough that its cleanup records removed: write
		// it without them.
		if err := j.rewrite(ctx, st, key, ks, emit); err != nil {
			return err
		}
	default:
		if err := j.appendChunk(st, ks, bagstate.AppendEntry(nil, e)); err != nil {
			return err
		}
	}
	if own {
		counters.bufferedPerKey.Update(ctx, int64(ks.len()))
	}
	return nil
}

// rewrite writes ks back to state without the cleanup records its bag
// holds, after counting what they removed (settle, store).
func (j *joiner) rewrite(ctx context.Context, st stores, key beam.X, ks *keyState, emit func(beam.EventTime, beam.X, raw.Record)) error {
	j.settle(ctx, key, ks, emit)
	return j.store(st, ks)
}

// arrived emits what the arrival a of e makes: retractions, pairs and
// e's unmatched record.
func (j *joiner) arrived(ctx context.Context, key beam.X, e match.Entry[[]byte], a match.Arrival[[]byte], emit func(beam.EventTime, beam.X, raw.Record)) {
	for _, x := range a.Retracted {
		emit(beam.EventTime(x.Time), key, single(raw.Retract, x))
		counters.Retractions.Inc(ctx, 1)
	}
	for _, x := range a.Partners {
		l, r := e, x
		if e.Side == match.Right {
			l, r = x, e
		}
		emit(beam.EventTime(max(l.Time, r.Time)), key, raw.Record{
			Kind: raw.Pair, HasLeft: true, HasRight: true,
			LeftTime: l.Time, RightTime: r.Time, Left: l.Value, Right: r.Value,
		})
	}
	counters.Pairs.Inc(ctx, int64(len(a.Partners)))
	if a.Unmatched {
		emit(beam.EventTime(e.Time), key, single(raw.Unmatched, e))
		counters.UnmatchedOut[e.Side].Inc(ctx, 1)
	}
}

// late reports e, which the join does not take, to the late output.
func (j *joiner) late(ctx context.Context, key beam.X, e match.Entry[[]byte], et beam.EventTime, in raw.Encoded,
	emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) {
	counters.Fate[e.Side][match.Late].Inc(ctx, 1)
	j.emitFate(key, e.Side, e.Time, match.Late, emit)
	emitLate(et, key, in)
}

// remove accounts for an element leaving the buffer.
func (j *joiner) remove(ctx context.Context, key beam.X, x match.Entry[[]byte], evicted bool, emit func(beam.EventTime, beam.X, raw.Record)) {
	j.account(ctx, key, x, evicted, emit)
	counters.buffered.Inc(ctx, -1)
}

// account gives x, which leaves the join (or, under UniqueLeft, is never
// buffered), its fate, emitting it as unmatched if the emission mode says
// so.
func (j *joiner) account(ctx context.Context, key beam.X, x match.Entry[[]byte], evicted bool, emit func(beam.EventTime, beam.X, raw.Record)) {
	if j.Rules.UnmatchedOnRemoval(x.Side, x.Matched) {
		emit(beam.EventTime(x.Time), key, single(raw.Unmatched, x))
		counters.UnmatchedOut[x.Side].Inc(ctx, 1)
	}
	f := j.Rules.FateOf(x.Side, x.Matched, evicted)
	counters.Fate[x.Side][f].Inc(ctx, 1)
	j.emitFate(key, x.Side, x.Time, f, emit)
}

// single is an unmatched or retract record for x.
func single(kind raw.Kind, x match.Entry[[]byte]) raw.Record {
	if x.Side == match.Left {
		return raw.Record{Kind: kind, HasLeft: true, LeftTime: x.Time, Left: x.Value}
	}
	return raw.Record{Kind: kind, HasRight: true, RightTime: x.Time, Right: x.Value}
}

// cleanup is the timer's firing f: remove what has expired, or forget a key
// that holds only progress; a stale firing changes nothing (see firing). A
// record timer's firing appends a cleanup record (cleanupRecord).
func (j *joiner) cleanup(ctx context.Context, st stores, w beam.Window, key beam.X, f timertag.Fired, emit func(beam.EventTime, beam.X, raw.Record)) error {
	if f.Tag == recordTag && j.AppendCleanup {
		return j.cleanupRecord(ctx, st, w, key, f.At)
	}
	ks, err := j.load(ctx, st, w, key)
	if err != nil {
		return err
	}
	defer j.cache.resized(ks)
	return j.cleanupLoaded(ctx, st, ks, key, f, emit)
}

// cleanupLoaded is cleanup, but a record timer's firing, on the key's
// state ks, loaded.
func (j *joiner) cleanupLoaded(ctx context.Context, st stores, ks *keyState, key beam.X, f timertag.Fired, emit func(beam.EventTime, beam.X, raw.Record)) error {
	t, pending, ok := j.firing(ctx, st, ks, f)
	if !ok {
		return nil
	}
	if ks.len() == 0 {
		// Only progress is left, and its horizon is up (forgetAt).
		return j.forgetKey(ctx, st, key, ks, pending, emit)
	}
	for _, x := range ks.b.Expire(j.Rules, t.fire) {
		j.remove(ctx, key, x, false, emit)
	}
	if ks.b.Len() == 0 && j.forgetAt(ks.b.Progress) <= t.fire {
		// The firing removed the key's last element, and its progress
		// has no horizon to wait for (ProgressHorizon(0)).
		return j.forgetKey(ctx, st, key, ks, pending, emit)
	}
	if err := j.rewrite(ctx, st, key, ks, emit); err != nil {
		return err
	}
	// The timer that fired is gone; others may still be set (pending).
	ks.timer = j.timerFor(ks)
	j.moveArmed(st, pending, ks.timer)
	return nil
}

// forgetKey clears the state of a key that holds no element and whose
// progress is due to be forgotten, and the runner timers still set for it
// (pending): the key is new to the join from now on, on every worker
// alike.
func (j *joiner) forgetKey(ctx context.Context, st stores, key beam.X, ks *keyState, pending []armed, emit func(beam.EventTime, beam.X, raw.Record)) error {
	j.settle(ctx, key, ks, emit)
	if err := st.buffer.Clear(st.sp); err != nil {
		return fmt.Errorf("beamjoin: join.Interval: clearing state: %w", err)
	}
	j.moveArmed(st, pending, timer{})
	ks.forgotten()
	counters.keysWithState.Inc(ctx, -1)
	return nil
}

// cleanupRecord is the firing of a record timer for time at: one state
// call, appending a cleanup record, and no read. Whoever reads the bag next
// applies the record (replay): its elements become dead, and are counted
// when the bag is next rewritten or cleared; the key's forgetting timer is
// set already. If the key is in the bundle cache, the record is applied to
// it now, as a read would.
func (j *joiner) cleanupRecord(ctx context.Context, st stores, w beam.Window, key beam.X, at int64) error {
	rec := bagstate.AppendCleanup(nil, at)
	if j.NoCache {
		return addChunk(st, rec)
	}
	k, err := j.Key.Encode(key)
	if err != nil {
		return err
	}
	ks, ok := j.cache.peek(cacheKey{string(k), w})
	if !ok {
		return addChunk(st, rec)
	}
	defer j.cache.resized(ks)
	if err := j.appendChunk(st, ks, rec); err != nil {
		return err
	}
	before, stale := ks.timer, ks.stale
	j.applyCleanup(ks, at)
	if ks.stale > stale {
		j.moveTimer(st, timer{}, ks.timer)
		return nil
	}
	j.moveArmed(st, without(j.armedOf(before), recordTag), ks.timer)
	return nil
}

// appendable says whether a join under rules r may clean up by appending
// a record (joiner.AppendCleanup, in the bag layout): its timers hold
// nothing, and it emits nothing when elements expire.
func appendable(r match.Rules) bool {
	return r.Emit == match.Immediate || !(r.Type.Outer(match.Left) || r.Type.Outer(match.Right))
}
