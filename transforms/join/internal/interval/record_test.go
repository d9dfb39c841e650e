package interval

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	gocmp "github.com/google/go-cmp/cmp"
)

// recordCounters are the counters that cleanup records must leave as a
// join that reads and rewrites at every cleanup leaves them.
var recordCounters = []string{
	"left_in", "right_in", "left_matched", "right_matched", "left_unmatched", "right_unmatched",
	"left_expired", "right_expired", "left_evicted", "right_evicted", "left_late", "right_late",
	"left_unmatched_out", "right_unmatched_out", "pairs_out", "retractions_out",
	"buffered", "keys_with_state", "stale_firings",
}

// pairedEvents is the shape of the pipeline benchmarks' input on keys
// keys: pairs of a key Pair ms apart, the right Gap ms after its left,
// keys staggered; every third pair of a key has no right element.
func pairedEvents(keys, pairs int) []hotKeyEvent {
	const pair, gap = 8000, 2000
	var out []hotKeyEvent
	for j := range pairs {
		for _, side := range []match.Side{match.Left, match.Right} {
			if side == match.Right && j%3 == 2 {
				continue
			}
			for k := range keys {
				ms := int64(j)*pair + int64(k)*gap/int64(keys)
				if side == match.Right {
					ms += gap
				}
				out = append(out, hotKeyEvent{side: side, ms: ms, key: fmt.Sprintf("k%02d", k), name: fmt.Sprintf("%v%d", raw.SideName[side], j)})
			}
		}
	}
	return out
}

// calls is the state calls and reads the harness's keys have made.
func (h *harness) calls() (calls, reads int) {
	for _, m := range h.states {
		calls, reads = calls+m.Calls, reads+m.Reads
	}
	return calls, reads
}

// TestIntervalCleanupRecords: under rules whose cleanup holds and emits
// nothing, a key's cleanup timer for a time by which everything buffered
// expires is a record timer, whose firing appends a cleanup record (one
// state call, no read) instead of reading and rewriting the key. The
// records, the late elements and every counter, once all timers have
// fired, are those of the join that reads and rewrites at every cleanup,
// on the benchmarks' input shape and on hot and cold keys, with and
// without a size cap; and on the benchmarks' shape a pair costs 5.125
// state calls, where it costs 7 with a rewrite at every cleanup.
func TestIntervalCleanupRecords(t *testing.T) {
	for _, rc := range []struct {
		name  string
		rules match.Rules
		max   int
	}{
		{"inner-immediate", match.Rules{Bounds: match.Between(-5*time.Second, 5*time.Second), Type: match.Inner, Emit: match.Immediate}, 0},
		{"full-outer-immediate", match.Rules{Bounds: match.Between(-5*time.Second, 5*time.Second), Type: match.FullOuter, Emit: match.Immediate}, 0},
		{"inner-retract-lateness", match.Rules{Bounds: match.Between(time.Second, 3*time.Second), Type: match.Inner, Emit: match.Retract, Lateness: time.Second}, 0},
		{"left-outer-immediate-max", match.Rules{Bounds: match.Between(-time.Second, time.Second), Type: match.LeftOuter, Emit: match.Immediate}, 3},
	} {
		for _, input := range []struct {
			name   string
			events []hotKeyEvent
			bundle int
			lag    int64
		}{
			{"paired", pairedEvents(10, 40), 10, 0},
			{"hot-cold", hotKeyEvents(3000), 50, 500},
		} {
			t.Run(rc.name+"/"+input.name, func(t *testing.T) {
				j := joiner{Rules: rc.rules, CleanupEvery: 2500, MaxBuffered: rc.max}
				rewrite := newLayoutHarness(t, j, 0)
				rewrite.j.AppendCleanup = false
				rewrite.play(input.events, input.bundle, input.lag)
				h := newLayoutHarness(t, j, 0)
				if !h.j.AppendCleanup {
					t.Fatal("the harness's join does not append cleanup records")
				}
				records := h.playCounting(input.events, input.bundle, input.lag)
				if records == 0 {
					t.Fatal("no record timer fired: the test does not exercise cleanup records")
				}
				if diff := gocmp.Diff(rewrite.out, h.out, sorted); diff != "" {
					t.Errorf("records differ from the rewriting join's (-rewrite +record):\n%s", diff)
				}
				if diff := gocmp.Diff(rewrite.late, h.late); diff != "" {
					t.Errorf("late elements differ from the rewriting join's (-rewrite +record):\n%s", diff)
				}
				for _, name := range recordCounters {
					if got, want := h.counter(name), rewrite.counter(name); got != want {
						t.Errorf("counter %s = %d, the rewriting join's %d", name, got, want)
					}
				}
				if got := h.counter("buffered"); got != 0 {
					t.Errorf("buffered = %d after every timer fired, want 0", got)
				}
				calls, _ := h.calls()
				rewriteCalls, _ := rewrite.calls()
				if calls >= rewriteCalls {
					t.Errorf("%d state calls, the rewriting join %d: want fewer", calls, rewriteCalls)
				}
				t.Logf("%d record firings; %d state calls, the rewriting join %d", records, calls, rewriteCalls)
			})
		}
	}
}

// playCounting is play, checking that each firing of a record timer makes
// exactly one state call and no read; it returns how many fired.
func (h *harness) playCounting(events []hotKeyEvent, bundle int, lag int64) int {
	h.t.Helper()
	records := 0
	h.onFire = func(key string, t timers.TimerMap, calls, reads int) {
		if t.Tag != recordTag {
			return
		}
		records++
		if calls != 1 || reads != 0 {
			h.t.Errorf("a record timer's firing on %s at %v made %d state calls and %d reads, want 1 and 0", key, t.FireTimestamp, calls, reads)
		}
	}
	h.play(events, bundle, lag)
	return records
}

// TestIntervalCleanupRecordCalls counts the state calls of one key on the
// benchmarks' input shape (a pair every 8 s, the right 2 s after its left,
// bounds ±5 s, the derived CleanupEvery of 2.5 s), each element and firing
// in a bundle of its own as on Prism: an arrival costs a read and an
// append, a record timer's firing one append, and every ninth pair's left
// arrival rewrites the bag (16 dead elements): 41 calls for 8 pairs, where
// a rewrite at every cleanup costs 56 (a read, a clear and an append at
// each firing).
func TestIntervalCleanupRecordCalls(t *testing.T) {
	rules := match.Rules{Bounds: match.Between(-5*time.Second, 5*time.Second), Type: match.Inner, Emit: match.Immediate}
	for _, tc := range []struct {
		append bool
		want   int
	}{{false, 56}, {true, 41}} {
		h := newHarness(t, rules, 2500*time.Millisecond, 0)
		h.j.AppendCleanup = tc.append
		// Eight pairs to reach the steady cycle, then the eight measured.
		var counted int
		for p := range 16 {
			for _, e := range []struct {
				side match.Side
				ms   int64
			}{{match.Left, int64(p) * 8000}, {match.Right, int64(p)*8000 + 2000}} {
				h.fireUpTo(e.ms - 1)
				if p == 8 && e.side == match.Left {
					counted, _ = h.calls()
				}
				h.startBundle()
				h.element(e.side, e.ms, "a", fmt.Sprintf("%v%d", raw.SideName[e.side], p))
				h.finishBundle()
			}
		}
		h.fireUpTo(15*8000 + 7999)
		calls, _ := h.calls()
		if got := calls - counted; got != tc.want {
			t.Errorf("records %v: %d state calls for 8 pairs, want %d", tc.append, got, tc.want)
		}
		if got := h.counter("pairs_out"); got != 16 {
			t.Errorf("records %v: %d pairs, want 16", tc.append, got)
		}
	}
}

// TestIntervalStaleCleanupRecord: a record timer's firing delivered again
// after the key's timer has moved (issue 9.4) appends a record that the
// next reader finds was for no timer of the state: it removes nothing (l2
// stays and pairs with r1, which is not late), the key's timers are set
// again, and it is counted in stale_firings when the bag is rewritten.
func TestIntervalStaleCleanupRecord(t *testing.T) {
	h := newHarness(t, match.Rules{Bounds: match.Between(-5*time.Second, 5*time.Second), Type: match.Inner, Emit: match.Immediate}, time.Millisecond, 0)
	h.startBundle()
	h.element(match.Left, 10_000, "a", "l1")
	h.finishBundle()
	first := h.timerTagged("a", recordTag)
	if got := first.FireTimestamp.Milliseconds(); got != 15_001 {
		t.Fatalf("the record timer fires at %d, want 15001 (l1's expiry)", got)
	}
	if got, want := h.timerTagged("a", "").FireTimestamp.Milliseconds(), 15_001+defaultHorizon.Milliseconds(); got != want {
		t.Fatalf("the forgetting timer beside it fires at %d, want %d (the progress horizon later)", got, want)
	}

	st := h.states["a"]
	calls, reads := st.Calls, st.Reads
	h.startBundle()
	h.fire("a", first) // l1 is removed by a record
	h.finishBundle()
	if st.Calls-calls != 1 || st.Reads != reads {
		t.Fatalf("the record firing made %d state calls and %d reads, want 1 and 0", st.Calls-calls, st.Reads-reads)
	}

	h.startBundle()
	h.element(match.Left, 20_000, "a", "l2")
	h.finishBundle()
	if got := h.timerTagged("a", recordTag).FireTimestamp.Milliseconds(); got != 25_001 {
		t.Fatalf("after l2 the record timer fires at %d, want 25001", got)
	}

	h.startBundle()
	h.fire("a", first) // stale: the record timer has moved to 25.001 s
	h.finishBundle()
	if got := h.counter("stale_firings"); got != 0 {
		t.Errorf("stale_firings = %d before the stale record is read, want 0", got)
	}

	h.startBundle()
	h.element(match.Right, 24_000, "a", "r1")
	h.finishBundle()
	if diff := gocmp.Diff([]string{"pair a l2@20000 r1@24000"}, h.out); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if len(h.late) != 0 {
		t.Errorf("late elements %v, want none", h.late)
	}
	if got := h.counter("stale_firings"); got != 1 {
		t.Errorf("stale_firings = %d after the bag was rewritten, want 1", got)
	}
	// r1 expires after l2's cleanup, so the key's timer is a plain one
	// again, at l2's expiry.
	if got := h.only("a"); got.Tag != "" || got.FireTimestamp.Milliseconds() != 25_001 {
		t.Errorf("after r1 the key's timer is %q at %d, want \"\" at 25001", got.Tag, got.FireTimestamp.Milliseconds())
	}
	h.fireUpTo(1 << 62)
	for name, want := range map[string]int64{"left_matched": 1, "right_matched": 1, "left_expired": 1, "buffered": 0, "keys_with_state": 0, "stale_firings": 1} {
		if got := h.counter(name); got != want {
			t.Errorf("%s = %d at the end, want %d", name, got, want)
		}
	}
}

// timerTagged returns the key's timer set under tag.
func (h *harness) timerTagged(key, tag string) timers.TimerMap {
	h.t.Helper()
	_, tp := h.stores(key)
	t, ok := tp[tag]
	if !ok {
		tags := slices.Sorted(func(yield func(string) bool) {
			for tag := range tp {
				if !yield(tag) {
					return
				}
			}
		})
		h.t.Fatalf("key %s has no timer tagged %q (tags: %s)", key, tag, strings.Join(tags, ", "))
	}
	return t
}

// TestIntervalForgetsWithData: under ProgressHorizon(0) the cleanup firing
// that removes a key's last element also clears its state, in that firing
// (a read and a clear), and leaves no timer; under the default horizon
// the firing is a record timer's (an append), and a forgetting timer
// stays set for the horizon. An element that then arrives behind the
// key's former progress is late under the default horizon, and joined as
// new, with no partner left, under ProgressHorizon(0).
func TestIntervalForgetsWithData(t *testing.T) {
	rules := match.Rules{Bounds: match.Between(-5*time.Second, 5*time.Second), Type: match.Inner, Emit: match.Immediate}
	for _, tc := range []struct {
		name    string
		horizon int64
		fired   string   // the first firing's tag
		calls   int      // its state calls
		left    []string // the timers left set after it, tag@time
		late    []string
	}{
		{"ProgressHorizon(0)", 0, "", 2, nil, nil},
		{"default", defaultHorizon.Milliseconds(), recordTag, 1, []string{"@3615001"}, []string{"late right a r2@11000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, rules, time.Millisecond, 0)
			h.j.Horizon = tc.horizon
			h.startBundle()
			h.element(match.Left, 10_000, "a", "l1")
			h.element(match.Right, 10_000, "a", "r1")
			h.finishBundle()
			// Both expire at 15.001 s: the key's first firing removes both.
			st, tp := h.stores("a")
			first, ok := tp[tc.fired]
			if !ok || first.FireTimestamp.Milliseconds() != 15_001 {
				t.Fatalf("timers %v, want one tagged %q at 15001", tp, tc.fired)
			}
			calls := st.Calls
			h.startBundle()
			h.fire("a", first)
			h.finishBundle()
			if got := st.Calls - calls; got != tc.calls {
				t.Errorf("the firing made %d state calls, want %d", got, tc.calls)
			}
			var left []string
			for tag, x := range tp {
				left = append(left, fmt.Sprintf("%s@%d", tag, x.FireTimestamp.Milliseconds()))
			}
			if diff := gocmp.Diff(tc.left, left); diff != "" {
				t.Errorf("timers set after the firing (-want +got):\n%s", diff)
			}
			if tc.left == nil && len(st.Bags) != 0 {
				t.Errorf("the key's state holds %d bags after the firing, want none", len(st.Bags))
			}

			h.startBundle()
			h.element(match.Right, 11_000, "a", "r2") // its partners expired by 11.001 s
			h.finishBundle()
			if diff := gocmp.Diff(tc.late, h.late); diff != "" {
				t.Errorf("late elements (-want +got):\n%s", diff)
			}
			if diff := gocmp.Diff([]string{"pair a l1@10000 r1@10000"}, h.out); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}
