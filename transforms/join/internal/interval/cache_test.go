package interval

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
		side := match.Left
		if i%2 == 1 {
			side = match.Right
		}
		h.element(side, int64(i), fmt.Sprintf("k%06d", i%keys), fmt.Sprintf("v%d", i))
		if c := &h.j.cache; bound > 0 && c.used > bound {
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
	if diff := gocmp.Diff(uncached.out, bounded.out); diff != "" {
		t.Errorf("records with a bounded cache differ from those without a cache (-without +with):\n%s", diff)
	}
	c := bounded.j.cache
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
		runs.element(match.Left, int64(i), fmt.Sprintf("k%06d", i/10), "v")
	}
	runs.finishBundle()
	if c := runs.j.cache; c.hits != n*9/10 || c.misses != n/10 {
		t.Errorf("runs of 10 per key: %d hits, %d misses; want %d and %d", c.hits, c.misses, n*9/10, n/10)
	}
}

// check verifies the cache's bookkeeping: every cached key points back to
// its place in the list, the bytes counted in use are those of the keys
// cached now, measured again, and they are within the bound.
func (c *keyCache) check() error {
	var used int64
	n := 0
	for e := c.lru.Front(); e != nil; e = e.Next() {
		ck := e.Value.(*cachedKey)
		if ck.ks.cached != e {
			return fmt.Errorf("cached key %q does not point back to its place in the cache", ck.key.key)
		}
		if c.byKey[ck.key] != e {
			return fmt.Errorf("cached key %q is not in the cache's index", ck.key.key)
		}
		used += ck.ks.bytes() + int64(len(ck.key.key))
		n++
	}
	if n != len(c.byKey) {
		return fmt.Errorf("the cache lists %d keys and indexes %d", n, len(c.byKey))
	}
	if used != c.used {
		return fmt.Errorf("the cache counts %d bytes in use, its keys hold %d", c.used, used)
	}
	if limit := cmp.Or(c.limit, DefaultCacheBytes); used > limit {
		return fmt.Errorf("the cache holds %d bytes, over its bound %d", used, limit)
	}
	return nil
}

// hotKeyEvent is one element of TestIntervalBundleCacheHotKeys.
type hotKeyEvent struct {
	side      match.Side
	ms        int64
	key, name string
}

// hotKeyEvents are n elements over two hot keys (about 40% of them) and
// 100 cold ones, 10 ms apart with up to 300 ms of disorder, from a fixed
// seed.
func hotKeyEvents(n int) []hotKeyEvent {
	r := rand.New(rand.NewPCG(9, 3))
	out := make([]hotKeyEvent, n)
	for i := range out {
		key := fmt.Sprintf("cold%03d", r.IntN(100))
		if r.IntN(10) < 4 {
			key = fmt.Sprintf("hot%d", r.IntN(2))
		}
		side := match.Side(r.IntN(2))
		out[i] = hotKeyEvent{side: side, ms: int64(i)*10 + r.Int64N(601) - 300, key: key, name: fmt.Sprintf("%v%d", raw.SideName[side], i)}
	}
	return out
}

// play runs events through h in bundles of bundle elements. After each
// bundle the watermark moves to lag behind the latest time seen, and the
// timers due by then fire, in bundles of their own, earliest first (keys
// in order on a tie), until none is due; at the end every timer fires. It
// returns the largest number of runner keys that held state at a
// bundle's end.
func (h *harness) play(events []hotKeyEvent, bundle int, lag int64) int {
	h.t.Helper()
	var seen int64
	most := 0
	for start := 0; start < len(events); start += bundle {
		h.startBundle()
		for _, e := range events[start:min(start+bundle, len(events))] {
			h.element(e.side, e.ms, e.key, e.name)
			seen = max(seen, e.ms)
			if err := h.checkCaches(); err != nil {
				h.t.Fatalf("after %v at %d on %s: %v", e.side, e.ms, e.key, err)
			}
		}
		h.finishBundle()
		h.fireUpTo(seen - lag)
		n := 0
		for _, st := range h.states {
			if len(st.Bags) > 0 {
				n++
			}
		}
		most = max(most, n)
	}
	h.fireUpTo(1 << 62)
	return most
}

// fireUpTo fires every timer due at or before wm, as play says.
func (h *harness) fireUpTo(wm int64) {
	h.t.Helper()
	for {
		var ready []dueTimer
		if h.split != nil {
			ready = h.splitDue(wm)
		} else {
			for key, tp := range h.timers {
				for _, t := range tp {
					if t.FireTimestamp.Milliseconds() <= wm {
						ready = append(ready, dueTimer{key, t})
					}
				}
			}
			slices.SortFunc(ready, func(a, b dueTimer) int {
				return cmp.Or(cmp.Compare(a.t.FireTimestamp, b.t.FireTimestamp), strings.Compare(a.key, b.key))
			})
		}
		if len(ready) == 0 {
			return
		}
		h.startBundle()
		for _, d := range ready {
			if h.split != nil {
				h.fireSplit(d.key, d.t)
			} else {
				h.fire(d.key, d.t)
			}
			if err := h.checkCaches(); err != nil {
				h.t.Fatalf("after a firing at %v on %s: %v", d.t.FireTimestamp, d.key, err)
			}
		}
		h.finishBundle()
	}
}

// sorted compares lists of records as multisets: a key's partners of an
// arrival that have the same time come out in the order of its buffer,
// which is the order of arrival for a key read from state once and may
// differ for one read again after the cache dropped it.
var sorted = cmpopts.SortSlices(func(a, b string) bool { return a < b })

// TestIntervalBundleCacheHotKeys: with hot keys in the default layout and
// the split layout (SplitKeys), under every emission mode and, in the
// default layout, with eviction by MaxBufferedPerKey, a cache bound
// smaller than a hot key alone (the key drops itself), one that holds the
// hot keys but not every cold one, and the default give the records and
// late elements of a join without a cache, while the caches stay within
// their bound and are used (hits) and overflow (misses on keys seen before
// in the bundle).
func TestIntervalBundleCacheHotKeys(t *testing.T) {
	events := hotKeyEvents(3000)
	for _, rc := range []struct {
		name  string
		rules match.Rules
		max   int
	}{
		{"full-outer-retract", match.Rules{Bounds: match.Between(200*time.Millisecond, 1500*time.Millisecond), Type: match.FullOuter, Emit: match.Retract}, 0},
		{"left-outer-final", match.Rules{Bounds: match.Between(-time.Second, 2*time.Second), Type: match.LeftOuter, Emit: match.Final}, 0},
		{"inner-immediate-max", match.Rules{Bounds: match.Between(-time.Second, time.Second), Type: match.Inner, Emit: match.Immediate}, 40},
	} {
		for _, layout := range []string{"bag", "split"} {
			if layout == "split" && rc.max > 0 {
				continue // MaxBufferedPerKey is the default layout's
			}
			t.Run(rc.name+"/"+layout, func(t *testing.T) {
				harnessOf := func(bound int64) *harness {
					if layout == "split" {
						return newSplitHarness(t, rc.rules, 100*time.Millisecond, 700*time.Millisecond, bound)
					}
					return newLayoutHarness(t, joiner{Rules: rc.rules, CleanupEvery: 100, MaxBuffered: rc.max}, bound)
				}
				uncached := harnessOf(-1)
				keys := uncached.play(events, 50, 500)
				if layout == "split" && keys <= 102 {
					t.Fatalf("at most %d runner keys held state: the hot keys were not split", keys)
				}
				if len(uncached.out) == 0 {
					t.Fatal("the join without a cache emitted nothing")
				}
				for _, bound := range []int64{2 << 10, 32 << 10, 0} {
					h := harnessOf(bound)
					h.play(events, 50, 500)
					if diff := gocmp.Diff(uncached.out, h.out, sorted); diff != "" {
						t.Errorf("bound %d: records differ from those without a cache (-without +with):\n%s", bound, diff)
					}
					if diff := gocmp.Diff(uncached.late, h.late, sorted); diff != "" {
						t.Errorf("bound %d: late elements differ from those without a cache (-without +with):\n%s", bound, diff)
					}
					var peak, hits, misses int64
					for _, c := range h.caches() {
						peak, hits, misses = max(peak, c.peak), hits+c.hits, misses+c.misses
					}
					if limit := cmp.Or(bound, DefaultCacheBytes); peak > limit {
						t.Errorf("bound %d: the cache peaked at %d bytes", bound, peak)
					}
					if hits == 0 {
						t.Errorf("bound %d: no cache hits", bound)
					}
					if overflowed := misses > h.loads(); bound > 0 && bound < 32<<10 && !overflowed {
						t.Errorf("bound %d: %d misses, no more than the %d first loads of a key in a bundle: the bound never dropped a key", bound, misses, h.loads())
					}
				}
			})
		}
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
		{"default", DefaultCacheBytes},
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
				c := h.j.cache
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
