package streamjoiner

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

// checkEquations checks the equations of Stats on one snapshot.
func checkEquations(t *testing.T, typ join.Type, st Stats) {
	t.Helper()
	for _, side := range []struct {
		name  string
		s     SideStats
		outer bool
	}{
		{"left", st.Left, typ == join.LeftOuter || typ == join.FullOuter},
		{"right", st.Right, typ == join.RightOuter || typ == join.FullOuter},
	} {
		s := side.s
		if where := s.Buffered + s.Evicted + s.Dropped + s.Cleared; s.In != where {
			t.Errorf("%s: In %d != Buffered + Evicted + Dropped + Cleared = %d (%+v)", side.name, s.In, where, s)
		}
		switch {
		case side.outer && s.In != s.Matched+s.Unmatched-s.MatchedAfterUnmatched:
			t.Errorf("%s (outer): In %d != Matched + Unmatched - MatchedAfterUnmatched = %d (%+v)",
				side.name, s.In, s.Matched+s.Unmatched-s.MatchedAfterUnmatched, s)
		case !side.outer && (s.Unmatched != 0 || s.MatchedAfterUnmatched != 0 || s.Matched > s.In):
			t.Errorf("%s (inner): Unmatched %d and MatchedAfterUnmatched %d, want 0; Matched %d <= In %d",
				side.name, s.Unmatched, s.MatchedAfterUnmatched, s.Matched, s.In)
		}
	}
}

// TestStats follows elements of every kind: matched after being emitted
// unmatched, evicted, dropped, cleared, rejected, and an inner side's
// elements that never matched.
func TestStats(t *testing.T) {
	cfg := config(join.LeftOuter, -5*time.Second, 5*time.Second)
	cfg.MaxStateSize = 3
	cfg.StateRetention = 20 * time.Second
	j, err := newJoiner(cfg, name)
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		do   func() ([]string, error)
		want []string
	}
	steps := []step{
		{func() ([]string, error) { return j.ProcessLeft(ev{"a", 10 * sec, "l1"}) }, []string{"l1+_"}},
		{func() ([]string, error) { return j.ProcessRight(ev{"a", 12 * sec, "r1"}) }, []string{"l1+r1"}},
		{func() ([]string, error) { return j.ProcessLeft(ev{"b", 11 * sec, "l2"}) }, []string{"l2+_"}},
		// Four buffered, cap 3: l1, the oldest, is evicted.
		{func() ([]string, error) { return j.ProcessRight(ev{"c", 13 * sec, "r2"}) }, nil},
		// Four buffered again: l2 is evicted; then, 40 s - 20 s retention,
		// r1 and r2 are dropped.
		{func() ([]string, error) { return j.ProcessLeft(ev{"a", 40 * sec, "l3"}) }, []string{"l3+_"}},
		{func() ([]string, error) { j.Clear(); return nil, nil }, nil}, // clears l3
		{func() ([]string, error) { return j.ProcessRight(ev{"a", 41 * sec, "r3"}) }, nil},
		{func() ([]string, error) { return j.ProcessRight(ev{"", 42 * sec, "no key"}) }, nil},
	}
	for i, s := range steps {
		out, err := s.do()
		if err != nil && !errors.Is(err, ErrEmptyKey) {
			t.Fatalf("step %d: %v", i, err)
		}
		if diff := cmp.Diff(s.want, out); diff != "" {
			t.Errorf("step %d records (-want +got):\n%s", i, diff)
		}
		checkEquations(t, cfg.Type, j.Stats())
	}
	want := Stats{
		Left:  SideStats{In: 3, Matched: 1, Unmatched: 3, MatchedAfterUnmatched: 1, Evicted: 2, Cleared: 1},
		Right: SideStats{In: 3, Rejected: 1, Matched: 1, Dropped: 2, Buffered: 1},
		Pairs: 1,
	}
	if diff := cmp.Diff(want, j.Stats()); diff != "" {
		t.Errorf("Stats() (-want +got):\n%s", diff)
	}
}

// TestStatsConcurrent runs many callers against one joiner (the race
// detector runs it in `make test`) while another reads Stats: every
// snapshot satisfies the equations, and the final counts are those of the
// records and errors the callers received.
func TestStatsConcurrent(t *testing.T) {
	const goroutines, perGoroutine = 8, 400
	cfg := config(join.FullOuter, -3*time.Millisecond, 3*time.Millisecond)
	cfg.MaxStateSize = 40
	cfg.StateRetention = 50 * time.Millisecond
	j, err := newJoiner(cfg, func(l, r *ev) (string, error) {
		if l != nil && l.Name == "bad" || r != nil && r.Name == "bad" {
			return "", errors.New("bad")
		}
		return name(l, r)
	})
	if err != nil {
		t.Fatal(err)
	}
	var (
		calls, rejected [2]atomic.Int64
		pairs           atomic.Int64
		unmatched       [2]atomic.Int64
		wg              sync.WaitGroup
		done            = make(chan struct{})
	)
	snapshots := 0
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-done:
				return
			default:
			}
			checkEquations(t, cfg.Type, j.Stats())
			snapshots++
		}
	}()
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				n := g*perGoroutine + i
				e := ev{Key: fmt.Sprint(n % 5), At: int64(n / 4), Name: fmt.Sprint(n)}
				switch {
				case n%17 == 0:
					e.Name = "bad"
				case n%23 == 0:
					e.Key = ""
				}
				side := n % 2
				var out []string
				var err error
				if side == 0 {
					out, err = j.ProcessLeft(e)
				} else {
					out, err = j.ProcessRight(e)
				}
				calls[side].Add(1)
				if err != nil {
					rejected[side].Add(1)
				}
				for _, o := range out {
					switch {
					case strings.HasSuffix(o, "+_"):
						unmatched[0].Add(1)
					case strings.HasPrefix(o, "_+"):
						unmatched[1].Add(1)
					default:
						pairs.Add(1)
					}
				}
				if n%101 == 0 {
					j.Clear()
				}
			}
		})
	}
	wg.Wait()
	close(done)
	<-watched
	st := j.Stats()
	checkEquations(t, cfg.Type, st)
	type totals struct{ Calls, Rejected, Unmatched [2]int64 }
	var want totals
	for s := range 2 {
		want.Calls[s], want.Rejected[s], want.Unmatched[s] = calls[s].Load(), rejected[s].Load(), unmatched[s].Load()
	}
	got := totals{
		Calls:     [2]int64{st.Left.In + st.Left.Rejected, st.Right.In + st.Right.Rejected},
		Rejected:  [2]int64{st.Left.Rejected, st.Right.Rejected},
		Unmatched: [2]int64{st.Left.Unmatched, st.Right.Unmatched},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Stats against what the callers saw (-callers +Stats):\n%s", diff)
	}
	if st.Pairs != pairs.Load() || st.Pairs == 0 {
		t.Errorf("Stats().Pairs = %d, callers got %d pairs (want equal, > 0)", st.Pairs, pairs.Load())
	}
	if st.Left.Evicted+st.Right.Evicted == 0 || st.Left.Cleared+st.Right.Cleared == 0 {
		t.Errorf("the test did not evict and clear: %+v", st)
	}
	// Whether an element is dropped by retention depends on how the callers
	// interleave (an element must arrive behind another caller's newer
	// one), which the scheduler decides; TestStats covers drops exactly.
	if st.Left.Dropped+st.Right.Dropped == 0 {
		t.Logf("no element was dropped by retention in this interleaving")
	}
	t.Logf("%d snapshots checked; %+v", snapshots, st)
}
