package interval

// This file holds the interval join's per-bundle cache of key states: what
// the DoFn instance has read of the keys seen in the current bundle, so
// that a key's second element in a bundle costs no state read. The caches
// of all the bundles a worker process runs at once share one bound in
// bytes (processCaches); each drops its own least recently used keys
// first.

import (
	"container/list"
	"context"
	"runtime"
	"sync/atomic"
)

// DefaultCacheBytes is the bound of the bundle caches of key states in one
// worker process when Config.CacheBytes is zero: join.DefaultBundleCacheBytes.
const DefaultCacheBytes = 64 << 20

// Estimated sizes, in bytes, of what a cached key costs besides its
// values, measured with BenchmarkIntervalBundleCache's small values (the
// live heap the cache held over what it counted): the key's own records
// (map entry, list element, keyState, buffer: about 320), one buffered
// entry with its share of the slices' spare capacity and of its value's
// allocation, and one run of the split layout's first stage (two int64s
// with the slice's spare capacity).
const (
	cachedKeyBytes = 512
	entryBytes     = 72
	runBytes       = 32
)

// CacheBudget is what the bundle caches of one worker process hold
// together, in estimated bytes. The runner-model harness of package join's
// tests gives each simulated process its own.
type CacheBudget struct{ used atomic.Int64 }

// Bytes is what the caches in the budget hold now.
func (b *CacheBudget) Bytes() int64 { return b.used.Load() }

// processCaches is this worker process's budget, shared by every bundle
// cache of every interval join in it (join.BundleCacheBytes).
var processCaches CacheBudget

// cacheShare is one cache's part of its budget, a separate allocation so
// that when the cache's DoFn instance is collected without its bundle
// ending (a failed bundle), a cleanup gives the part back.
type cacheShare struct{ used *atomic.Int64 }

// keyCache is the per-bundle cache: the keys seen in the bundle, most
// recently used first, and their estimated sizes. The zero value is an
// empty cache with the default bound, in the process's budget.
type keyCache struct {
	limit        int64
	used, peak   int64
	lru          list.List // of *cachedKey
	byKey        map[cacheKey]*list.Element
	hits, misses int64
	// err is the first error of writing a dropped key's pending records
	// (keyState.flush), which the bundle's end returns (flush).
	err error
	// budget is the process budget the cache counts against (nil:
	// processCaches; the runner-model harness gives each simulated
	// process its own), share the cache's part of it.
	budget *CacheBudget
	share  *cacheShare
}

// account adds delta bytes to the cache's own use and to its budget.
func (c *keyCache) account(delta int64) {
	if c.share == nil {
		if c.budget == nil {
			c.budget = &processCaches
		}
		budget, part := c.budget, new(atomic.Int64)
		c.share = &cacheShare{used: part}
		runtime.AddCleanup(c.share, func(part *atomic.Int64) { budget.used.Add(-part.Swap(0)) }, part)
	}
	c.used += delta
	c.share.used.Add(delta)
	c.budget.used.Add(delta)
}

// cachedKey is one cached key: its state and its size when last measured.
type cachedKey struct {
	key  cacheKey
	ks   *keyState
	size int64
}

// peek returns the key's cached state, if cached, counting nothing.
func (c *keyCache) peek(ck cacheKey) (*keyState, bool) {
	e, ok := c.byKey[ck]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*cachedKey).ks, true
}

// get returns the key's cached state and marks it used, counting a hit
// or a miss.
func (c *keyCache) get(ctx context.Context, ck cacheKey) (*keyState, bool) {
	e, ok := c.byKey[ck]
	if !ok {
		c.misses++
		counters.cacheMisses.Inc(ctx, 1)
		return nil, false
	}
	c.hits++
	counters.cacheHits.Inc(ctx, 1)
	c.lru.MoveToFront(e)
	return e.Value.(*cachedKey).ks, true
}

// put caches a key's state just read.
func (c *keyCache) put(ck cacheKey, ks *keyState) {
	if c.byKey == nil {
		c.byKey = map[cacheKey]*list.Element{}
	}
	ks.cached = c.lru.PushFront(&cachedKey{key: ck, ks: ks})
	c.byKey[ck] = ks.cached
	c.resized(ks)
}

// resized measures a cached key's state again after a change, and drops
// the cache's least recently used keys while the process's caches
// together are over the bound (the key itself too, if it alone is over).
// Another bundle's cache is never touched: its instance may be using it.
func (c *keyCache) resized(ks *keyState) {
	if ks.cached == nil {
		return
	}
	ck := ks.cached.Value.(*cachedKey)
	size := ks.bytes() + int64(len(ck.key.key))
	c.account(size - ck.size)
	ck.size = size
	limit := c.limit
	if limit <= 0 {
		limit = DefaultCacheBytes
	}
	for c.budget.used.Load() > limit && c.lru.Len() > 0 {
		last := c.lru.Back()
		old := last.Value.(*cachedKey)
		if err := old.ks.flush(); err != nil && c.err == nil {
			c.err = err
		}
		c.lru.Remove(last)
		delete(c.byKey, old.key)
		old.ks.cached = nil
		c.account(-old.size)
	}
	c.peak = max(c.peak, c.used)
}

// flush writes every cached key's pending records (keyState.flush), and
// returns the first error of writing them or of writing those of a key
// the cache dropped.
func (c *keyCache) flush() error {
	err := c.err
	for e := c.lru.Front(); e != nil; e = e.Next() {
		if ferr := e.Value.(*cachedKey).ks.flush(); ferr != nil && err == nil {
			err = ferr
		}
	}
	return err
}

// clear empties the cache, keeping its bound and statistics, and gives
// its bytes back to the process's budget. Records it had not written are
// dropped with it.
func (c *keyCache) clear() {
	c.err = nil
	for e := c.lru.Front(); e != nil; e = e.Next() {
		e.Value.(*cachedKey).ks.cached = nil
	}
	c.lru.Init()
	if c.used != 0 {
		c.account(-c.used)
	}
	c.byKey = nil
}

// bytes estimates what the key's state holds in memory: its buffered
// entries, values included. It costs no look at each entry.
func (ks *keyState) bytes() int64 {
	n := cachedKeyBytes + int64(ks.b.Len()+len(ks.dead))*entryBytes + ks.b.ValueBytes() + int64(len(ks.runs))*runBytes + int64(len(ks.pending))
	for _, x := range ks.dead {
		n += int64(len(x.Value))
	}
	return n
}
