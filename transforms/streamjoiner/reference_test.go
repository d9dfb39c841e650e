package streamjoiner

// A nested-loop reference StreamJoiner: every arrival scans everything
// buffered. It is the oracle of the randomized test below and the baseline
// of the benchmarks; it shares no code with the joiner, not even the match
// rule.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

type refElem struct {
	left bool
	ev
	matched bool
}

type reference struct {
	before, after int64 // bounds in milliseconds
	ty            join.Type
	max           int
	retention     int64
	buf           []refElem // in arrival order
	maxTime       int64
	seen          bool
	stats         Stats // counted the reference's own way; Buffered is not kept
}

// side returns the counts of the left or the right side.
func (r *reference) side(left bool) *SideStats {
	if left {
		return &r.stats.Left
	}
	return &r.stats.Right
}

func newReference(cfg joinerConfig) *reference {
	s, err := newSettings(evKey, evKey, cfg.opts())
	if err != nil {
		panic(err)
	}
	lo, hi := s.bounds.Millis()
	return &reference{
		before: -lo, after: hi,
		ty: s.typ, max: s.maxStateSize, retention: s.retention.Milliseconds(),
	}
}

func (r *reference) outer(left bool) bool {
	return r.ty == join.FullOuter || (left && r.ty == join.LeftOuter) || (!left && r.ty == join.RightOuter)
}

func (r *reference) process(e refElem) []string {
	var partners []refElem
	for i, b := range r.buf {
		if b.left == e.left || b.Key != e.Key {
			continue
		}
		l, rt := e.At, b.At
		if !e.left {
			l, rt = b.At, e.At
		}
		if l-r.before <= rt && rt <= l+r.after {
			partners = append(partners, b)
			if !b.matched {
				r.side(b.left).Matched++
				if r.outer(b.left) {
					r.side(b.left).MatchedAfterUnmatched++
				}
			}
			r.buf[i].matched = true
		}
	}
	r.side(e.left).In++
	r.stats.Pairs += int64(len(partners))
	e.matched = len(partners) > 0
	if e.matched {
		r.side(e.left).Matched++
	}
	slices.SortStableFunc(partners, func(a, b refElem) int { return int(a.At - b.At) })
	var out []string
	for _, p := range partners {
		if e.left {
			out = append(out, e.Name+"+"+p.Name)
		} else {
			out = append(out, p.Name+"+"+e.Name)
		}
	}
	if len(partners) == 0 && r.outer(e.left) {
		r.side(e.left).Unmatched++
		if e.left {
			out = append(out, e.Name+"+_")
		} else {
			out = append(out, "_+"+e.Name)
		}
	}
	r.buf = append(r.buf, e)
	if !r.seen || e.At > r.maxTime {
		r.maxTime, r.seen = e.At, true
	}
	for len(r.buf) > r.max {
		oldest := 0
		for i, b := range r.buf {
			if o := r.buf[oldest]; b.At < o.At || (b.At == o.At && b.left && !o.left) {
				oldest = i
			}
		}
		r.side(r.buf[oldest].left).Evicted++
		r.buf = slices.Delete(r.buf, oldest, oldest+1)
	}
	cutoff := r.maxTime - r.retention
	r.buf = slices.DeleteFunc(r.buf, func(b refElem) bool {
		if b.At < cutoff {
			r.side(b.left).Dropped++
			return true
		}
		return false
	})
	return out
}

func (r *reference) sizes() [2]int {
	var n [2]int
	for _, b := range r.buf {
		if b.left {
			n[0]++
		} else {
			n[1]++
		}
	}
	return n
}

// TestMatchesNestedLoopReference feeds random streams, with many keys,
// out-of-order timestamps, a small size cap and a short retention, to the
// joiner and to the reference, and diffs the whole transcripts: records,
// buffer sizes and Stats. Timestamps
// are distinct, so that which of two equally old elements of different keys
// is evicted first (the joiner: the key seen first) does not matter.
func TestMatchesNestedLoopReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pairs := 0
	for trial := range 150 {
		before := time.Duration(rng.IntN(40)-10) * time.Millisecond
		after := time.Duration(rng.IntN(40)-10) * time.Millisecond
		if before+after < 0 {
			before, after = after, before
			before, after = -before, -after
		}
		cfg := config(join.Type(rng.IntN(4)), -before, after)
		cfg.MaxStateSize = 1 + rng.IntN(30)
		cfg.StateRetention = boundsSpan(match.Between(-before, after)) + time.Duration(rng.IntN(100))*time.Millisecond
		if cfg.StateRetention == 0 {
			cfg.StateRetention = time.Millisecond
		}
		j, err := newJoiner(cfg, name)
		if err != nil {
			t.Fatalf("trial %d: New(%v) = %v", trial, cfg.opts(), err)
		}
		ref := newReference(cfg)
		keys := 1 + rng.IntN(6)
		n := 150
		times := rng.Perm(4 * n)[:n] // distinct
		// Mostly ascending, like a stream: sort, then disorder a little.
		slices.Sort(times)
		for i := range times {
			if k := i + rng.IntN(8); k < len(times) && rng.IntN(3) == 0 {
				times[i], times[k] = times[k], times[i]
			}
		}
		type result struct {
			Out   []string
			Size  [2]int
			Stats Stats
		}
		var got, want []result
		for i, ts := range times {
			e := refElem{left: rng.IntN(2) == 0, ev: ev{fmt.Sprint(rng.IntN(keys)), int64(ts), fmt.Sprint(i)}}
			var out []string
			if e.left {
				out, err = j.ProcessLeft(e.ev)
			} else {
				out, err = j.ProcessRight(e.ev)
			}
			if err != nil {
				t.Fatal(err)
			}
			st := j.Stats()
			checkEquations(t, cfg.Type, st)
			st.Left.Buffered, st.Right.Buffered = 0, 0 // the sizes are compared
			got = append(got, result{out, [2]int{j.LeftBufferSize(), j.RightBufferSize()}, st})
			for _, o := range out {
				if !strings.Contains(o, "_") {
					pairs++
				}
			}
			want = append(want, result{ref.process(e), ref.sizes(), ref.stats})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("trial %d (%v, %v, max %d, retention %v): transcript (-reference +joiner):\n%s",
				trial, cfg.Type, [2]time.Duration{cfg.Lower, cfg.Upper}, cfg.MaxStateSize, cfg.StateRetention, diff)
		}
	}
	if pairs < 5000 {
		t.Errorf("only %d pairs in all trials: the test joins too little to mean much", pairs)
	}
	t.Logf("%d pairs", pairs)
}
