package join

// This file holds the interval join's tuning options. They trade what a
// join costs (state calls, memory, the delay of EmitFinal's records)
// against what it keeps; none changes which elements match. The defaults
// suit most pipelines; README.md's Performance section has the figures.

import "time"

// CleanupEvery sets how much the interval join's cleanup may coalesce: a
// key's cleanup timer fires at the latest expiry within d of its earliest
// one, so one firing clears every element that expires in that span, and
// no element stays buffered longer than d past its expiry (nor, under
// EmitFinal, is its unmatched record delayed longer). Coarser means fewer
// timer firings (each a state read and rewrite) at the cost of buffering
// more. One millisecond makes cleanup exact.
//
// The default is derived from what the join must keep: a quarter of
// max(upper, 0) + max(-lower, 0) + twice the allowed lateness (at least
// one millisecond), the time a left and a right element stay matchable
// together. Under steady traffic on a key, which keeps about that span's
// worth of elements in any case, the buffer then holds at most about 1.5
// times what the bounds require; a key whose elements come further apart
// than d pays about one firing per burst of elements, as a hand-written
// join that re-sets its timer to the latest expiry does. With bounds of
// ±5 s the default is 2.5 s; with 0 to 15 minutes, 3m45s.
func CleanupEvery(d time.Duration) Option {
	return optionFunc(func(c *config) { c.cleanupEvery = d; c.set |= setCleanupEvery })
}

// cleanupMillis is the interval join's CleanupEvery in milliseconds: the
// option's, or the default derived from the bounds and lateness.
func (c config) cleanupMillis() int64 {
	if c.set&setCleanupEvery != 0 {
		return c.cleanupEvery.Milliseconds()
	}
	lo, hi := c.bounds.Millis()
	lateness := c.lateness.Milliseconds()
	return max((max(hi, 0)+max(-lo, 0)+2*lateness)/4, 1)
}

// HotKeyBuckets lets the interval join move the buffer of a key that holds
// more than n elements out of its bag and into time buckets of a
// state.Map, so that an arrival reads the few buckets its partners can be
// in rather than the key's whole buffer (see the package documentation's
// section on state). It declares map state, which Prism supports but not
// every runner does.
func HotKeyBuckets(n int) Option {
	return optionFunc(func(c *config) { c.bucketAbove = n; c.set |= setHotKeyBuckets })
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

// layout forces the interval join's state layout, for tests and benchmarks
// (export_test.go): bucketed or not, whatever HotKeyBuckets says, with the
// thresholds of the bucketed layout.
type layout struct {
	bucketed              bool
	bucketAbove, logLimit int
}

// withLayout forces the interval join's state layout.
func withLayout(l layout) Option {
	return optionFunc(func(c *config) { c.layout = &l; c.set |= setTestOnly })
}

// withoutBundleCache turns the interval join's per-bundle cache of key
// states off, for tests and benchmarks (export_test.go).
func withoutBundleCache() Option {
	return optionFunc(func(c *config) { c.noCache = true; c.set |= setTestOnly })
}
