package join_test

// This file runs the as-of join's stateful DoFn in memory under work
// items through the Go SDK's own timer handling (model_sdk_test.go), as
// the runner-model harness runs the interval join's (WorkItems), and
// checks every run against the as-of oracle of asof_test.go.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

// asofWorkItems plays script through one as-of DoFn instance in work
// items, as Dataflow builds them, choosing the cuts from rng: at each
// watermark step, each key's waiting elements (in one work item or
// several, in arrival order) and then the timers that were due when its
// last work item began; at the end, the watermark at infinity, every
// key's work items until no timer is left.
//
// A timer that a work item sets behind the watermark fires only with the
// key's next work item, after that item's elements, so an element can
// arrive before a timer the script's schedule (asofCase) took to have
// fired. Lateness is a fact about the key's own timers (package asof's keyState.late): an
// element is late iff it is before the key's cut, the latest firing time
// of a timer that has fired for the key. The cut is kept here from the
// firings the SDK's handling made, not read from the DoFn's state: a timer
// fired inline because the bundle cleared it (event time 0) is no evidence
// of the watermark and does not move it. late gives, by value, the
// elements behind their key's cut when they arrived, which the oracle
// then takes as the late ones.
//
// It returns the records (net of retractions: each with its count if not
// 1), the late elements, the late set by value, what the SDK's timer
// handling did, and problems found on the way: a record behind the output
// watermark the committed timers' holds make.
func asofWorkItems(sp asofSpec, script []event, rng *rand.Rand) (records, late []string, behindCut map[string]bool, tally [3]int, problems []string) {
	proc := join.NewModelProcess("asof")
	in, err := proc.NewAsOfInstance(sp.options()...)
	if err != nil {
		return nil, nil, nil, tally, []string{err.Error()}
	}
	state := map[string]*join.ModelKeyState{}
	cut := map[string]int64{} // by key: the latest firing time of a timer fired
	behindCut = map[string]bool{}
	wm := int64(mtime.MinTimestamp.Milliseconds())
	var pending []event
	net := map[string]int{}
	outWM := func() int64 {
		w := wm
		for _, ks := range state {
			for _, t := range ks.Timers() {
				w = min(w, t.Hold)
			}
		}
		return w
	}
	trace := func(format string, args ...any) {
		if os.Getenv("BEAMJOIN_MODEL_TRACE") != "" {
			fmt.Fprintf(os.Stderr, format+"\n", args...)
		}
	}
	keep := func(recs []join.Result[string, string, string]) {
		out := outWM()
		for _, r := range recs {
			k, n := netOf(r)
			trace("  record %s (%+d), output watermark %d", k, n, out)
			net[k] += n
			if t := r.Time.UnixMilli(); t < out {
				problems = append(problems, fmt.Sprintf("%s is behind the output watermark %d", k, out))
			}
		}
	}
	// workItem runs one work item of key: its elements, then its timers
	// due by the watermark when it began.
	workItem := func(key string, elems []event) {
		ks := state[key]
		if ks == nil {
			ks = join.NewModelKeyState()
		}
		ks = ks.Clone()
		var due []join.ModelTimer
		for _, t := range ks.Timers() {
			if t.Fire <= wm {
				due = append(due, t)
			}
		}
		ks.BeginSDKBundle()
		in.StartBundle()
		trace("work item %s at watermark %d: %v, due %+v", key, wm, elems, due)
		for _, e := range elems {
			if c, ok := cut[key]; ok && e.time < c {
				behindCut[e.val] = true
			}
			recs, lateOut, _, err := in.Element(ks, key, e.side, e.time, e.val)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%v: %v", e, err))
				return
			}
			keep(recs)
			for _, x := range lateOut {
				late = append(late, formatLate(x))
			}
		}
		fired, hasFired := cut[key]
		for _, t := range due {
			recs, firings, err := in.FireSDK(ks, key, t)
			if err != nil {
				problems = append(problems, fmt.Sprintf("firing %+v of %s: %v", t, key, err))
				return
			}
			ran := false
			for _, f := range firings {
				trace("  fired %+v inline %v", f.Timer, f.Inline)
				if !f.Cleared() {
					if !hasFired || f.Timer.Fire > fired {
						fired, hasFired = f.Timer.Fire, true
					}
				}
				if f.Inline {
					tally[0]++
					if f.Cleared() {
						tally[1]++
					}
				} else {
					ran = true
				}
			}
			if !ran {
				tally[2]++
			}
			keep(recs)
		}
		if hasFired {
			cut[key] = fired
		}
		in.FinishBundle()
		ks.EndSDKBundle()
		trace("  timers now %+v", ks.Timers())
		state[key] = ks
	}
	// step runs each key's waiting elements in elems, in one work item or
	// more, each with its due timers, and a timers-only work item for each
	// other key with a due timer, keys in a random order.
	step := func(elems []event) {
		byKey := map[string][]event{}
		var keys []string
		for _, e := range elems {
			if byKey[e.key] == nil {
				keys = append(keys, e.key)
			}
			byKey[e.key] = append(byKey[e.key], e)
		}
		for k, ks := range state {
			if _, ok := byKey[k]; !ok && len(ks.Timers()) > 0 && ks.Timers()[0].Fire <= wm {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		for _, k := range keys {
			es := byKey[k]
			for len(es) > 1 && rng.IntN(3) == 0 {
				n := 1 + rng.IntN(len(es)-1)
				workItem(k, es[:n])
				es = es[n:]
			}
			workItem(k, es)
		}
	}
	for _, e := range script {
		if !e.watermark {
			pending = append(pending, e)
			continue
		}
		if e.time <= wm {
			continue
		}
		// The watermark cannot pass an element still waiting: those the
		// step would pass go first, in work items at the old watermark;
		// the others may wait and come with the timers the step makes
		// due.
		var now, later []event
		for _, x := range pending {
			if x.time < e.time || rng.IntN(2) == 0 {
				now = append(now, x)
			} else {
				later = append(later, x)
			}
		}
		step(now)
		wm = e.time
		step(later)
		pending = nil
	}
	step(pending)
	wm = mtime.MaxTimestamp.Milliseconds()
	for range 100 {
		step(nil)
		due := false
		for _, ks := range state {
			due = due || len(ks.Timers()) > 0
		}
		if !due {
			break
		}
	}
	for k, ks := range state {
		if len(ks.Timers()) > 0 {
			problems = append(problems, fmt.Sprintf("key %s keeps timers at the end: %v", k, ks.Timers()))
		}
	}
	for k, n := range net {
		switch {
		case n == 1:
			records = append(records, k)
		case n != 0:
			records = append(records, fmt.Sprintf("%s x%d", k, n))
		}
	}
	slices.Sort(records)
	slices.Sort(late)
	return records, late, behindCut, tally, problems
}

// netOf is a record and its count net of retractions: +1, or -1 for a
// retraction of the record it withdraws.
func netOf(r join.Result[string, string, string]) (string, int) {
	if r.Kind == join.KindRetract {
		r.Kind = join.KindUnmatched
		if r.Right != nil {
			r.Kind = join.KindPair
		}
		return formatResult(r), -1
	}
	return formatResult(r), 1
}

// TestAsOfWorkItems runs the as-of oracle's random cases (asofCase) under
// every join type, emission mode, max age and strictness through work
// items and the Go SDK's timer handling: the records, net of retractions,
// and the late elements must be exactly the oracle's, with an element late
// iff it arrived behind its key's cut (asofWorkItems), and no record may
// be behind the output watermark. The runs must have fired timers inline,
// cleared ones among them, skipped runner timers, and had elements the
// script's schedule takes as late arrive before their key's timer fired
// (or the reverse), or they show nothing about the SDK's handling.
func TestAsOfWorkItems(t *testing.T) {
	var tally [3]int
	runs, moved := 0, 0
	seeds := uint64(200)
	if testing.Short() {
		seeds = 50
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		script, lateIdx := asofCase(seed)
		for _, outer := range []bool{false, true} {
			for _, retract := range []bool{false, true} {
				for _, mod := range []string{"plain", "max_age", "strict"} {
					sp := asofSpec{Outer: outer, Retract: retract, Strict: mod == "strict", MaxAge: -1}
					if mod == "max_age" {
						sp.MaxAge = 40
					}
					rng := rand.New(rand.NewPCG(seed, uint64(runs)))
					got, gotLate, behindCut, tl, problems := asofWorkItems(sp, script, rng)
					runs++
					for i := range tally {
						tally[i] += tl[i]
					}
					late := map[int]bool{}
					for i, e := range script {
						if !e.watermark && behindCut[e.val] {
							late[i] = true
						}
						if !e.watermark && late[i] != lateIdx[i] {
							moved++
						}
					}
					want, wantLate := asofOracle(sp, script, late)
					name := fmt.Sprintf("seed %d, %v", seed, sp)
					if len(problems) > 0 {
						t.Errorf("%s:\n%s", name, strings.Join(problems, "\n"))
					}
					if d := cmp.Diff(want, got); d != "" {
						t.Errorf("%s: records (-oracle +work items):\n%s", name, d)
					}
					if d := cmp.Diff(wantLate, gotLate); d != "" {
						t.Errorf("%s: late (-oracle +work items):\n%s", name, d)
					}
				}
			}
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d runs: %d timers fired inline (%d of them cleared, at event time 0), %d runner timers skipped, %d verdicts other than the script's schedule gives", runs, tally[0], tally[1], tally[2], moved)
	if tally[0] == 0 || tally[1] == 0 || tally[2] == 0 || moved == 0 {
		t.Errorf("the runs never exercised one of the SDK's timer behaviours: %v, %d verdicts moved", tally, moved)
	}
}
