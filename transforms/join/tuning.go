package join

// This file holds the interval join's tuning options. They trade what a
// join costs (state calls, memory, the delay of EmitFinal's records)
// against what it keeps; none changes which elements match. The defaults
// suit most pipelines; README.md's Performance section has the figures.

import "time"

// CleanupEvery sets how much the interval join's cleanup may coalesce: a
// key's cleanup timer fires d less a millisecond after the earliest expiry
// among its elements, so that one firing (a state read and rewrite)
// removes every element that expires within d of the earliest, and no
// element stays buffered longer than that past its expiry (nor, under
// EmitFinal, is its unmatched record delayed longer). Coarser means fewer
// firings at the cost of buffering more; one millisecond makes cleanup
// exact.
//
// The default is derived from what the join must keep: a quarter of
// max(upper, 0) + max(-lower, 0) + twice the allowed lateness, the time a
// left and a right element stay matchable together (at least one
// millisecond). A key with steady traffic, which keeps that span's worth of
// elements in any case, then buffers at most about 1.5 times what the
// bounds require, and a key whose elements come in bursts shorter than d
// pays one firing per burst. With bounds of ±5 s the default is 2.5 s; with
// 0 to 15 minutes, 3m45s.
func CleanupEvery(d time.Duration) Option {
	return optionFunc(func(c *config) { c.cleanupEvery = d; c.set |= setCleanupEvery })
}

// cleanupMillis is the interval join's CleanupEvery in milliseconds: the
// option's, or the default derived from the bounds and the lateness.
func (c config) cleanupMillis() int64 {
	if c.set&setCleanupEvery != 0 {
		return c.cleanupEvery.Milliseconds()
	}
	lo, hi := c.bounds.Millis()
	return max((max(hi, 0)+max(-lo, 0)+2*c.lateness.Milliseconds())/4, 1)
}

// HotKeyBuckets makes the interval join keep each key's buffer in time
// buckets, as SplitKeys(0) does; n, once the number of elements above
// which a key moved into buckets, is ignored (it must not be negative).
//
// Deprecated: use SplitKeys, which every key takes, on bag state alone
// (HotKeyBuckets used map state, which not every runner supports).
func HotKeyBuckets(n int) Option {
	return optionFunc(func(c *config) { c.split, c.hotKeyBuckets = true, n; c.set |= setHotKeyBuckets })
}

// BoundedBucket sets the width of the time buckets in which the bounded
// path (Bounded) sweeps a key: a worker holds one bucket of a key at a
// time, with the elements within the bounds' reach either side of it, so
// the width times a key's densest rate bounds the memory of a sweep. The
// default is eight times that reach (twice the larger of -lower and
// upper, three times under EmitRetract), at least a second: the context
// then costs at most an eighth more grouping. Narrower buckets hold less
// and place more elements in two groups. It has no effect on which
// records come out, and none under MaxBufferedPerKey, where a key is
// swept whole.
func BoundedBucket(d time.Duration) Option {
	return optionFunc(func(c *config) { c.bucketWidth = d; c.set |= setBoundedBucket })
}

// MaxBufferedPerKey caps the elements a key buffers on both sides together.
// Beyond it the oldest by timestamp (on a tie, left first) are evicted and
// counted as evicted. Under EmitFinal an evicted outer element that never
// matched is emitted as unmatched then; under EmitImmediate and EmitRetract
// it was reported unmatched when it arrived, and that record stands. Pairs
// an evicted element would still have made are lost: that is the price of
// the cap. Zero (the default) means no cap.
func MaxBufferedPerKey(n int) Option {
	return optionFunc(func(c *config) { c.maxBuffered = n; c.set |= setMaxBuffered })
}

// DefaultProgressHorizon is how long an interval join's key keeps its
// cleanup progress in state, once its data is gone, unless
// ProgressHorizon says otherwise.
const DefaultProgressHorizon = time.Hour

// ProgressHorizon sets how long, in event time, an interval join's key
// (or an as-of join's: see AsOf) keeps its cleanup progress in Beam state
// after its data is gone: DefaultProgressHorizon unless set. (The split
// layout, SplitKeys, keeps it one join memory longer, max(upper,0) +
// max(-lower,0) + allowed lateness + 1 ms, for its buckets to catch up.)
// Until then an element that arrives on the key behind that progress is
// late (see the package documentation's "Late data in Interval"); then a
// timer clears the key's state, so that a stream of ever new keys leaves
// no state behind, and the key is new to the join: a very late element on
// it is joined as new. The rule depends on the key's state and the
// watermark alone, so it is the same on every worker and runner, whichever
// process the key is on and however often it moves: an element behind the
// watermark by less than d is always judged as if the key were never
// forgotten. A key holding only its progress costs one small bag value
// and one timer. d is a whole number of milliseconds. Zero forgets a key
// in the cleanup firing that removes its last element (in the default
// layout: one firing per key, no progress kept): choose it when no element
// comes more than the allowed lateness behind the watermark (a source
// whose watermark is exact, or one that drops such elements itself, as
// jsonl.Source.JudgeLate does), since an element behind a forgotten key's
// progress is joined as new, not reported late.
func ProgressHorizon(d time.Duration) Option {
	return optionFunc(func(c *config) { c.horizon = d; c.set |= setProgressHorizon })
}

// withoutBundleCache turns the interval join's per-bundle cache of key
// states off, for tests and benchmarks (export_test.go).
func withoutBundleCache() Option {
	return optionFunc(func(c *config) { c.noCache = true; c.set |= setTestOnly })
}

// withoutAppendCleanup makes every cleanup firing of the interval join read
// and rewrite its key's state (no cleanup records), for tests and
// benchmarks (export_test.go).
func withoutAppendCleanup() Option {
	return optionFunc(func(c *config) { c.noAppendCleanup = true; c.set |= setTestOnly })
}

// withGatherBytes sets how many bytes of values the bounded paths gather
// per bundle before they hand them on, for tests (export_test.go).
func withGatherBytes(n int) Option {
	return optionFunc(func(c *config) { c.gatherBytes = n; c.set |= setTestOnly })
}

// withBoundedShards sets how many shards the bounded paths spread keys
// over, for tests (export_test.go).
func withBoundedShards(n int) Option {
	return optionFunc(func(c *config) { c.boundedShards = n; c.set |= setTestOnly })
}

// UniqueLeft declares that the interval join's left input has at most one
// element per key, as when the key is the left's own identity (a person
// joined by id with the auctions it sells, an auction by id with its
// bids). A right element that arrives while its key's left element is
// buffered can then match nothing else, so the join does not buffer it:
// it is joined at once, its unmatched record (under any emission mode)
// and its fate come at once, and it costs no state call beyond the key's
// read, which the bundle cache shares, where it would cost an append and
// a share of the cleanup. Only the left element's first match rewrites the
// key's bag, to record that it matched. The records are the join's
// without the option.
//
// A second left element for a key breaks the declaration, and right
// elements that were not buffered are lost to it. One that arrives while
// the key's first is buffered is not joined: it goes to Outputs.Late, its
// fate is late, and it is counted by left_duplicate. One that arrives
// after the first has expired joins only the right elements still
// buffered. Bounded joins every element as without the option (it keeps
// no state); SplitKeys and MaxBufferedPerKey cannot be combined with it.
func UniqueLeft() Option {
	return optionFunc(func(c *config) { c.uniqueLeft = true; c.set |= setUniqueLeft })
}
