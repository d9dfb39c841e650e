package interval

// This file holds how the interval join keeps a key's buffer in Beam state
// in its default layout (one bag per key) and what a DoFn instance knows of
// a key's state; the split layout (SplitKeys) is in split*.go.

import (
	"container/list"
	"context"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bagstate"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
)

// stores is the state and timer of the key being processed.
type stores struct {
	sp      state.Provider
	tp      timers.Provider
	buffer  *state.Bag[[]byte]
	cleanup *timers.EventTime
}

// keyState is one key's buffer (in one window) as this DoFn instance knows
// it: in the default layout, everything in the key's bag; in the split
// layout, a key's stand-ins and progress (spreader) or a bucket's entries
// (bucketJoiner).
type keyState struct {
	b     *match.Buffer[[]byte] // b.Progress is the key's progress
	inBag int                   // entries stored in the bag (the split layout's first stage: its records)
	timer timer                 // where the cleanup timer is
	// dead are the elements that the bag's cleanup records removed
	// (joiner.replay), still in the bag, their Matched flags settled;
	// stale is how many of the records were for no timer the state
	// implied. Both are counted (joiner.settle) when the bag is next
	// rewritten or cleared.
	dead   []match.Entry[[]byte]
	stale  int
	key    []byte        // the key encoded, when the cache needs it
	cached *list.Element // in the bundle cache, or nil
	// hot: the key went hot (hot.go); its elements from split on are the
	// split layout's, the bag holds those before it and copies of their
	// partners.
	hot   bool
	split int64
	// pending are records for the key's bag that the bundle has not yet
	// written (joiner.appendChunk), and to the stores to write them with,
	// those of any of the key's elements or firings in the bundle: a cached
	// key's appends wait for the bundle's end or the key's leaving the
	// cache (keyState.flush), so that a key costs one state append per
	// bundle instead of one per arrival.
	pending []byte
	to      stores

	// The split layout's: whether the runner holds state for the key;
	// for its first stage, the multiples of the grid it ticks at
	// (spreader); for a bucket, how many of its elements it owns and the join's key.
	stored  bool
	runs    []gridRun
	owned   int
	decoded beam.X
}

// compactAfter is how many dead elements (keyState.dead) a key's bag may
// hold before an arrival rewrites the bag instead of appending to it.
const compactAfter = 16

func (ks *keyState) len() int { return ks.inBag }

// oldest is the earliest time buffered on side s.
func (ks *keyState) oldest(s match.Side) (int64, bool) { return ks.b.Oldest(s) }

// forgotten empties the key after its state is cleared; it stays in the
// bundle cache, if it is there, as new as a read of its state would give.
func (ks *keyState) forgotten() {
	*ks = keyState{b: match.NewBuffer[[]byte](), key: ks.key, cached: ks.cached}
}

// owns reports whether the key's bag owns an element at t, rather than
// holding a copy of it: every element of a key that is not hot, and of a
// hot key those before its split.
func (ks *keyState) owns(t int64) bool { return !ks.hot || t < ks.split }

// cacheKey names a key and window in the bundle cache.
type cacheKey struct {
	key string
	win beam.Window
}

// forget drops the cache, and any records it had not written (a bundle
// that failed): a key's state can change between bundles.
func (j *joiner) forget() { j.cache.clear() }

// finish writes the records the bundle left pending (appendChunk) and
// drops the cache: the end of a bundle.
func (j *joiner) finish() error {
	err := j.cache.flush()
	j.cache.clear()
	return err
}

// load returns the key's state: from the bundle cache if the key was seen
// earlier in the bundle and is still cached (state can only have changed
// through this instance since), else read from the bag (one state call).
// Nothing but state decides what it holds.
func (j *joiner) load(ctx context.Context, st stores, w beam.Window, key beam.X) (*keyState, error) {
	var k []byte
	if !j.NoCache {
		var err error
		if k, err = j.Key.Encode(key); err != nil {
			return nil, err
		}
	}
	ck := cacheKey{string(k), w}
	if !j.NoCache {
		if ks, ok := j.cache.get(ctx, ck); ok {
			return ks, nil
		}
	}
	d, _, err := readState(st.sp, st.buffer)
	if err != nil {
		return nil, err
	}
	ks := &keyState{key: k, hot: d.Split != match.NoProgress, split: d.Split}
	j.replay(ks, d)
	ks.timer = j.timerFor(ks)
	if ks.stale > 0 {
		// A cleanup record for no timer of the state: the runner may
		// have taken its firing for the key's timer, so set that again.
		j.moveTimer(st, timer{}, ks.timer)
	}
	if !j.NoCache {
		j.cache.limit = j.CacheBytes
		j.cache.put(ck, ks)
	}
	return ks, nil
}

// readState reads and decodes a key's bag (one state call), and whether
// it held anything. Every layout reads its bags through it. Bucket records
// were written by the map-state layout of earlier releases, which no
// layout reads any more: a bag holding them is refused by name.
func readState(sp state.Provider, bag *state.Bag[[]byte]) (bagstate.State, bool, error) {
	chunks, _, err := bag.Read(sp)
	if err != nil {
		return bagstate.State{}, false, fmt.Errorf("beamjoin: join.Interval: reading state: %w", err)
	}
	d, err := bagstate.DecodeState(chunks)
	if err != nil {
		return bagstate.State{}, false, err
	}
	if len(d.Buckets) > 0 {
		return bagstate.State{}, false, fmt.Errorf("beamjoin: join.Interval: state holds %d time buckets of the map-state layout, which this release no longer has (the split layout, SplitKeys, keeps no state there)", len(d.Buckets))
	}
	return d, len(chunks) > 0, nil
}

// replay rebuilds ks's buffer from its decoded bag: the entries and the
// progress, and the cleanup records applied in bag order, each to what
// came before it (applyCleanup).
func (j *joiner) replay(ks *keyState, d bagstate.State) {
	if len(d.Cleanups) == 0 {
		ks.b, ks.inBag = match.Restore(d.Entries, d.Progress), len(d.Entries)
		return
	}
	first := d.Cleanups[0]
	ks.b = match.Restore(d.Entries[:first.Entries], first.Progress)
	for i, c := range d.Cleanups {
		ks.timer = j.timerFor(ks)
		j.applyCleanup(ks, c.At)
		end, p := len(d.Entries), d.Progress
		if i+1 < len(d.Cleanups) {
			end, p = d.Cleanups[i+1].Entries, d.Cleanups[i+1].Progress
		}
		if end > c.Entries || p > ks.b.Progress {
			ks.b = match.Restore(append(ks.b.Entries(), d.Entries[c.Entries:end]...), max(ks.b.Progress, p))
		}
	}
	ks.inBag = ks.b.Len()
}

// applyCleanup applies a cleanup record for time at to ks, whose timer is
// the one its state implied where the record stands: if that is a record
// timer for at or earlier, the record is its firing (a firing for a later
// time than the state implies cleans up at the state's time, as
// joiner.firing says), and everything buffered expires, to ks.dead, and the
// progress moves to the timer's time. Any other record is stale (see
// joiner.firing) and removes nothing. It leaves ks.timer as the state now
// implies.
func (j *joiner) applyCleanup(ks *keyState, at int64) {
	if t := ks.timer; t.record && t.fire <= at {
		ks.dead = append(ks.dead, ks.b.Expire(j.Rules, t.fire)...)
		ks.inBag = ks.b.Len()
	} else {
		ks.stale++
	}
	ks.timer = j.timerFor(ks)
}

// settle counts what the bag's cleanup records removed (each dead
// element's fate) and the stale records, before the bag is rewritten
// without them or cleared.
func (j *joiner) settle(ctx context.Context, key beam.X, ks *keyState, emit func(beam.EventTime, beam.X, raw.Record)) {
	for _, x := range ks.dead {
		if ks.owns(x.Time) {
			j.remove(ctx, key, x, false, emit)
		}
	}
	if ks.stale > 0 {
		counters.StaleFirings.Inc(ctx, int64(ks.stale))
	}
	ks.dead, ks.stale = nil, 0
}

// store writes ks back to state after a change that appending cannot
// express (eviction, cleanup, or the cleanup records it drops): its
// progress and entries, in chunks of at most bagstate.MaxValue bytes: two
// state calls (clear, append) for a key under a mebibyte, one more per
// mebibyte beyond.
func (j *joiner) store(st stores, ks *keyState) error {
	ks.pending, ks.to = nil, stores{} // the rewrite holds them
	entries := ks.b.Entries()
	chunks := bagstate.EncodeChunks(ks.b.Progress, entries, bagstate.MaxValue)
	if ks.hot {
		chunks = append(chunks, bagstate.SplitChunk(ks.split))
	}
	if err := writeBag(st.sp, st.buffer, chunks); err != nil {
		return err
	}
	ks.inBag = len(entries)
	return nil
}

// appendChunk appends chunk, records of the bag format, to the key's bag:
// at once if the key is not in the bundle cache, else in the one state
// append that writes all the key's records of the bundle (flush), when the
// bundle finishes (joiner.finish) or the cache drops the key. Until then
// the cached state holds what they say, and it is all that reads the key
// in this bundle; the runner commits the bundle's state writes together,
// so what it commits is the same bag: records decode alike in one chunk
// or in many (bagstate.DecodeState). A rewrite or clear of the bag drops
// them (store, keyState.forgotten).
func (j *joiner) appendChunk(st stores, ks *keyState, chunk []byte) error {
	if ks.cached == nil || j.NoWriteBehind {
		return addChunk(st, chunk)
	}
	ks.pending = append(ks.pending, chunk...)
	ks.to = st
	return nil
}

// flush writes the records appendChunk left pending, in one state append.
func (ks *keyState) flush() error {
	if len(ks.pending) == 0 {
		return nil
	}
	p, st := ks.pending, ks.to
	ks.pending, ks.to = nil, stores{}
	return addChunk(st, p)
}

// addChunk appends one chunk to the key's bag.
func addChunk(st stores, chunk []byte) error {
	if err := st.buffer.Add(st.sp, chunk); err != nil {
		return fmt.Errorf("beamjoin: join.Interval: writing state: %w", err)
	}
	return nil
}

// writeBag replaces a bag's chunks with chunks.
func writeBag(sp state.Provider, bag *state.Bag[[]byte], chunks [][]byte) error {
	if err := bag.Clear(sp); err != nil {
		return fmt.Errorf("beamjoin: join.Interval: clearing state: %w", err)
	}
	for _, c := range chunks {
		if err := bag.Add(sp, c); err != nil {
			return fmt.Errorf("beamjoin: join.Interval: writing state: %w", err)
		}
	}
	return nil
}
