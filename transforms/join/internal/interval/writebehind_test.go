package interval

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bagstate"
	gocmp "github.com/google/go-cmp/cmp"
)

// writeBehindRules join elements up to a second apart and expire them a
// second after their time: a key's elements a few milliseconds apart in
// one bundle all stay buffered, so each arrival is a plain append.
var writeBehindRules = match.Rules{Bounds: match.Between(-time.Second, time.Second), Type: match.Inner, Emit: match.Immediate}

// playBundle runs one bundle of n elements over keys keys (playKeys);
// finish says whether the bundle finishes (false: it fails before
// FinishBundle).
func playBundle(t testing.TB, h *harness, n, keys int, finish bool) {
	playKeys(t, h, n, keys, 0)
	if finish {
		h.finishBundle()
	}
}

// decodedBags decodes every key's bag in h.
func decodedBags(t *testing.T, h *harness) map[string]bagstate.State {
	t.Helper()
	out := map[string]bagstate.State{}
	for k, st := range h.states {
		d, err := bagstate.DecodeState(st.Bags["buffer"])
		if err != nil {
			t.Fatalf("key %s: %v", k, err)
		}
		out[k] = d
	}
	return out
}

// TestIntervalWritesOncePerBundle (issue 49): a cached key's arrivals in
// a bundle cost one state read and one append in all, written when the
// bundle finishes, and the bag then decodes to what one append per
// arrival (no cache) makes; a bundle that fails before it finishes writes
// nothing; a key the cache drops mid-bundle has its appends written then.
func TestIntervalWritesOncePerBundle(t *testing.T) {
	const n, keys = 60, 3 // 20 elements per key
	uncached := newHarness(t, writeBehindRules, time.Second, -1)
	playBundle(t, uncached, n, keys, true)
	want := decodedBags(t, uncached)
	if len(want) != keys {
		t.Fatalf("the join without a cache stored %d keys, want %d", len(want), keys)
	}

	t.Run("finished", func(t *testing.T) {
		h := newHarness(t, writeBehindRules, time.Second, 0)
		playBundle(t, h, n, keys, true)
		for k, st := range h.states {
			if st.Calls != 2 || st.Reads != 1 || len(st.Bags["buffer"]) != 1 {
				t.Errorf("key %s: %d state calls (%d reads), %d bag values; want 2 calls: one read, one append", k, st.Calls, st.Reads, len(st.Bags["buffer"]))
			}
			if u := uncached.states[k]; u.Calls != 2*n/keys {
				t.Errorf("key %s without a cache: %d state calls, want %d: a read and an append per arrival", k, u.Calls, 2*n/keys)
			}
		}
		if diff := gocmp.Diff(want, decodedBags(t, h)); diff != "" {
			t.Errorf("bags differ from the join's without a cache (-without +with):\n%s", diff)
		}
		if diff := gocmp.Diff(uncached.out, h.out, sorted); diff != "" {
			t.Errorf("records differ from the join's without a cache (-without +with):\n%s", diff)
		}
	})

	t.Run("failed", func(t *testing.T) {
		h := newHarness(t, writeBehindRules, time.Second, 0)
		playBundle(t, h, n, keys, false)
		h.startBundle() // the next bundle on the instance drops what the failed one left
		h.finishBundle()
		for k, st := range h.states {
			if st.Calls != 1 || len(st.Bags["buffer"]) != 0 {
				t.Errorf("key %s: %d state calls, %d bag values after a failed bundle; want its one read and nothing written", k, st.Calls, len(st.Bags["buffer"]))
			}
		}
	})

	t.Run("dropped", func(t *testing.T) {
		// A bound below one key's size: each key is dropped when
		// another is cached, so its appends are written then.
		h := newHarness(t, writeBehindRules, time.Second, 1)
		playBundle(t, h, n, keys, false)
		written := 0
		for _, st := range h.states {
			written += len(st.Bags["buffer"])
		}
		if written == 0 {
			t.Fatal("before the bundle finished, no dropped key had its appends written")
		}
		h.finishBundle()
		if diff := gocmp.Diff(want, decodedBags(t, h)); diff != "" {
			t.Errorf("bags differ from the join's without a cache (-without +with):\n%s", diff)
		}
		if diff := gocmp.Diff(uncached.out, h.out, sorted); diff != "" {
			t.Errorf("records differ from the join's without a cache (-without +with):\n%s", diff)
		}
	})
}

// BenchmarkBundleWrites (issue 49) measures the state calls per element of
// BenchmarkOrdinaryKeysState's shape (a pair per key every 8 s of event
// time, the right element 2 s after the left, bounds ±5 s, default
// CleanupEvery, in-memory backend, bundles of 1000 elements, due timers
// fired between bundles) over 1000, 100 and 10 keys: 1, 10 and 100
// elements of a key per bundle. "write-behind" is the default layout as
// it is (detection on), "append-per-arrival" the same with one state call
// per append (joiner.NoWriteBehind), as before write-behind. The rows
// ending in "cleanup60s" take CleanupEvery(time.Minute): a watermark step
// of a bundle's event time (400 s over 10 keys) fires each key's cleanup
// timer 160 times at the default (a firing sets the next, which is due
// too), 7 times at a minute.
func BenchmarkBundleWrites(b *testing.B) {
	const n = 100_000
	rules := match.Rules{Bounds: match.Between(-5*time.Second, 5*time.Second)}
	for _, keys := range []int{1000, 100, 10} {
		element := func(i int) (match.Side, int64, string, string) {
			k, j := i%keys, i/keys
			t := int64(1_700_000_000_000) + int64(j/2)*8000 + int64(j%2)*2000 + int64(k)*2000/int64(keys)
			side := match.Left
			if j%2 == 1 {
				side = match.Right
			}
			return side, t, fmt.Sprintf("key-%05d", k), fmt.Sprintf("%016d", i)
		}
		layouts := []hotLayout{{name: "write-behind", hotAfter: defaultHotAfter}, {name: "append-per-arrival", hotAfter: defaultHotAfter, noWriteBehind: true}}
		if keys == 10 {
			layouts = append(layouts, hotLayout{name: "write-behind-cleanup60s", hotAfter: defaultHotAfter}, hotLayout{name: "append-per-arrival-cleanup60s", hotAfter: defaultHotAfter, noWriteBehind: true})
		}
		for _, l := range layouts {
			every := 2500 * time.Millisecond // CleanupEvery's default for these bounds
			if strings.HasSuffix(l.name, "cleanup60s") {
				every = time.Minute
			}
			b.Run(fmt.Sprintf("keys=%d/%s", keys, l.name), func(b *testing.B) {
				for range b.N {
					h := l.harness(b, rules, every)
					playInBundles(h, n, element)
					var calls, reads int
					for _, st := range h.states {
						calls += st.Calls
						reads += st.Reads
					}
					b.ReportMetric(float64(calls)/n, "calls/elem")
					b.ReportMetric(float64(reads)/n, "reads/elem")
					b.ReportMetric(float64(calls-reads)/n, "writes/elem")
				}
			})
		}
	}
}
