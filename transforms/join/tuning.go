package join

// This file holds the interval join's tuning options. They trade what a
// join costs (state calls, memory, the delay of EmitFinal's records)
// against what it keeps; none changes which elements match. The defaults
// suit most pipelines; README.md's Performance section has the figures.

import (
	"fmt"
	"time"
)

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

// withoutWriteBehind makes every append to an interval join's bag a state
// call of its own, as before write-behind (tests and benchmarks, through
// export_test.go).
func withoutWriteBehind() Option {
	return optionFunc(func(c *config) { c.noWriteBehind = true; c.set |= setTestOnly })
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

// SplitKeys makes the interval join keep each key's buffer in time buckets
// of width d of event time, each processed by the runner as a key of its
// own, so that a hot key's state and work are spread over several runner
// keys and no arrival or cleanup reads or writes more than the few buckets
// its element's partners can be in, however much the key buffers. It uses
// bag state and event-time timers only, which every portable runner
// supports, and writes no state value larger than a mebibyte.
//
// A first stage keyed by the join's key judges lateness and sends each
// element to its own bucket and to the buckets its partners can be in; a
// second stage keyed by key and bucket matches and cleans up. Each
// element's records and fate come from its own bucket, and a pair from its
// left element's bucket, so every record is made exactly once. The records
// are those of the default layout with cleanup at multiples of
// CleanupEvery: a key's cleanup for an expiry t runs when event time
// reaches t rounded up to the next multiple, instead of CleanupEvery less a
// millisecond after the key's earliest expiry. Under
// EmitImmediate and EmitRetract an element is reported unmatched if no
// partner had reached its bucket when it did.
//
// What it costs: several times the state calls per element of the
// default layout on keys with few elements (two stages, elements near a
// bucket's edge sent to two or three buckets), while a hot key's cost per
// element no longer grows with what it buffers, provided its elements come
// closer together than CleanupEvery (docs/performance.md). The default
// width, d = 0, is the larger of CleanupEvery and the bounds' span
// (upper - lower + 1 ms): an element's partners are then in at most two
// buckets. MaxBufferedPerKey, which caps a key's elements across its
// buckets, cannot be combined with it; Bounded ignores it.
//
// What it does not cover: two partners that both arrive further behind
// the watermark than LateBehind, on a key whose cleanup progress does not
// reach them (a new or forgotten key), can miss each other and their pair
// be lost, on any runner, where the default layout pairs them or judges
// the second late. A source that sends such elements to a late output of
// its own first, as the beamjoin command does, closes the gap
// (docs/design/interval.md, "Why the split is exact").
func SplitKeys(d time.Duration) Option {
	return optionFunc(func(c *config) { c.split, c.splitWidth = true, d; c.set |= setSplitKeys })
}

// DefaultHotKeyThreshold is how many buffered elements make a key of the
// interval join hot when HotKeyThreshold does not say otherwise. It is
// about where, measured on one hot key on Prism (docs/performance.md,
// "Hot keys found at run time"), the default layout's time per element
// grows past the split layout's: between 10,000 and 20,000 buffered,
// about 11,000 by a straight line through the default layout's times;
// rounded down, because the default layout's state bytes per element grow
// with what the key buffers (7 KB at 10,000) while the split layout's stay
// at about 76 B.
const DefaultHotKeyThreshold = 10_000

// HotKeyThreshold sets how many buffered elements make a key of the
// interval join's default layout hot (DefaultHotKeyThreshold unless set;
// n must be positive). The join finds hot keys by itself, from each key's
// own state: once a key buffers n elements, its elements from a split
// time on, the first multiple of the bucket width after the reach of
// everything it buffers, go to the split layout's time buckets (see
// SplitKeys), each a runner key of its own, while those before stay in
// the key's bag until they expire; a key's cost per element then no
// longer grows with what it buffers. No element is lost or reported
// twice at the cut-over: each pair is made, and each element's fate
// decided, in one place, which holds all its partners. Once a hot key has
// been idle for a join memory and the progress horizon (ProgressHorizon)
// it is an ordinary key again. Ordinary keys pay nothing for it; the
// split layout's second stage is in the pipeline, empty until a key goes
// hot. The counter hot_keys counts the keys that went hot, the
// distribution hot_key_split_ms how long (in event time) each stayed
// split, and each cut-over is logged with its key.
//
// The records are the default layout's, except that a hot key's elements
// after its split time are cleaned up on the split layout's grid (see
// SplitKeys), which only changes when lateness and EmitFinal's records
// come; and SplitKeys's limit on partners that both arrive further behind
// than LateBehind applies to them. MaxBufferedPerKey and UniqueLeft, whose
// rules need a key's elements in one place, turn detection off; so do
// SplitKeys, which splits every key, and the bounded path (Bounded), which
// sweeps a key in time buckets anyway.
func HotKeyThreshold(n int) Option {
	return optionFunc(func(c *config) {
		c.hotAfter, c.hotGiven = n, true
		c.set |= setHotKeys
		c.given(setHotKeys, fmt.Sprintf("HotKeyThreshold(%d)", n))
	})
}

// NoHotKeyDetection turns off the interval join's hot-key detection (see
// HotKeyThreshold): every key of the default layout keeps its whole
// buffer in one bag, however much it holds, and the pipeline has no split
// stage.
func NoHotKeyDetection() Option {
	return optionFunc(func(c *config) {
		c.hotOff = true
		c.set |= setHotKeys
		c.given(setHotKeys, "NoHotKeyDetection()")
	})
}

// DefaultBundleCacheBytes is the bound of the interval join's bundle
// caches of key states in one worker process when BundleCacheBytes is not
// given.
const DefaultBundleCacheBytes = 64 << 20

// BundleCacheBytes bounds the interval join's bundle caches of key states
// at about n bytes (the estimated size of the buffered elements and state
// they hold) per worker process: the caches of every bundle the process
// runs at once, on any DoFn instance, hold at most n bytes together. A
// bundle's cache saves a key's state read for every element of the key
// after its first in the bundle, and gathers the key's appends of the
// bundle into one, written when the bundle finishes or the key leaves the
// cache (docs/design/interval.md, "Write-behind"); when the process's
// caches together would pass the bound, the bundle that grows drops its own
// least recently used keys (their appends written, and read again from
// state if they come back in the bundle),
// so a runner running many bundles at once, as Dataflow does, does not
// multiply the bound. A bundle's cache is emptied when the bundle ends (a
// failed bundle's when the SDK discards its DoFn instance and Go collects
// it). Joins of one process with different bounds share the one budget,
// each keeping it under its own bound. Results do not depend on it. The
// default is DefaultBundleCacheBytes; the counters cache_hits and
// cache_misses say how well it serves. It applies to the streaming path
// only: the bounded-input path (Bounded) keeps no such cache.
func BundleCacheBytes(n int64) Option {
	return optionFunc(func(c *config) { c.cacheBytes = n; c.set |= setBundleCacheBytes })
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

// Streaming makes Interval, AsOf or Multi run their streaming path even
// when all their inputs are bounded, where they otherwise take the bounded
// path by themselves (see Bounded).
//
//	out := join.Interval[string, Order, Payment](s, orders, payments,
//		join.Between(0, 15*time.Minute), join.MaxBufferedPerKey(1000), join.Streaming())
//
// The records are the same either way, but for two cases. Under
// MaxBufferedPerKey the streaming path's evictions follow the order in
// which the runner delivers a key's elements and fires its timers: on a
// batch runner (Flink's batch mode processes all of a key's elements, then
// its timers) it evicts more than on a stream, where the bounded path's
// records are the stream's. And a left input that breaks UniqueLeft loses
// right elements on the streaming path but not on the bounded one. The
// late output is empty on both, and the counters differ (see Bounded).
//
// Reasons to take it: a key so large under MaxBufferedPerKey that a worker
// cannot hold it in memory (the bounded path sweeps such a key whole; the
// streaming path keeps it in state), or a test of the streaming path
// itself on a bounded input such as beam.Create. On a batch runner the
// streaming path costs a state round trip per element and rereads a key's
// buffer at each cleanup firing: measured on Flink's batch mode it was
// 7.6 times slower than the bounded path at 20,000 elements and 29 times at
// 80,000. Streaming and Bounded cannot be given together.
func Streaming() Option {
	return optionFunc(func(c *config) { c.streaming = true; c.set |= setStreaming })
}
