package join

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/google/go-cmp/cmp"
)

// cacheRules are the rules of the cache tests: a ten-second span, so that
// a key's elements a few seconds apart pair.
var cacheRules = match.Rules{Bounds: match.Between(-5*time.Second, 5*time.Second), Type: match.FullOuter, Emit: match.Immediate}

// playKeys runs n elements over keys keys through h in a bundle it
// starts (the caller finishes it), the i-th on key i%keys at i ms,
// alternately left and right, checking after each element that the cache
// is within bound (if bound > 0).
func playKeys(t testing.TB, h *harness, n, keys int, bound int64) {
	h.startBundle()
	for i := range n {
		side := Left
		if i%2 == 1 {
			side = Right
		}
		h.element(side, int64(i), fmt.Sprintf("k%06d", i%keys), fmt.Sprintf("v%d", i))
		if c := &h.fn.Join.cache; bound > 0 && c.used > bound {
			t.Fatalf("after element %d the cache holds %d bytes, over its bound %d", i, c.used, bound)
		}
	}
}

// TestIntervalBundleCacheBounded (issue 9.3): a bundle over more keys than
// the cache holds keeps the cache within its bound, dropping the least
// recently used keys, and the records are those of a join without a
// cache. A key seen again while still cached is a hit; one dropped is read
// again (a miss).
func TestIntervalBundleCacheBounded(t *testing.T) {
	const n, keys = 4000, 400
	const bound = 16 << 10
	bounded := newHarness(t, cacheRules, time.Millisecond, bound)
	playKeys(t, bounded, n, keys, bound)
	bounded.finishBundle()
	uncached := newHarness(t, cacheRules, time.Millisecond, -1)
	playKeys(t, uncached, n, keys, 0)
	uncached.finishBundle()
	if diff := cmp.Diff(uncached.out, bounded.out); diff != "" {
		t.Errorf("records with a bounded cache differ from those without a cache (-without +with):\n%s", diff)
	}
	c := bounded.fn.Join.cache
	if c.peak == 0 || c.peak > bound {
		t.Errorf("the cache's peak is %d bytes, want within (0, %d]", c.peak, bound)
	}
	// Keys come round every 400 elements, more than 16 KiB of keys: every
	// element misses.
	if c.hits != 0 || c.misses != n {
		t.Errorf("round robin over %d keys: %d hits, %d misses; want 0 and %d", keys, c.hits, c.misses, n)
	}

	// The same keys in runs of 10: the first element of a run misses, the
	// other nine hit.
	runs := newHarness(t, cacheRules, time.Millisecond, bound)
	runs.startBundle()
	for i := range n {
		runs.element(Left, int64(i), fmt.Sprintf("k%06d", i/10), "v")
	}
	runs.finishBundle()
	if c := runs.fn.Join.cache; c.hits != n*9/10 || c.misses != n/10 {
		t.Errorf("runs of 10 per key: %d hits, %d misses; want %d and %d", c.hits, c.misses, n*9/10, n/10)
	}
}

// TestIntervalBundleCacheOption checks that BundleCacheBytes takes only a
// positive bound.
func TestIntervalBundleCacheOption(t *testing.T) {
	for _, n := range []int64{0, -1} {
		if err := CheckInterval(Between(0, time.Second), BundleCacheBytes(n)); err == nil {
			t.Errorf("BundleCacheBytes(%d) accepted, want an error", n)
		}
	}
	if err := CheckInterval(Between(0, time.Second), BundleCacheBytes(1<<20)); err != nil {
		t.Errorf("BundleCacheBytes(1 MiB): %v", err)
	}
	if err := CheckWindow(BundleCacheBytes(1 << 20)); err == nil {
		t.Error("join.Window took BundleCacheBytes, want an error")
	}
}

// BenchmarkIntervalBundleCache (issue 9.3) plays one bundle of 1M elements
// over 100k keys through the interval DoFn (in-memory state, no runner)
// with the default bound, a 16 MiB bound, and no bound to speak of, and
// reports the cache's peak estimated size, its hits and misses, and the
// live Go heap at the bundle's end, before the cache is dropped, less the
// live heap after it is dropped: what the cache really held (the
// in-memory state backend, which holds the whole input, is in both). The
// bounded rows fail if the cache ever exceeds its bound. Run with
// -benchtime=1x: one iteration is one whole bundle.
func BenchmarkIntervalBundleCache(b *testing.B) {
	const n, keys = 1_000_000, 100_000
	for _, bc := range []struct {
		name  string
		bound int64
	}{
		{"default", DefaultBundleCacheBytes},
		{"16MiB", 16 << 20},
		{"unbounded", 1 << 40},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h := newHarness(b, cacheRules, time.Millisecond, bc.bound)
				check := bc.bound
				if bc.name == "unbounded" {
					check = 0
				}
				playKeys(b, h, n, keys, check)
				full := heapInUse()
				h.finishBundle()
				held := full - heapInUse()
				c := h.fn.Join.cache
				b.ReportMetric(float64(c.peak)/(1<<20), "cache-peak-MiB")
				b.ReportMetric(float64(held)/(1<<20), "cache-heap-MiB")
				b.ReportMetric(float64(min(bc.bound, 1<<30))/(1<<20), "cache-bound-MiB")
				b.ReportMetric(float64(c.hits), "hits")
				b.ReportMetric(float64(c.misses), "misses")
				runtime.KeepAlive(h)
			}
		})
	}
}

// heapInUse is the live Go heap after a collection.
func heapInUse() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
