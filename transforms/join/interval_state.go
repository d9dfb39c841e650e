package join

// This file holds where the interval join keeps a key's buffer in Beam
// state (the bag and bucketed layouts), and the per-bundle cache of what it
// has read.

import (
	"bytes"
	"cmp"
	"container/list"
	"context"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bagstate"
)

// bucketLogLimit is how many arrivals a bucketed key appends to its bag
// before moving them into their buckets.
const bucketLogLimit = 64

// stores is the state and timer of the key being processed.
type stores struct {
	sp      state.Provider
	tp      timers.Provider
	buffer  *state.Bag[[]byte]
	buckets *state.Map[int64, []byte] // nil: the bag layout only
	cleanup *timers.EventTime
}

// keyState is one key's buffer (in one window) as this DoFn instance knows
// it. In the bag layout everything is in the bag and in b. In the bucketed
// layout the bag holds the progress, a directory of buckets and the
// entries not yet moved into a bucket; b holds those entries and the
// entries of the buckets read so far.
type keyState struct {
	b         *match.Buffer[[]byte] // b.Progress is the key's progress
	inBag     int                   // entries stored in the bag
	buckets   map[int64]*bucket     // the directory; empty in the bag layout
	inBuckets int                   // entries stored in buckets
	timer     timer                 // where the cleanup timer is
	// dead are the elements that the bag's cleanup records removed
	// (joiner.replay), still in the bag, their Matched flags settled;
	// stale is how many of the records were for no timer the state
	// implied. Both are counted (joiner.settle) when the bag is next
	// rewritten or cleared.
	dead   []match.Entry[[]byte]
	stale  int
	key    []byte        // the key encoded, when the cache needs it
	cached *list.Element // in the bundle cache, or nil
}

// compactAfter is how many dead elements (keyState.dead) a key's bag may
// hold before an arrival rewrites the bag instead of appending to it.
const compactAfter = 16

// bucket is a directory record, and the bucket's stored value once read.
type bucket struct {
	bagstate.Bucket
	loaded bool
	value  []byte
}

func (ks *keyState) len() int { return ks.inBag + ks.inBuckets }

// oldest is the earliest time buffered on side s, in the bag or a bucket.
func (ks *keyState) oldest(s match.Side) (int64, bool) {
	t, ok := ks.b.Oldest(s)
	for _, bk := range ks.buckets {
		if bk.Count[s] > 0 && (!ok || bk.Oldest[s] < t) {
			t, ok = bk.Oldest[s], true
		}
	}
	return t, ok
}

// forgotten empties the key after its state is cleared; it stays in the
// bundle cache, if it is there, as new as a read of its state would give.
func (ks *keyState) forgotten() {
	*ks = keyState{b: match.NewBuffer[[]byte](), key: ks.key, cached: ks.cached}
}

// cacheKey names a key and window in the bundle cache.
type cacheKey struct {
	key string
	win beam.Window
}

// forget drops the cache: a key's state can change between bundles.
func (j *joiner) forget() { j.cache.clear() }

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
	chunks, _, err := st.buffer.Read(st.sp)
	if err != nil {
		return nil, fmt.Errorf("beamjoin: join.Interval: reading state: %w", err)
	}
	d, err := bagstate.DecodeState(chunks)
	if err != nil {
		return nil, err
	}
	ks := &keyState{key: k}
	j.replay(ks, d)
	if len(d.Buckets) > 0 {
		if st.buckets == nil {
			return nil, fmt.Errorf("beamjoin: join.Interval: state holds %d time buckets, but this join has no bucket state (was HotKeyBuckets removed from a running pipeline?)", len(d.Buckets))
		}
		ks.buckets = make(map[int64]*bucket, len(d.Buckets))
		for _, b := range d.Buckets {
			ks.buckets[b.ID] = &bucket{Bucket: b}
			ks.inBuckets += b.Len()
		}
	}
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
func (j *joiner) settle(ctx context.Context, key beam.X, ks *keyState, emit func(beam.EventTime, beam.X, record)) {
	for _, x := range ks.dead {
		j.remove(ctx, key, x, false, emit)
	}
	if ks.stale > 0 {
		counters.staleFirings.Inc(ctx, int64(ks.stale))
	}
	ks.dead, ks.stale = nil, 0
}

// width is the span of a bucket in milliseconds: the length of a partner
// range (so an element's partners are in at most two buckets), and at least
// CleanupEvery, the granularity of cleanup.
func (j *joiner) width() int64 {
	lo, hi := j.Rules.Bounds.Millis()
	return max(hi-lo+1, j.CleanupEvery, 1)
}

// bucketOf is the bucket of time t.
func (j *joiner) bucketOf(t int64) int64 {
	w := j.width()
	if t < 0 {
		return (t - w + 1) / w
	}
	return t / w
}

// reach is the farthest a partner can be from an element, either way.
func (j *joiner) reach() int64 {
	lo, hi := j.Rules.Bounds.Millis()
	return max(hi, -lo, lo, -hi)
}

// loadBuckets reads the listed buckets that exist and are not read yet
// (one state call each) into ks.b.
func (j *joiner) loadBuckets(st stores, ks *keyState, ids []int64) error {
	var read []match.Entry[[]byte]
	for _, id := range ids {
		bk, ok := ks.buckets[id]
		if !ok || bk.loaded {
			continue
		}
		v, _, err := st.buckets.Get(st.sp, id)
		if err != nil {
			return fmt.Errorf("beamjoin: join.Interval: reading state bucket %d: %w", id, err)
		}
		entries, err := bagstate.DecodeEntries(v)
		if err != nil {
			return err
		}
		if len(entries) != bk.Len() {
			return fmt.Errorf("beamjoin: join.Interval: state bucket %d holds %d entries, its directory says %d", id, len(entries), bk.Len())
		}
		bk.loaded, bk.value = true, v
		read = append(read, entries...)
	}
	if len(read) > 0 {
		ks.b = match.Restore(append(ks.b.Entries(), read...), ks.b.Progress)
	}
	return nil
}

// loadRange reads the buckets that may hold times in [from, to].
func (j *joiner) loadRange(st stores, ks *keyState, from, to int64) error {
	if len(ks.buckets) == 0 {
		return nil
	}
	var ids []int64
	for id := j.bucketOf(from); id <= j.bucketOf(to); id++ {
		ids = append(ids, id)
	}
	return j.loadBuckets(st, ks, ids)
}

// loadUpTo reads every bucket up to and including bucket last.
func (j *joiner) loadUpTo(st stores, ks *keyState, last int64) error {
	var ids []int64
	for id := range ks.buckets {
		if id <= last {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return j.loadBuckets(st, ks, ids)
}

// loadPartners reads the buckets an arrival at e needs: those that may
// hold its partners and, under EmitRetract, their partners (Buffer.Add
// looks for them before retracting). A partner x of e lies in
// PartnerRange(e.Side, e.Time), and x's partners, on e's side, lie within
// hi-lo of e.Time either way: [t-(hi-lo), t+(hi-lo)]. For bounds that do
// not contain 0 the two ranges are apart, so each is read on its own.
func (j *joiner) loadPartners(st stores, ks *keyState, e match.Entry[[]byte]) error {
	from, to := j.Rules.PartnerRange(e.Side, e.Time)
	if err := j.loadRange(st, ks, from, to); err != nil {
		return err
	}
	if j.Rules.Emit != match.Retract {
		return nil
	}
	lo, hi := j.Rules.Bounds.Millis()
	return j.loadRange(st, ks, e.Time-(hi-lo), e.Time+(hi-lo))
}

// loadExpiring reads the buckets a cleanup at now needs: every bucket that
// may hold an element expiring at now, or a partner of one (Buffer.Expire
// settles whether each removed element matched).
func (j *joiner) loadExpiring(st stores, ks *keyState, now int64) error {
	if len(ks.buckets) == 0 {
		return nil
	}
	last := int64(-1 << 63)
	for _, s := range []match.Side{match.Left, match.Right} {
		latest := now - j.Rules.Expiry(s, 0) // Expiry(s, ts) <= now iff ts <= latest
		_, to := j.Rules.PartnerRange(s, latest)
		last = max(last, latest, to)
	}
	return j.loadUpTo(st, ks, j.bucketOf(last))
}

// evict removes the excess oldest elements, reading first the oldest
// buckets that hold them and the buckets of their partners.
func (j *joiner) evict(st stores, ks *keyState, excess int) ([]match.Entry[[]byte], error) {
	if len(ks.buckets) > 0 {
		ids := make([]int64, 0, len(ks.buckets))
		for id := range ks.buckets {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		// The oldest buckets holding at least excess elements: every
		// element in a later bucket is younger than all of theirs.
		last, n := ids[len(ids)-1], 0
		for _, id := range ids {
			if n += ks.buckets[id].Len(); n >= excess {
				last = id
				break
			}
		}
		end := (last+1)*j.width() - 1
		if err := j.loadUpTo(st, ks, j.bucketOf(end+j.reach())); err != nil {
			return nil, err
		}
	}
	return ks.b.Evict(j.Rules, ks.b.Len()-excess), nil
}

// mustFlush says whether an arrival must restructure the key's state
// rather than append to the bag: a bag-layout key that has grown past
// BucketAbove moves into buckets, and a bucketed key whose bag holds more
// than LogLimit entries moves them into their buckets.
func (j *joiner) mustFlush(st stores, ks *keyState) bool {
	if st.buckets == nil {
		return false
	}
	if ks.inBuckets == 0 {
		return ks.len() > j.BucketAbove
	}
	return ks.inBag > j.LogLimit
}

// store writes ks back to state after a change that appending cannot
// express: eviction, cleanup, or a move between layouts (flush). It
// chooses the layout: buckets when the key holds more than BucketAbove
// elements (once bucketed, until it holds at most half of that), else the
// bag. Writing the bag costs two state calls (clear, append); in the
// bucketed layout each changed bucket costs two more and each emptied one
// one. A flush first reads the buckets of the entries it moves.
func (j *joiner) store(st stores, ks *keyState, flush bool) error {
	if flush && len(ks.buckets) > 0 {
		var ids []int64
		for _, e := range ks.b.Entries() {
			ids = append(ids, j.bucketOf(e.Time))
		}
		slices.Sort(ids)
		if err := j.loadBuckets(st, ks, slices.Compact(ids)); err != nil {
			return err
		}
	}
	total := ks.b.Len()
	for _, bk := range ks.buckets {
		if !bk.loaded {
			total += bk.Len()
		}
	}
	limit := j.BucketAbove
	if ks.inBuckets > 0 {
		limit /= 2
	}
	if st.buckets == nil || total <= limit {
		return j.storeBag(st, ks)
	}
	return j.storeBuckets(st, ks)
}

// storeBag writes the whole buffer into the bag, folding any buckets back.
func (j *joiner) storeBag(st stores, ks *keyState) error {
	if len(ks.buckets) > 0 {
		if err := j.loadUpTo(st, ks, 1<<62); err != nil {
			return err
		}
		if err := st.buckets.Clear(st.sp); err != nil {
			return fmt.Errorf("beamjoin: join.Interval: clearing state buckets: %w", err)
		}
	}
	entries := ks.b.Entries()
	if err := j.rewriteBag(st, bagstate.EncodeState(ks.b.Progress, nil, entries)); err != nil {
		return err
	}
	ks.buckets, ks.inBag, ks.inBuckets = nil, len(entries), 0
	return nil
}

// storeBuckets writes each read bucket that changed, and new ones; entries
// whose bucket exists but was not read stay in the bag.
func (j *joiner) storeBuckets(st stores, ks *keyState) error {
	var inBag []match.Entry[[]byte]
	groups := map[int64][]match.Entry[[]byte]{}
	for _, e := range ks.b.Entries() {
		id := j.bucketOf(e.Time)
		if bk, ok := ks.buckets[id]; ok && !bk.loaded {
			inBag = append(inBag, e)
		} else {
			groups[id] = append(groups[id], e)
		}
	}
	dir := make(map[int64]*bucket, len(ks.buckets)+len(groups))
	for id, bk := range ks.buckets {
		if _, ok := groups[id]; ok || !bk.loaded {
			dir[id] = bk
			continue
		}
		if err := st.buckets.Remove(st.sp, id); err != nil { // emptied
			return fmt.Errorf("beamjoin: join.Interval: removing state bucket %d: %w", id, err)
		}
	}
	inBuckets := 0
	for id, entries := range groups {
		v := bagstate.EncodeEntries(entries)
		if old, ok := ks.buckets[id]; !ok || !bytes.Equal(old.value, v) {
			if err := st.buckets.Put(st.sp, id, v); err != nil {
				return fmt.Errorf("beamjoin: join.Interval: writing state bucket %d: %w", id, err)
			}
		}
		bk := &bucket{Bucket: bagstate.Bucket{ID: id}, loaded: true, value: v}
		for _, e := range entries {
			if bk.Count[e.Side] == 0 || e.Time < bk.Oldest[e.Side] {
				bk.Oldest[e.Side] = e.Time
			}
			bk.Count[e.Side]++
		}
		dir[id] = bk
	}
	records := make([]bagstate.Bucket, 0, len(dir))
	for _, bk := range dir {
		records = append(records, bk.Bucket)
		inBuckets += bk.Len()
	}
	slices.SortFunc(records, func(a, b bagstate.Bucket) int { return cmp.Compare(a.ID, b.ID) })
	if err := j.rewriteBag(st, bagstate.EncodeState(ks.b.Progress, records, inBag)); err != nil {
		return err
	}
	ks.buckets, ks.inBag, ks.inBuckets = dir, len(inBag), inBuckets
	return nil
}

// rewriteBag replaces the bag with one chunk.
func (j *joiner) rewriteBag(st stores, chunk []byte) error {
	if err := st.buffer.Clear(st.sp); err != nil {
		return fmt.Errorf("beamjoin: join.Interval: clearing state: %w", err)
	}
	if err := st.buffer.Add(st.sp, chunk); err != nil {
		return fmt.Errorf("beamjoin: join.Interval: writing state: %w", err)
	}
	return nil
}
