package interval

// This file holds the default layout's hot-key detection (HotAfter): the
// stateful DoFn hotFn is the default layout's joiner for every key until
// the key buffers HotAfter elements; then the key goes hot at a split time
// s beyond the reach of everything it buffers, and from then on its
// elements at or after s belong to the split layout's buckets, which its
// first stage (the spreader part of hotFn) sends them to, while those
// before s stay in the key's bag. docs/design/interval.md ("Hot keys found
// at run time") gives the rules and why the cut-over is exact.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bagstate"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/runnerkey"
	"github.com/beamjoin/beamjoin/transforms/join/internal/timertag"
)

func init() {
	register.DoFn10x1[context.Context, beam.Window, beam.EventTime, state.Provider, timers.Provider, beam.X, raw.Encoded,
		func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded), func(beam.EventTime, []byte, Piece), error](&hotFn{})
}

// splitTagPrefix starts the tags of the split part's timers of a hot key,
// so that they never share a tag with the bag part's (timer.tag).
const splitTagPrefix = "s"

// HotForgetTag is the tag of a hot key's forgetting timer: the split
// part's timer that holds nothing (tests).
const HotForgetTag = splitTagPrefix

// hotFn is the default layout's stateful DoFn with hot-key detection. A
// key that is not hot is the joiner's alone: its bag (Buffer), its timers,
// its records, exactly as intervalFn's. A hot key with split time s has
// two parts, which share the key's progress (the later of theirs) for
// judging lateness:
//   - the bag part (Join): the key's elements before s, and copies of the
//     elements at or after s that may pair with them; it pairs and reports
//     only the elements it owns (keyState.owns), and cleans up as before;
//   - the split part (Spread, its runs in Ticks): the split layout's first
//     stage for the elements at or after s, and for copies of those before
//     s that may pair with them: it sends each to the buckets at or after s
//     its time or partner range falls in, and ticks on the grid, holding
//     the output watermark, as spreader does.
//
// An element goes to the bag part if it is before s or its partner range
// reaches before s, and to buckets if it is at or after s or its partner
// range reaches s: each pair is made where its left element is owned, and
// each element's fate is decided where it is owned, which holds all its
// partners. The key goes back to being an ordinary one when both parts are
// empty and its progress is forgotten (forgetTime).
type hotFn struct {
	Join     joiner
	Spread   spreader
	HotAfter int // buffered elements at which a key goes hot
	Buffer   state.Bag[[]byte]
	Ticks    state.Bag[[]byte]
	Cleanup  timers.EventTime
}

func (f *hotFn) Setup() error {
	if err := f.Join.Key.Setup(); err != nil {
		return err
	}
	return f.Spread.Key.Setup()
}

// StartBundle drops the bundle's caches of key states, FinishBundle writes
// what the bag parts left pending (joiner.finish) and drops them.
func (f *hotFn) StartBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded), func(beam.EventTime, []byte, Piece)) {
	f.Join.forget()
	f.Spread.cache.clear()
}

func (f *hotFn) FinishBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded), func(beam.EventTime, []byte, Piece)) error {
	err := f.Join.finish()
	f.Spread.cache.clear()
	return err
}

// CacheBytes is what the DoFn instance's bundle caches hold now, by their
// own estimate (tests).
func (f *hotFn) CacheBytes() int64 { return f.Join.cache.used + f.Spread.cache.used }

func (f *hotFn) stores(sp state.Provider, tp timers.Provider) (stores, splitStores) {
	return stores{sp: sp, tp: tp, buffer: &f.Buffer, cleanup: &f.Cleanup}, splitStores{sp: sp, tp: tp, bag: &f.Ticks, timer: &f.Cleanup}
}

func (f *hotFn) ProcessElement(ctx context.Context, w beam.Window, et beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, in raw.Encoded,
	emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded), emitPiece func(beam.EventTime, []byte, Piece)) error {
	st, sst := f.stores(sp, tp)
	j := &f.Join
	ks, err := j.load(ctx, st, w, key)
	if err != nil {
		return err
	}
	defer j.cache.resized(ks)
	if !ks.hot {
		if err := j.processLoaded(ctx, st, ks, et, key, in, emit, emitLate); err != nil {
			return err
		}
		if f.HotAfter > 0 && ks.len() >= f.HotAfter {
			return f.goHot(ctx, st, ks, key, emit)
		}
		return nil
	}
	ts, err := f.Spread.load(ctx, sst, key)
	if err != nil {
		return err
	}
	defer f.Spread.cache.resized(ts)
	return f.processHot(ctx, st, sst, ks, ts, et, key, in, emit, emitLate, emitPiece)
}

// goHot makes the key hot: its split time is the first bucket boundary
// after everything it buffers and their reach (the latest time a partner
// of a buffered element may have), so that no element it holds is at or
// after it or has a partner there. It rewrites the bag with the split
// record (two state calls, once per key that goes hot).
func (f *hotFn) goHot(ctx context.Context, st stores, ks *keyState, key beam.X, emit func(beam.EventTime, beam.X, raw.Record)) error {
	j := &f.Join
	reach := int64(-1 << 62)
	for _, s := range []match.Side{match.Left, match.Right} {
		if t, ok := ks.b.Newest(s); ok {
			_, to := j.Rules.PartnerRange(s, t)
			reach = max(reach, t, to)
		}
	}
	w := f.Spread.Split.Width
	split := (runnerkey.FloorDiv(reach, w) + 1) * w
	before := j.armedOf(ks.timer)
	ks.hot, ks.split = true, split
	// The bag is rewritten with the split record: the cleanup records it
	// holds were a key's that was not hot, which a reader of a hot key's
	// bag would not take for record timers' firings (timerFor).
	if err := j.rewrite(ctx, st, key, ks, emit); err != nil {
		return err
	}
	ks.timer = j.timerFor(ks)
	setArmed(st.cleanup, st.tp, before, j.armedOf(ks.timer))
	counters.hotKeys.Inc(ctx, 1)
	log.Infof(ctx, "beamjoin: join.Interval: key %v went hot with %d elements buffered: its elements from %v on are split over time buckets of %d ms", key, ks.len(), mtime(split), w)
	return nil
}

// processHot joins an arriving element of a hot key: judged against the
// key's progress, then given to the bag part, the buckets, or both.
func (f *hotFn) processHot(ctx context.Context, st stores, sst splitStores, ks, ts *keyState, et beam.EventTime, key beam.X, in raw.Encoded,
	emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded), emitPiece func(beam.EventTime, []byte, Piece)) error {
	j := &f.Join
	side, t := match.Side(in.Side), et.Milliseconds()
	e := match.Entry[[]byte]{Side: side, Time: t, Value: in.Value}
	if j.Rules.IsLate(side, t, max(ks.b.Progress, ts.b.Progress)) {
		j.late(ctx, key, e, et, in, emit, emitLate)
		return nil
	}
	counters.In[side].Inc(ctx, 1)
	before := f.armed(ks, ts)
	own := ks.owns(t)
	from, to := j.Rules.PartnerRange(side, t)
	if own || from < ks.split {
		a := ks.b.Add(j.Rules, e) // not late: the bag part's progress is no later
		emitOwned(ctx, key, e, a, ks.owns, emit)
		e.Matched = len(a.Partners) > 0
		if err := j.buffer(ctx, st, key, ks, e, own, emit); err != nil {
			return err
		}
	}
	if !own || to >= ks.split {
		sent := false
		f.Spread.Split.buckets(j.Rules, side, t, func(b int64) {
			if b*f.Spread.Split.Width >= ks.split {
				emitPiece(et, runnerkey.Bucket(b, ts.key), Piece{Side: in.Side, Time: t, Value: in.Value})
				sent = true
			}
		})
		if g := f.Spread.grid(side, t); sent && !ts.has(g) {
			if err := sst.bag.Add(sst.sp, bagstate.AppendEntry(nil, f.Spread.standIn(g, false))); err != nil {
				return fmt.Errorf("beamjoin: join.Interval: writing state: %w", err)
			}
			f.Spread.add(ts, g, g)
			ts.inBag++
		}
	}
	ks.timer = j.timerFor(ks)
	setArmed(st.cleanup, st.tp, before, f.armed(ks, ts))
	return nil
}

// spreadTimer is where a hot key's split part's timer must be: a tick at
// the earliest multiple its runs hold, holding the output watermark a
// millisecond before it, as spreader's; with none, and nothing in the bag
// part, the forgetting of the key (forgetTime, from the key's progress):
// it waits a join memory besides the progress horizon, because a bucket
// may lag the key's first stage.
func (f *hotFn) spreadTimer(ks, ts *keyState) timer {
	if len(ts.runs) > 0 {
		fire := ts.runs[0].from
		return timer{fire: fire, hold: fire - 1, set: true}
	}
	if p := max(ks.b.Progress, ts.b.Progress); ks.len() == 0 && p != match.NoProgress {
		return timer{fire: forgetTime(f.Join.Rules, p, f.Spread.Horizon, f.Spread.Grid), hold: timertag.NoHold, set: true}
	}
	return timer{}
}

// armed is the runner timers of a hot key: the bag part's, and the split
// part's under splitTagPrefix.
func (f *hotFn) armed(ks, ts *keyState) []armed {
	a := f.Join.armedOf(ks.timer)
	for _, s := range plainArmed(f.spreadTimer(ks, ts)) {
		s.tag = splitTagPrefix + s.tag
		a = append(a, s)
	}
	return a
}

func (f *hotFn) OnTimer(ctx context.Context, w beam.Window, et beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, tc timers.Context,
	emit func(beam.EventTime, beam.X, raw.Record), _ func(beam.EventTime, beam.X, raw.Encoded), _ func(beam.EventTime, []byte, Piece)) error {
	st, sst := f.stores(sp, tp)
	j := &f.Join
	if tc.Tag == recordTag && j.AppendCleanup {
		// A record timer's firing reads nothing (cleanupRecord): it is the
		// bag part's, of a key that is not hot, or stale.
		return j.cleanup(ctx, st, w, key, firedOf(tc, et), emit)
	}
	ks, err := j.load(ctx, st, w, key)
	if err != nil {
		return err
	}
	defer j.cache.resized(ks)
	split := strings.HasPrefix(tc.Tag, splitTagPrefix)
	if !ks.hot && !split {
		return j.cleanupLoaded(ctx, st, ks, key, firedOf(tc, et), emit)
	}
	ts, err := f.Spread.load(ctx, sst, key)
	if err != nil {
		return err
	}
	defer f.Spread.cache.resized(ts)
	if !split {
		return f.cleanupHot(ctx, st, ks, ts, key, firedOf(tc, et), emit)
	}
	fired := timertag.Read(timers.Context{Family: tc.Family, Tag: strings.TrimPrefix(tc.Tag, splitTagPrefix)}, et)
	fired.Tag = tc.Tag
	return f.tick(ctx, st, sst, ks, ts, key, fired)
}

// cleanupHot is a firing of a hot key's bag part's timer: as
// joiner.cleanup, but it reports only what the bag part owns, keeps the
// split record, and leaves forgetting to the split part.
func (f *hotFn) cleanupHot(ctx context.Context, st stores, ks, ts *keyState, key beam.X, fired timertag.Fired, emit func(beam.EventTime, beam.X, raw.Record)) error {
	j := &f.Join
	t := ks.timer
	if hotStale(t, "", fired) {
		counters.StaleFirings.Inc(ctx, 1)
		setArmed(st.cleanup, st.tp, nil, f.armed(ks, ts))
		return nil
	}
	before := without(f.armed(ks, ts), fired.Tag)
	for _, x := range ks.b.Expire(j.Rules, t.fire) {
		if ks.owns(x.Time) {
			j.remove(ctx, key, x, false, emit)
		}
	}
	if err := j.rewrite(ctx, st, key, ks, emit); err != nil {
		return err
	}
	ks.timer = j.timerFor(ks)
	setArmed(st.cleanup, st.tp, before, f.armed(ks, ts))
	return nil
}

// hotStale reports whether a firing of one part of a hot key (its timers'
// tags start with prefix) is stale: the part's state implies no timer,
// or another one (another tag), or a later one. Unlike joiner.firing, a
// firing for a later time than the state implies is stale too: a key
// with two parts has two timers, and the Go SDK fires a tag cleared in
// the bundle inline before whichever of the key's timers the runner
// delivers (model_sdk_test.go), so such a firing says nothing of where
// the watermark is. The part's own timer is set, and fires when due.
func hotStale(t timer, prefix string, fired timertag.Fired) bool {
	return fired.Tag != prefix+t.tag() || fired.Stale(t.set, t.fire)
}

// tick is a firing of a hot key's split part's timer: a tick of its runs,
// as spreader.fire's, or, with no run left and nothing in the bag part,
// the forgetting of the whole key, which then is an ordinary key again. A
// stale firing (see joiner.firing) is counted and the timer set again.
func (f *hotFn) tick(ctx context.Context, st stores, sst splitStores, ks, ts *keyState, key beam.X, fired timertag.Fired) error {
	t := f.spreadTimer(ks, ts)
	if hotStale(t, splitTagPrefix, fired) {
		counters.StaleFirings.Inc(ctx, 1)
		setArmed(st.cleanup, st.tp, nil, f.armed(ks, ts))
		return nil
	}
	before := without(f.armed(ks, ts), splitTagPrefix+t.tag())
	if len(ts.runs) == 0 {
		if err := sst.bag.Clear(sst.sp); err != nil {
			return fmt.Errorf("beamjoin: join.Interval: clearing state: %w", err)
		}
		if err := st.buffer.Clear(st.sp); err != nil {
			return fmt.Errorf("beamjoin: join.Interval: clearing state: %w", err)
		}
		counters.keysWithState.Inc(ctx, -1)
		counters.hotMillis.Update(ctx, t.fire-ks.split)
		log.Infof(ctx, "beamjoin: join.Interval: key %v, hot from %v, is an ordinary key again at %v", key, mtime(ks.split), mtime(t.fire))
		ks.forgotten()
		ts.forgotten()
		setArmed(st.cleanup, st.tp, before, nil)
		return nil
	}
	if err := f.Spread.tick(sst, ts, t.fire); err != nil {
		return err
	}
	setArmed(st.cleanup, st.tp, before, f.armed(ks, ts))
	return nil
}

// mtime is a time in milliseconds, for a log line.
func mtime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
