package join

// This file holds the interval join's per-bundle cache of key states: what
// the DoFn instance has read of the keys seen in the current bundle, so
// that a key's second element in a bundle costs no state read. The cache
// is bounded in bytes and drops the least recently used keys first.

import (
	"container/list"
	"context"
)

// DefaultBundleCacheBytes is the bound of an interval join's per-bundle
// cache of key states when BundleCacheBytes is not given.
const DefaultBundleCacheBytes = 64 << 20

// BundleCacheBytes bounds the interval join's per-bundle cache of key
// states at about n bytes (the estimated size of the buffered elements and
// state it holds) per DoFn instance. The cache saves a key's state read for
// every element of the key after its first in a bundle; beyond the bound
// the least recently used keys are dropped, and read again from state if
// they come back in the same bundle. Results do not depend on it. The
// default is DefaultBundleCacheBytes; the counters cache_hits and
// cache_misses say how well it serves. It applies to the streaming path
// only: the bounded-input path (Bounded) keeps no such cache.
func BundleCacheBytes(n int64) Option {
	return optionFunc(func(c *config) { c.cacheBytes = n; c.set |= setBundleCacheBytes })
}

// Estimated sizes, in bytes, of what a cached key costs besides its
// values, measured with BenchmarkIntervalBundleCache's small values (the
// live heap the cache held over what it counted): the key's own records
// (map entry, list element, keyState, buffer: about 320), one buffered
// entry with its share of the slices' spare capacity and of its value's
// allocation, and one bucket's directory record.
const (
	cachedKeyBytes = 512
	entryBytes     = 72
	bucketBytes    = 96
)

// keyCache is the per-bundle cache: the keys seen in the bundle, most
// recently used first, and their estimated sizes. The zero value is an
// empty cache with the default bound.
type keyCache struct {
	limit        int64
	used, peak   int64
	lru          list.List // of *cachedKey
	byKey        map[cacheKey]*list.Element
	hits, misses int64
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
// the least recently used keys while the cache is over its bound (the key
// itself too, if it alone is over).
func (c *keyCache) resized(ks *keyState) {
	if ks.cached == nil {
		return
	}
	ck := ks.cached.Value.(*cachedKey)
	size := ks.bytes() + int64(len(ck.key.key))
	c.used += size - ck.size
	ck.size = size
	limit := c.limit
	if limit <= 0 {
		limit = DefaultBundleCacheBytes
	}
	for c.used > limit {
		last := c.lru.Back()
		old := last.Value.(*cachedKey)
		c.lru.Remove(last)
		delete(c.byKey, old.key)
		old.ks.cached = nil
		c.used -= old.size
	}
	c.peak = max(c.peak, c.used)
}

// clear empties the cache, keeping its bound and statistics.
func (c *keyCache) clear() {
	for e := c.lru.Front(); e != nil; e = e.Next() {
		e.Value.(*cachedKey).ks.cached = nil
	}
	c.lru.Init()
	c.byKey, c.used = nil, 0
}

// bytes estimates what the key's state holds in memory: its buffered
// entries (values included) and the buckets read. It costs a look at each
// bucket, not at each entry.
func (ks *keyState) bytes() int64 {
	n := cachedKeyBytes + int64(ks.b.Len()+len(ks.dead))*entryBytes + ks.b.ValueBytes()
	for _, x := range ks.dead {
		n += int64(len(x.Value))
	}
	for _, bk := range ks.buckets {
		n += bucketBytes + int64(len(bk.value))
	}
	return n
}
