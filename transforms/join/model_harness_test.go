package join_test

// This file holds the runner-model harness: it runs the interval join's
// real stateful DoFn in memory (model_backend_test.go) under schedules
// that the Beam model allows a runner to choose, and checks every run
// against the differential test's oracle (differential_oracle_test.go):
//   - bundles of any size mixing keys, several open at once in a process
//     on different DoFn instances, their steps interleaved;
//   - a key's elements and timer firings in any permitted order: a timer
//     fires only once the input watermark has passed it, and before each
//     element the key's timers fire up to a cut the harness picks between
//     the key's last cut and the input watermark, so an element behind the
//     watermark comes before or after the firings it is behind;
//   - elements that wait past later watermark advances when they may (an
//     element the watermark has not passed at its advance must be
//     processed before it);
//   - a bundle that fails after any step and is retried, its state writes
//     and outputs discarded, on an instance of the same process;
//   - keys that move between worker processes, each with fresh process
//     memory, and fresh DoFn instances;
//   - the output watermark computed from the committed timers' holds, and
//     every record checked against it; with windowed inputs, every record
//     of an element within the join's allowed lateness checked against
//     what a downstream windowed GroupByKey would drop;
//   - the bytes the bundle caches of one process hold together.
// Half the runs (odd schedule seeds, cases without a size cap) use the
// split layout (SplitKeys): its first stage's pieces wait in a queue per
// bucket, in the order the first stage sent them, until a bundle of the
// second stage takes them (any number of them, any time); a bucket's
// input watermark is the first stage's output watermark held back by the
// pieces waiting for it, as on runners that let no watermark pass data
// pending at a stage (see docs/design/interval.md for what a runner that
// did could do), and a key's first stage forgets its progress only once
// its buckets have caught up (forgetWaits).
// A run is a function of its case seed and schedule seed, and a failure
// names both.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/join"
)

func init() { register.Function1x2(modelKeyed) }

// modelKeyed keys a string by itself, to build a KV input for
// construction only.
func modelKeyed(v string) (string, string) { return v, v }

// modelSchedule is how a runner may run the join: the harness draws each
// choice from it.
type modelSchedule struct {
	Processes  int     // worker processes
	Concurrent int     // bundles open at once in a process
	BundleMax  int     // steps per bundle, at most
	FailRate   float64 // chance that a bundle fails once and is retried
	MoveRate   float64 // chance, per key and round, that it moves to another process
	DeferRate  float64 // chance that an element that may wait does
	CacheBytes int64   // the join's BundleCacheBytes; 0: the default
	WindowSize int64   // fixed windows of both inputs, ms; 0: the global window
	Horizon    int64   // the join's ProgressHorizon, ms; 0: the default (an hour, longer than any case); horizonZero: ProgressHorizon(0)
	UniqueLeft bool    // the join takes UniqueLeft, in the bag layout (the case must have one left element per key)
	// Monotone: the split layout's watermarks never go back, as every
	// runner's (Prism's, Flink's, Dataflow's): a first-stage hold set
	// behind its output watermark, or a piece sent behind a bucket's input
	// watermark, holds nothing. Without it, they hold (the assumption
	// docs/design/interval.md states the split layout's exactness under).
	Monotone bool
	// SourceLate: an element further behind the input watermark than
	// join.LateBehind on arrival never reaches the join, as a source that
	// judges lateness (jsonl.Source.JudgeLate) sends it to its own late
	// output.
	SourceLate bool
	// WorkItems: each bundle is one runner key's work item, as Dataflow
	// builds them: its elements (or pieces), then the timers that were
	// due when the bundle began, driven through the Go SDK's own timer
	// handling (model_sdk_test.go): timer changes written at the end of
	// the bundle, changed timers fired inline, cleared ones with event
	// time 0, the runner's skipped when their tag changed.
	WorkItems bool
}

// A step of a bundle: an element of a key, a piece of the split layout
// for a bucket, or (both nil) the firing of the runner key's timers that
// its input watermark has passed.
type mStep struct {
	key   string
	elem  *oElem
	piece *join.ModelPiece
}

type mBundle struct {
	proc   int
	inst   *join.ModelInstance
	steps  []mStep
	next   int
	failAt int // fails when next reaches it; -1: never
	work   map[string]*join.ModelKeyState
	keyWM  map[string]int64
	arr    []oArrival
	behind map[string]int64 // values processed behind the input watermark: by how many ms
	got    dGot
	sent   []join.ModelPiece // pieces the split layout's first stage sent
	taken  []join.ModelPiece // pieces its second stage processed
	// Under WorkItems: the runner key's timers due when the bundle began,
	// and the watermark they were due by.
	due   map[string][]join.ModelTimer
	limit map[string]int64
}

type mProc struct {
	p    *join.ModelProcess
	pool []*join.ModelInstance
}

// modelRun is one run of a case under a schedule.
type modelRun struct {
	c        dCase
	sc       modelSchedule
	seed     uint64
	rng      *rand.Rand
	opts     []join.Option
	procs    []*mProc
	nextProc int
	place    map[string]int
	state    map[string]*join.ModelKeyState
	keyWM    map[string]int64
	inputWM  int64
	arr      []oArrival
	behind   map[string]int64
	got      dGot
	problems []string
	lateness int64 // the join's allowed lateness, ms
	outLate  int64 // the allowed lateness the join's Records carry, ms
	budget   int64 // the cache bound the process's caches must keep together
	peak     int64 // the most a process's caches held together
	// The split layout's, and the hot keys' of the default layout (hot):
	// the pieces waiting for their buckets, in the order sent, and the
	// elements by value.
	split     bool
	hot       bool
	hotAfter  int
	queue     map[string][]join.ModelPiece
	byVal     map[string]oElem
	bucketsOf map[string]map[string]bool // a key's buckets' runner keys
	// unbuffered counts the right elements on time whose processing
	// wrote no state (UniqueLeft's), retried ones included.
	unbuffered int
	// Under Monotone: the first stage's output watermark and each
	// bucket's input watermark so far.
	firstOut int64
	bucketIn map[string]int64
	// Under SourceLate: how far behind the watermark an element of each
	// side may arrive (join.LateBehind), ms, and how many did not.
	lateBehind [2]int64
	sourceLate int
	// Under WorkItems: what the SDK's timer handling did (sdkTally).
	sdk sdkTally
	// cutOvers counts the keys that went hot and those that were ordinary
	// keys again, in committed state.
	cutOvers [2]int
}

// sdkTally counts what the Go SDK's timer handling did in work items:
// timers fired inline (set in the bundle, at or before a timer the runner
// sent), those of them cleared (fired with event time 0), and runner
// timers skipped because their tag changed in the bundle.
type sdkTally struct{ inline, clearedInline, skipped, arrivalsBehindCut int }

func (t *sdkTally) add(u sdkTally) {
	t.inline += u.inline
	t.clearedInline += u.clearedInline
	t.skipped += u.skipped
	t.arrivalsBehindCut += u.arrivalsBehindCut
}

const modelInfinity = int64(1) << 62

// runModel runs case c under schedule sc, drawing its choices from seed.
func runModel(c dCase, sc modelSchedule, seed uint64) *modelRun {
	if sc.Horizon != 0 {
		c.Spec.Horizon = sc.Horizon // the oracle forgets as the join does
	}
	r := &modelRun{c: c, sc: sc, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x72756e6e)),
		place: map[string]int{}, state: map[string]*join.ModelKeyState{}, keyWM: map[string]int64{},
		inputWM: noWatermark, behind: map[string]int64{}, lateness: c.Spec.Lateness,
		firstOut: noWatermark, bucketIn: map[string]int64{}}
	r.opts = joinOptions(c.Spec, "bag")
	if sc.UniqueLeft {
		r.opts = append(r.opts, join.UniqueLeft())
		c.Spec.UniqueLeft = true // the oracle buffers what the join does
		r.c = c
	} else if seed%2 == 1 && c.Spec.MaxBuffered == 0 {
		r.opts, r.split = joinOptions(c.Spec, "split"), true
		c.Spec.Grid = true // the oracle cleans up as the split layout does
		r.c = c
	} else if n := hotThresholds[(seed>>1)%uint64(len(hotThresholds))]; n > 0 && c.Spec.MaxBuffered == 0 {
		// Hot-key detection at a threshold a case's keys reach. With
		// cleanup at each expiry both parts of a hot key, its bag and its
		// buckets, clean up when the oracle does.
		c.Spec.CleanupEvery = 1
		r.opts = append(joinOptions(c.Spec, "bag"), join.HotKeyThreshold(n))
		r.c, r.hot, r.hotAfter = c, true, n
	}
	if sc.SourceLate {
		for i, side := range []join.Side{join.Left, join.Right} {
			d, err := join.LateBehind(side, r.opts...)
			if err != nil {
				r.bad("join.LateBehind: %v", err)
				return r
			}
			r.lateBehind[i] = d.Milliseconds()
		}
	}
	r.queue, r.byVal, r.bucketsOf = map[string][]join.ModelPiece{}, map[string]oElem{}, map[string]map[string]bool{}
	for _, st := range c.Script {
		if st.Elem != nil {
			r.byVal[st.Elem.Val] = *st.Elem
		}
	}
	if sc.Horizon != 0 {
		r.opts = append(r.opts, join.ProgressHorizon(time.Duration(max(sc.Horizon, 0))*time.Millisecond))
	}
	r.budget = join.DefaultBundleCacheBytes
	if sc.CacheBytes > 0 {
		r.opts = append(r.opts, join.BundleCacheBytes(sc.CacheBytes))
		r.budget = sc.CacheBytes
	}
	if sc.WindowSize > 0 {
		r.outLate = outputLateness(r.opts, sc.WindowSize)
	}
	for range sc.Processes {
		r.newProcess()
	}
	r.play()
	if len(r.problems) == 0 {
		var st dStats
		r.problems = append(r.problems, checkArrivals(c.Spec, r.arr, r.got, &st)...)
	}
	return r
}

// outputLateness is the allowed lateness that Interval gives its Records
// when both inputs are in fixed windows of size ms: read from the
// pipeline Interval builds.
func outputLateness(opts []join.Option, size int64) int64 {
	_, s := beam.NewPipelineWithRoot()
	in := beam.WindowInto(s, window.NewFixedWindows(time.Duration(size)*time.Millisecond),
		beam.ParDo(s, modelKeyed, beam.Create(s, "a")))
	out := join.Interval[string, string, string](s, in, in, opts...)
	return int64(out.Records.WindowingStrategy().AllowedLateness)
}

func (r *modelRun) newProcess() int {
	r.nextProc++
	r.procs = append(r.procs, &mProc{p: join.NewModelProcess(fmt.Sprintf("process-%d-%d", r.seed, r.nextProc))})
	return len(r.procs) - 1
}

// trace writes a step of the run when BEAMJOIN_MODEL_TRACE is set, to
// see a failing run replayed.
func (r *modelRun) trace(format string, args ...any) {
	if os.Getenv("BEAMJOIN_MODEL_TRACE") != "" {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
	}
}

func (r *modelRun) bad(format string, args ...any) {
	if len(r.problems) < 20 {
		r.problems = append(r.problems, fmt.Sprintf(format, args...))
	}
}

// String names the run for a failure message: how to replay it.
func (r *modelRun) String() string {
	hot := ""
	if r.hot {
		hot = fmt.Sprintf(", HotKeyThreshold(%d)", r.hotAfter)
	}
	return fmt.Sprintf("case %#x, schedule %#x (%+v); options: %s%s", r.c.Seed, r.seed, r.sc, r.c.Spec.describe(), hot)
}

// play runs the case's script: elements join the pending list; before a
// watermark advance every pending element the new watermark passes and
// the current one did not is processed (others may wait); at the end the
// watermark goes to infinity and every timer fires.
func (r *modelRun) play() {
	var pending []oElem
	flush := func(w int64, all bool) {
		var now, later []oElem
		for _, e := range pending {
			due := all || (e.Time >= r.inputWM && e.Time < w)
			if due || r.rng.Float64() >= r.sc.DeferRate {
				now = append(now, e)
			} else {
				later = append(later, e)
			}
		}
		pending = later
		if len(now) > 1 && r.rng.IntN(3) == 0 {
			// The runner need not keep the order of a key's elements.
			i, j := r.rng.IntN(len(now)), r.rng.IntN(len(now))
			if now[i].Key == now[j].Key && (now[i].Time < r.inputWM) == (now[j].Time < r.inputWM) {
				now[i], now[j] = now[j], now[i]
			}
		}
		var steps []mStep
		for i := range now {
			if r.sc.SourceLate && r.inputWM-now[i].Time > r.lateBehind[now[i].Side] {
				r.sourceLate++ // the source's late output, not the join's
				continue
			}
			steps = append(steps, mStep{key: now[i].Key, elem: &now[i]})
		}
		r.run(steps)
		if r.rng.IntN(2) == 0 {
			r.deliver(false)
		}
	}
	for _, st := range r.c.Script {
		if st.Elem != nil {
			pending = append(pending, *st.Elem)
			if r.rng.IntN(3) == 0 {
				flush(r.inputWM, false)
			}
			continue
		}
		if st.Watermark <= r.inputWM {
			continue
		}
		flush(st.Watermark, false)
		r.inputWM = st.Watermark
		r.fireSome(false)
		r.deliver(false)
	}
	flush(modelInfinity, true)
	r.inputWM = modelInfinity
	for range 1000 {
		delivered := r.deliver(true)
		if !r.fireSome(true) && !delivered {
			break
		}
	}
	for k, ks := range r.state {
		if len(r.problems) == 0 && !ks.Empty() {
			r.bad("key %s keeps state or a timer after the watermark reached infinity: %v", k, ks.Timers())
		}
	}
}

// fireSome runs bundles firing the due timers of some keys (all: every
// key with a due timer) and reports whether any timer was due.
func (r *modelRun) fireSome(all bool) bool {
	var steps []mStep
	for _, k := range slices.Sorted(mapKeys(r.state)) {
		if ts := r.state[k].Timers(); len(ts) > 0 && ts[0].Fire <= r.timerLimit(k) && (all || r.rng.IntN(2) == 0) {
			steps = append(steps, mStep{key: k})
		}
	}
	r.run(steps)
	return len(steps) > 0
}

// bucketKey reports whether runner key k is a bucket of the split layout.
func bucketKey(k string) bool { return strings.HasPrefix(k, join.BucketPrefix) }

// inputOf is the input watermark of runner key k's stage: the input's, or
// for a bucket of the split layout, its first stage's output watermark
// held back by every piece still waiting for that bucket.
func (r *modelRun) inputOf(k string) int64 {
	if !bucketKey(k) {
		return r.inputWM
	}
	w := r.firstStageOutput()
	for _, pc := range r.queue[k] {
		w = min(w, pc.At)
	}
	if r.sc.Monotone {
		if p, ok := r.bucketIn[k]; ok {
			w = max(w, p)
		}
		r.bucketIn[k] = w
	}
	return w
}

// timerLimit is how far runner key k's timers may fire now: its stage's
// input watermark (inputOf), but not past a forgetting that waits
// (forgetWaits).
func (r *modelRun) timerLimit(k string) int64 {
	limit := r.inputOf(k)
	if ks := r.state[k]; ks != nil {
		if ts := ks.Timers(); len(ts) > 0 && r.forgetWaits(k, ts[0], nil) {
			limit = min(limit, ts[0].Fire-1)
		}
	}
	return limit
}

// forgetWaits reports whether t, a timer of runner key k, is the split
// layout's first stage forgetting k's progress (the timer that holds
// nothing, tagged "") while k's buckets have not caught up (hold state, or
// pieces wait for them, in the harness's queues or in bundle b). The split layout assumes that a key's buckets
// never lag its first stage by the progress horizon
// (docs/design/interval.md), which the harness's schedules with a horizon
// of a millisecond would break at once; so the forgetting waits.
func (r *modelRun) forgetWaits(k string, t join.ModelTimer, b *mBundle) bool {
	if !r.split && !r.hot || bucketKey(k) || r.split && t.Tag != "" || r.hot && t.Tag != join.HotForgetTag {
		return false
	}
	if b != nil {
		for _, pc := range b.sent {
			if pc.Of == k {
				return true // sent in this bundle, not yet taken
			}
		}
	}
	for bk := range r.bucketsOf[k] {
		ks := r.state[bk]
		if b != nil && b.work[bk] != nil {
			ks = b.work[bk]
		}
		if len(r.queue[bk]) > 0 || (ks != nil && !ks.Empty()) {
			return true
		}
	}
	return false
}

// firstStageOutput is the split layout's first stage's output watermark:
// the input watermark held back by its committed timers' holds.
func (r *modelRun) firstStageOutput() int64 {
	w := r.inputWM
	for key, ks := range r.state {
		if !bucketKey(key) {
			for _, t := range ks.Timers() {
				w = min(w, t.Hold)
			}
		}
	}
	if r.sc.Monotone {
		w = max(w, r.firstOut)
		r.firstOut = w
	}
	return w
}

// deliver runs bundles of the split layout's second stage over the pieces
// waiting for some buckets (all: every bucket's), each bucket's in the
// order sent, and reports whether any was waiting.
func (r *modelRun) deliver(all bool) bool {
	var steps []mStep
	for _, k := range slices.Sorted(mapKeys(r.queue)) {
		if q := r.queue[k]; len(q) > 0 && (all || r.rng.IntN(2) == 0) {
			n := len(q)
			if !all {
				n = 1 + r.rng.IntN(len(q))
			}
			for i := range n {
				steps = append(steps, mStep{key: k, piece: &q[i]})
			}
		}
	}
	r.run(steps)
	return len(steps) > 0
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// run runs steps in rounds: in each, keys may move between processes,
// each process's keys are split among up to Concurrent bundles on
// distinct instances, the bundles' steps are interleaved, and a bundle may
// fail and be retried. Steps a bundle has no room for go to the next round.
func (r *modelRun) run(steps []mStep) {
	for len(steps) > 0 && len(r.problems) == 0 {
		var bundles []*mBundle
		byProcKey := map[[2]any]*mBundle{}
		var rest []mStep
		decided, overflow := map[string]bool{}, map[string]bool{}
		for _, st := range steps {
			if overflow[st.key] {
				rest = append(rest, st) // the key's steps keep their order
				continue
			}
			if _, ok := r.place[st.key]; !ok || (!decided[st.key] && r.rng.Float64() < r.sc.MoveRate) {
				r.place[st.key] = r.rng.IntN(len(r.procs))
				if r.rng.Float64() < r.sc.MoveRate/2 {
					// A fresh process takes the key (a restarted or
					// added worker).
					r.place[st.key] = r.newProcess()
				}
			}
			decided[st.key] = true
			p := r.place[st.key]
			id := [2]any{p, st.key}
			b := byProcKey[id]
			if b == nil {
				var slot any = r.rng.IntN(max(r.sc.Concurrent, 1))
				if r.sc.WorkItems {
					slot = "work item of " + st.key // a bundle per runner key
				}
				b = byProcKey[[2]any{p, slot}]
				if b == nil {
					b = &mBundle{proc: p}
					bundles = append(bundles, b)
					byProcKey[[2]any{p, slot}] = b
				}
				byProcKey[id] = b
			}
			if len(b.steps) >= max(r.sc.BundleMax, 1) {
				overflow[st.key] = true
				rest = append(rest, st)
				continue
			}
			b.steps = append(b.steps, st)
		}
		r.runBundles(bundles, true)
		steps = rest
	}
}

// runBundles opens bundles on distinct instances of their processes and
// interleaves their steps; a failed bundle is retried once, after.
func (r *modelRun) runBundles(bundles []*mBundle, mayFail bool) {
	used := map[*join.ModelInstance]bool{}
	var open []*mBundle
	for _, b := range bundles {
		if len(b.steps) == 0 {
			continue
		}
		pr := r.procs[b.proc]
		for _, in := range pr.pool {
			if !used[in] && r.rng.IntN(4) != 0 {
				b.inst = in
				break
			}
		}
		if b.inst == nil {
			in, err := pr.p.NewInstance(r.opts...)
			if err != nil {
				r.bad("building a DoFn instance: %v", err)
				return
			}
			pr.pool = append(pr.pool, in)
			b.inst = in
		}
		used[b.inst] = true
		b.failAt = -1
		if mayFail && r.rng.Float64() < r.sc.FailRate {
			b.failAt = r.rng.IntN(len(b.steps) + 1)
		}
		b.work, b.keyWM, b.behind = map[string]*join.ModelKeyState{}, map[string]int64{}, map[string]int64{}
		if r.sc.WorkItems {
			// The timers due now come with the work item, after its
			// elements.
			b.due, b.limit = map[string][]join.ModelTimer{}, map[string]int64{}
			for _, st := range b.steps {
				if _, ok := b.limit[st.key]; ok {
					continue
				}
				b.limit[st.key] = r.timerLimit(st.key)
				if ks := r.state[st.key]; ks != nil {
					for _, t := range ks.Timers() {
						if t.Fire <= b.limit[st.key] {
							b.due[st.key] = append(b.due[st.key], t)
						}
					}
				}
			}
		}
		b.inst.StartBundle()
		open = append(open, b)
	}
	var retry []*mBundle
	for len(open) > 0 && len(r.problems) == 0 {
		i := r.rng.IntN(len(open))
		b := open[i]
		switch {
		case b.next == b.failAt:
			// The bundle fails: the runner discards its state writes and
			// outputs, and the SDK its instance.
			pr := r.procs[b.proc]
			pr.pool = slices.DeleteFunc(pr.pool, func(in *join.ModelInstance) bool { return in == b.inst })
			retry = append(retry, &mBundle{proc: b.proc, steps: b.steps})
			open = slices.Delete(open, i, i+1)
		case b.next == len(b.steps):
			if r.sc.WorkItems {
				r.fireWorkItem(b)
			}
			if err := b.inst.FinishBundle(); err != nil {
				r.bad("finishing a bundle: %v", err)
			}
			if r.sc.WorkItems {
				for _, ks := range b.work {
					ks.EndSDKBundle()
				}
			}
			r.commit(b)
			open = slices.Delete(open, i, i+1)
		default:
			r.step(b, b.steps[b.next])
			b.next++
			r.checkBudget()
		}
	}
	if len(retry) > 0 && len(r.problems) == 0 {
		r.runBundles(retry, false)
	}
}

func (r *modelRun) commit(b *mBundle) {
	for k, ks := range b.work {
		if r.hot && !bucketKey(k) {
			was := r.state[k] != nil && r.state[k].Hot()
			switch is := ks.Hot(); {
			case is && !was:
				r.cutOvers[0]++
			case was && !is:
				r.cutOvers[1]++
			}
		}
		r.state[k] = ks
	}
	for k, w := range b.keyWM {
		r.keyWM[k] = w
	}
	for _, a := range b.arr {
		a.Index = len(r.arr)
		r.arr = append(r.arr, a)
	}
	for _, pc := range b.sent {
		r.queue[pc.Key] = append(r.queue[pc.Key], pc)
		if r.bucketsOf[pc.Of] == nil {
			r.bucketsOf[pc.Of] = map[string]bool{}
		}
		r.bucketsOf[pc.Of][pc.Key] = true
	}
	for _, pc := range b.taken {
		if q := r.queue[pc.Key]; len(q) == 0 || q[0].String() != pc.String() {
			r.bad("bucket %q processed %v out of the order sent", pc.Key, pc)
		} else if r.queue[pc.Key] = q[1:]; len(q) == 1 {
			delete(r.queue, pc.Key)
		}
	}
	for v, d := range b.behind {
		r.behind[v] = max(r.behind[v], d)
	}
	r.got.Results = append(r.got.Results, b.got.Results...)
	r.got.Late = append(r.got.Late, b.got.Late...)
}

// outputWatermark is the join's output watermark now: the input
// watermark, held back by every committed timer's hold and, in the split
// layout, every piece still waiting.
func (r *modelRun) outputWatermark() int64 {
	w := r.inputWM
	for _, ks := range r.state {
		for _, t := range ks.Timers() {
			w = min(w, t.Hold)
		}
	}
	for _, q := range r.queue {
		for _, pc := range q {
			w = min(w, pc.At)
		}
	}
	return w
}

// step runs one step of bundle b.
func (r *modelRun) step(b *mBundle, st mStep) {
	ks := r.work(b, st.key)
	last := r.lastCut(b, st.key)
	if r.sc.WorkItems {
		r.workItemStep(b, st, ks, last)
		return
	}
	// The stage's input watermark, not timerLimit: a forgetting that waits
	// is judged below on the bundle's own timers, which may have replaced
	// the committed ones (timerLimit's), so that every timer of the key's
	// up to the watermark an arrival records has fired before it.
	cut := r.inputOf(st.key)
	if (st.elem != nil || st.piece != nil) && r.rng.IntN(2) == 0 {
		// The key's timers wait for after the element, but a bucket's
		// may not pass the pieces still waiting for it (inputOf), though
		// it has seen a later watermark: the split layout's assumption that
		// no timer due after a piece was sent fires before it.
		cut = min(max(last, noWatermark), cut)
	}
	for range 1000 {
		ts := ks.Timers()
		if len(ts) == 0 || ts[0].Fire > cut {
			break
		}
		if r.forgetWaits(st.key, ts[0], b) {
			cut = min(cut, ts[0].Fire-1)
			break
		}
		r.trace("fire key %q timer %+v", st.key, ts[0])
		recs, err := b.inst.Fire(ks, st.key, ts[0])
		if err != nil {
			r.bad("firing %+v of key %s: %v", ts[0], st.key, err)
			return
		}
		r.checkRecords(b, recs, nil)
	}
	b.keyWM[st.key] = max(last, cut)
	r.trace("step key %q cut %d elem %v piece %v", st.key, cut, st.elem, st.piece)
	if st.piece != nil {
		recs, late, err := b.inst.Piece(ks, *st.piece)
		if err != nil {
			r.bad("processing %v: %v", *st.piece, err)
			return
		}
		b.taken = append(b.taken, *st.piece)
		var arriving *oElem
		for _, rec := range recs {
			for _, v := range []*string{rec.Left, rec.Right} {
				if e, ok := r.byVal[deref(v)]; ok && arriving == nil && v != nil && pieceOf(*st.piece, e) {
					arriving = &e
				}
			}
		}
		r.checkRecords(b, recs, arriving)
		b.got.Late = append(b.got.Late, late...)
		return
	}
	if st.elem == nil {
		return
	}
	e := *st.elem
	side := join.Left
	if e.Side == oRight {
		side = join.Right
	}
	// The oracle fires every timer of the key up to the watermark an
	// arrival records before it; so must the schedule.
	if ts := ks.Timers(); len(ts) > 0 && ts[0].Fire <= b.keyWM[st.key] && !r.forgetWaits(st.key, ts[0], b) {
		r.bad("harness: %v arrives at watermark %d before key %s's timer %+v, due by then, fired", e, b.keyWM[st.key], e.Key, ts[0])
		return
	}
	writes := ks.Writes()
	recs, late, sent, err := b.inst.Element(ks, e.Key, side, e.Time, e.Val)
	if err != nil {
		r.bad("processing %v: %v", e, err)
		return
	}
	if side == join.Right && len(late) == 0 && ks.Writes() == writes {
		r.unbuffered++
	}
	for _, pc := range sent {
		pc.Of = e.Key
		b.sent = append(b.sent, pc)
	}
	b.arr = append(b.arr, oArrival{Elem: e, Watermark: b.keyWM[st.key], Cut: b.keyWM[st.key]})
	if e.Time < r.inputWM {
		b.behind[e.Val] = r.inputWM - e.Time
	}
	r.checkRecords(b, recs, &e)
	b.got.Late = append(b.got.Late, late...)
}

// work is bundle b's working copy of runner key k's state, made from the
// committed one when b first touches k (under WorkItems, in an SDK
// bundle).
func (r *modelRun) work(b *mBundle, k string) *join.ModelKeyState {
	ks := b.work[k]
	if ks == nil {
		if ks = r.state[k]; ks == nil {
			ks = join.NewModelKeyState()
		}
		ks = ks.Clone()
		if r.sc.WorkItems {
			ks.BeginSDKBundle()
		}
		b.work[k] = ks
	}
	return ks
}

// lastCut is the watermark runner key k's timers were last fired up to,
// in bundle b or before.
func (r *modelRun) lastCut(b *mBundle, k string) int64 {
	last, ok := b.keyWM[k]
	if !ok {
		if last, ok = r.keyWM[k]; !ok {
			last = noWatermark
		}
	}
	return last
}

// workItemStep runs one step of a work item (WorkItems): an element or a
// piece, with no timer fired before it; the timers come at the end of the
// bundle (fireWorkItem). An arrival's cut, up to which the oracle fires
// the key's timers before it, is the key's last cut, or just before the
// earliest timer the DoFn has set, if that is earlier: a timer set in the
// bundle, or one due that the work item did not bring, has not fired yet.
func (r *modelRun) workItemStep(b *mBundle, st mStep, ks *join.ModelKeyState, last int64) {
	r.trace("work item step key %q last %d elem %v piece %v", st.key, last, st.elem, st.piece)
	if st.piece != nil {
		recs, late, err := b.inst.Piece(ks, *st.piece)
		if err != nil {
			r.bad("processing %v: %v", *st.piece, err)
			return
		}
		b.taken = append(b.taken, *st.piece)
		var arriving *oElem
		for _, rec := range recs {
			for _, v := range []*string{rec.Left, rec.Right} {
				if e, ok := r.byVal[deref(v)]; ok && arriving == nil && v != nil && pieceOf(*st.piece, e) {
					arriving = &e
				}
			}
		}
		r.checkRecords(b, recs, arriving)
		b.got.Late = append(b.got.Late, late...)
		return
	}
	if st.elem == nil {
		return // the work item's timers only
	}
	e := *st.elem
	side := join.Left
	if e.Side == oRight {
		side = join.Right
	}
	cut := last
	if ts := ks.SDKTimers(); len(ts) > 0 && ts[0].Fire <= cut {
		cut = ts[0].Fire - 1
		r.sdk.arrivalsBehindCut++
	}
	writes := ks.Writes()
	recs, late, sent, err := b.inst.Element(ks, e.Key, side, e.Time, e.Val)
	if err != nil {
		r.bad("processing %v: %v", e, err)
		return
	}
	if side == join.Right && len(late) == 0 && ks.Writes() == writes {
		r.unbuffered++
	}
	for _, pc := range sent {
		pc.Of = e.Key
		b.sent = append(b.sent, pc)
	}
	b.arr = append(b.arr, oArrival{Elem: e, Watermark: max(last, cut), Cut: cut})
	if e.Time < r.inputWM {
		b.behind[e.Val] = r.inputWM - e.Time
	}
	r.checkRecords(b, recs, &e)
	b.got.Late = append(b.got.Late, late...)
}

// fireWorkItem delivers, at the end of work item b, the timers of its
// runner key that were due when it began, earliest first, through the
// SDK's timer handling (FireSDK), and records that the key's timers have
// fired up to the watermark they were due by.
func (r *modelRun) fireWorkItem(b *mBundle) {
	for k, limit := range b.limit {
		ks := r.work(b, k)
		for _, t := range b.due[k] {
			recs, fired, err := b.inst.FireSDK(ks, k, t)
			ranRunner := false
			for _, f := range fired {
				r.trace("work item key %q fired %+v (inline %v), due by %d", k, f.Timer, f.Inline, limit)
				if f.Inline {
					r.sdk.inline++
					if f.Timer.Fire == 0 && f.Timer.Hold == 0 {
						r.sdk.clearedInline++
					}
				} else {
					ranRunner = true
				}
			}
			if !ranRunner {
				r.sdk.skipped++
			}
			if err != nil {
				r.bad("firing %+v of key %s in a work item: %v", t, k, err)
				return
			}
			r.checkRecords(b, recs, nil)
		}
		b.keyWM[k] = max(r.lastCut(b, k), limit)
	}
}

// checkRecords checks the records a step emitted against the output
// watermark, and keeps them: a record of elements that all arrived on time
// must not be behind it (the join holds it for them); one emitted on the
// arrival of an element within the allowed lateness behind the input
// watermark must not be dropped by a downstream windowed GroupByKey
// (window end plus the Records' allowed lateness not behind the output
// watermark), unless it is of another element that arrived further
// behind (the retraction of an unmatched record the join could not hold,
// which is dropped as that record was). Other records of elements that arrived
// behind the watermark may be behind it, as any DoFn's output of late
// input is.
func (r *modelRun) checkRecords(b *mBundle, recs []join.Result[string, string, string], arriving *oElem) {
	out := r.outputWatermark()
	for _, rec := range recs {
		r.trace("  %v %s", rec.Kind, recString(rec))
		b.got.Results = append(b.got.Results, rec)
		t := rec.Time.UnixMilli()
		// lateIn: an element in it arrived behind the watermark; beyond:
		// one arrived further behind than the allowed lateness; made: the
		// arriving element is in it.
		lateIn, beyond, made := false, false, false
		for _, v := range []*string{rec.Left, rec.Right} {
			if v == nil {
				continue
			}
			d, ok := b.behind[*v]
			if !ok {
				d, ok = r.behind[*v]
			}
			lateIn, beyond = lateIn || ok, beyond || d > r.lateness
			made = made || (arriving != nil && *v == arriving.Val)
		}
		switch {
		case !lateIn:
			if t < out {
				r.bad("%v record %s at %d is behind the output watermark %d, though every element in it arrived on time", rec.Kind, recString(rec), t, out)
			}
		case arriving != nil && b.behind[arriving.Val] > 0 && b.behind[arriving.Val] <= r.lateness && (made || !beyond) && r.sc.WindowSize > 0:
			end := t - t%r.sc.WindowSize + r.sc.WindowSize - 1
			if end+r.outLate < out {
				r.bad("%v record %s at %d, made by %v arriving %d ms behind the watermark (allowed lateness %d ms), is dropped by a downstream windowed GroupByKey: its window ends at %d, the Records' allowed lateness is %d ms, the output watermark %d",
					rec.Kind, recString(rec), t, *arriving, r.inputWM-arriving.Time, r.lateness, end, r.outLate, out)
			}
		}
	}
}

func deref(v *string) string {
	if v == nil {
		return ""
	}
	return *v
}

// pieceOf reports whether pc is a piece of element e.
func pieceOf(pc join.ModelPiece, e oElem) bool { return pc.Value() == e.Val && pc.Time() == e.Time }

func recString(rec join.Result[string, string, string]) string {
	side := func(v *string, t time.Time) string {
		if v == nil {
			return "-"
		}
		return *v + "@" + strconv.FormatInt(t.UnixMilli(), 10)
	}
	return rec.Key + " " + side(rec.Left, rec.LeftTime) + " " + side(rec.Right, rec.RightTime)
}

// checkBudget checks that the bundle caches of each process hold no more
// together than the join's bound.
func (r *modelRun) checkBudget() {
	for i, pr := range r.procs {
		var sum int64
		for _, in := range pr.pool {
			sum += in.CacheBytes()
		}
		if budget := pr.p.CacheBytes(); budget < sum {
			r.bad("process %d's cache budget counts %d bytes, its instances' caches hold %d", i, budget, sum)
			return
		}
		r.peak = max(r.peak, sum)
		if sum > r.budget {
			r.bad("the bundle caches of process %d hold %d bytes together, over the join's bound of %d (BundleCacheBytes)", i, sum, r.budget)
			return
		}
	}
}

// checkArrivals checks a run's output against the oracle, the arrivals
// being known exactly: each with the cut its key's timers had fired up to.
func checkArrivals(sp oSpec, arr []oArrival, got dGot, st *dStats) []string {
	ch := &checker{sp: sp, arr: arr, ahead: make([]bool, len(arr)), byVal: map[string]oArrival{}, late: map[int]bool{},
		byKey: map[string][]string{}, elems: map[string][]oArrival{}, wMax: noWatermark}
	ch.tallies = make([]tally, len(arr))
	for _, a := range arr {
		ch.byVal[a.Elem.Val] = a
		if ch.elems[a.Elem.Key] == nil {
			ch.keys = append(ch.keys, a.Elem.Key)
		}
		ch.elems[a.Elem.Key] = append(ch.elems[a.Elem.Key], a)
		ch.wMax = max(ch.wMax, a.Watermark)
	}
	ch.readLate(got.Late)
	ch.readResults(got.Results)
	ch.account(st)
	for _, k := range ch.keys {
		slices.Sort(ch.byKey[k])
		ch.exact(k, st)
	}
	return ch.problems
}

// modelSize is how many cases and schedules a run of the harness takes:
// BEAMJOIN_MODEL_CASES (make fuzz sets it larger), or the fixed size of
// make test.
func modelSize(t *testing.T, def int) int {
	if s := os.Getenv("BEAMJOIN_MODEL_CASES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("BEAMJOIN_MODEL_CASES=%q: want a positive number", s)
		}
		return n
	}
	return def
}

// modelSchedules are the schedules each case runs under: one bundle at a
// time in one process (the order Prism's tests see), and runners that cut,
// interleave, fail, retry and move work; three of them with a progress
// horizon short enough that keys forget their progress within a case, one
// of those ProgressHorizon(0), which forgets a key in the firing that
// empties it; and two of work items through the Go SDK's timer handling
// (WorkItems), one of them failing, retrying and moving work with a short
// horizon.
var modelSchedules = []modelSchedule{
	{Processes: 1, Concurrent: 1, BundleMax: 1 << 20},
	{Processes: 1, Concurrent: 3, BundleMax: 4, FailRate: 0.2, DeferRate: 0.3, CacheBytes: 4 << 10},
	{Processes: 3, Concurrent: 2, BundleMax: 3, FailRate: 0.3, MoveRate: 0.3, DeferRate: 0.5, WindowSize: 1, Horizon: 1},
	{Processes: 2, Concurrent: 4, BundleMax: 2, FailRate: 0.1, MoveRate: 0.1, DeferRate: 0.2, CacheBytes: 2 << 10, Horizon: 2000},
	{Processes: 2, Concurrent: 2, BundleMax: 3, FailRate: 0.2, MoveRate: 0.3, DeferRate: 0.3, Horizon: horizonZero},
	{Processes: 1, Concurrent: 1, BundleMax: 1 << 20, WorkItems: true},
	{Processes: 2, Concurrent: 2, BundleMax: 4, FailRate: 0.2, MoveRate: 0.3, DeferRate: 0.3, Horizon: 2000, WorkItems: true},
}

// hotThresholds are the HotKeyThreshold values of the runs in the default
// layout, drawn by schedule seed: 0 leaves the default, which no case
// reaches; the others make a case's keys go hot within it.
var hotThresholds = []int{0, 1, 2, 3, 5}

// TestRunnerModel runs generated cases (the differential test's generator)
// under every schedule of modelSchedules, each with its own seed, and
// checks each run against the oracle and the harness's checks. A failure
// names the case and schedule seeds; BEAMJOIN_MODEL_SEED replays a run
// (e.g. BEAMJOIN_MODEL_SEED=0x1234/0x5678/2 for case, schedule seed and
// schedule index).
func TestRunnerModel(t *testing.T) {
	if replayModelSeed(t, false) {
		return
	}
	n := modelSize(t, 2000)
	failed, found, example := 0, map[string]int{}, map[string]string{}
	var sdk [2]sdkTally    // by layout: bag, split
	var cutOvers [2][2]int // by schedule that fails, retries and moves keys, or not; went hot, and back
	for i := range n {
		cs := caseSeed(20261203, i)
		c := genCase(cs)
		for si, sc := range modelSchedules {
			ss := caseSeed(cs, si)
			r := runModel(c, sc, ss)
			moving := 0
			if sc.FailRate > 0 && sc.MoveRate > 0 {
				moving = 1
			}
			cutOvers[moving][0] += r.cutOvers[0]
			cutOvers[moving][1] += r.cutOvers[1]
			if r.split {
				sdk[1].add(r.sdk)
			} else {
				sdk[0].add(r.sdk)
			}
			if len(r.problems) == 0 {
				continue
			}
			if bug := knownModelBug(r.problems); bug != "" {
				if found[bug]++; found[bug] == 1 {
					example[bug] = fmt.Sprintf("%v (replay: BEAMJOIN_MODEL_SEED=%#x/%#x/%d): %s", r, cs, ss, si, r.problems[0])
				}
				continue
			}
			failed++
			if failed <= 3 {
				t.Errorf("%v (replay: BEAMJOIN_MODEL_SEED=%#x/%#x/%d):\n%s", r, cs, ss, si, strings.Join(r.problems, "\n"))
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d runs failed", failed, n*len(modelSchedules))
	}
	checkSDKTally(t, sdk)
	// Keys must go hot and back under retries and key moves, and
	// without them, or the runs show nothing of either cut-over.
	t.Logf("hot keys: %d went hot and %d were ordinary keys again on schedules that retry and move keys, %d and %d on the others", cutOvers[1][0], cutOvers[1][1], cutOvers[0][0], cutOvers[0][1])
	for _, c := range cutOvers {
		if c[0] == 0 || c[1] == 0 {
			t.Errorf("the runs did not show a cut-over in both directions: %v", cutOvers)
		}
	}
	for _, b := range knownModelBugs {
		if found[b.name] == 0 {
			t.Errorf("no run shows %s any more: remove it from knownModelBugs", b.name)
		}
		t.Logf("%d runs show %s, e.g. %s", found[b.name], b.name, example[b.name])
	}
}

// checkSDKTally logs what the SDK's timer handling did in the work-item
// schedules, by layout, and fails if a layout's runs never exercised each
// behaviour: otherwise they would show nothing about it.
func checkSDKTally(t *testing.T, sdk [2]sdkTally) {
	t.Helper()
	for i, layout := range []string{"bag layout", "split layout"} {
		s := sdk[i]
		t.Logf("work items, %s: %d timers fired inline (%d of them cleared, at event time 0), %d runner timers skipped (tag changed in the bundle), %d arrivals behind a timer not yet fired", layout, s.inline, s.clearedInline, s.skipped, s.arrivalsBehindCut)
		if s.inline == 0 || s.clearedInline == 0 || s.skipped == 0 || s.arrivalsBehindCut == 0 {
			t.Errorf("the work items in the %s never exercised one of the SDK's timer behaviours: %+v", layout, s)
		}
	}
}

// replayModelSeed replays the one run BEAMJOIN_MODEL_SEED names, if set
// (case seed/schedule seed/schedule index, as a failure prints them), of
// TestRunnerModel or, with uniqueLeft, of TestRunnerModelUniqueLeft; it
// reports whether it did.
func replayModelSeed(t *testing.T, uniqueLeft bool) bool {
	s := os.Getenv("BEAMJOIN_MODEL_SEED")
	if s == "" {
		return false
	}
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		t.Fatalf("BEAMJOIN_MODEL_SEED=%q: want case/schedule/index", s)
	}
	cs, err1 := strconv.ParseUint(parts[0], 0, 64)
	ss, err2 := strconv.ParseUint(parts[1], 0, 64)
	i, err3 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || i < 0 || i >= len(modelSchedules) {
		t.Fatalf("BEAMJOIN_MODEL_SEED=%q: bad number", s)
	}
	c, sc := genCase(cs), modelSchedules[i]
	if uniqueLeft {
		c, sc.UniqueLeft = uniqueLefts(c), true
	}
	if r := runModel(c, sc, ss); len(r.problems) > 0 {
		t.Fatalf("%v:\n%s\n%v", r, strings.Join(r.problems, "\n"), c)
	}
	return true
}

// TestRunnerModelRecorded replays recorded runs that reach schedules the
// generated ones of make test rarely do (make fuzz found them): in the
// split layout with a short progress horizon, a bundle in which an
// element replaces its key's waiting forgetting with a tick already due,
// and another element of the key follows. The tick must fire before it,
// or the arrival's watermark would promise the oracle a firing that has
// not happened (the harness checks that promise at every arrival).
func TestRunnerModelRecorded(t *testing.T) {
	for _, run := range []struct {
		cs, ss uint64
		si     int
	}{
		{0x737e4d885ca14d17, 0x913cd5086060fb9f, 3},
		{0xe681889538668f67, 0x4ee707bedc1a1f69, 2},
	} {
		if r := runModel(genCase(run.cs), modelSchedules[run.si], run.ss); len(r.problems) > 0 {
			t.Errorf("%v (BEAMJOIN_MODEL_SEED=%#x/%#x/%d):\n%s", r, run.cs, run.ss, run.si, strings.Join(r.problems, "\n"))
		}
	}
}

// TestRunnerModelMonotone runs generated cases in the split layout
// (SplitKeys) under every schedule of modelSchedules with watermarks that
// never go back (Monotone), as every runner's. Fed by a source that judges
// lateness (SourceLate), every run must pass: the pieces of the elements
// the join takes are at most join.LateBehind behind the watermark, none
// of their partners can have expired by then, and a piece waiting for its
// bucket holds the bucket's timers. Fed every element, the split layout
// can lose a pair of two elements that both arrived further behind the
// watermark than the allowed lateness (docs/design/interval.md): every
// failing run must have such a pair, and the test counts them.
func TestRunnerModelMonotone(t *testing.T) {
	n := modelSize(t, 1000)
	runs, failed, exposed, dropped := 0, 0, 0, 0
	for i := range n {
		cs := caseSeed(20261206, i)
		c := genCase(cs)
		if c.Spec.MaxBuffered != 0 {
			continue // SplitKeys refuses MaxBufferedPerKey
		}
		for si, sc := range modelSchedules {
			sc.Monotone = true
			ss := caseSeed(cs, si) | 1 // odd: the split layout
			for _, sourceLate := range []bool{true, false} {
				sc.SourceLate = sourceLate
				r := runModel(c, sc, ss)
				runs++
				if !r.split {
					t.Fatalf("%v: not in the split layout", r)
				}
				dropped += r.sourceLate
				if len(r.problems) == 0 {
					continue
				}
				if !sourceLate && r.behindPair() {
					exposed++
					continue
				}
				if failed++; failed <= 3 {
					t.Errorf("%v, SourceLate %v (case %#x, schedule %d, seed %#x):\n%s", r, sourceLate, cs, si, ss, strings.Join(r.problems, "\n"))
				}
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d runs failed", failed, runs)
	}
	if dropped == 0 {
		t.Errorf("no element went to the source's late output in %d runs", runs)
	}
	t.Logf("%d runs; fed every element, %d lost records to a pair of elements both behind the watermark beyond the allowed lateness; the source's late output took %d elements", runs, exposed, dropped)
}

// behindPair reports whether two partners arrived further behind the
// input watermark than the allowed lateness, both.
func (r *modelRun) behindPair() bool {
	for _, a := range r.arr {
		for _, b := range r.arr {
			if a.Elem.Side == oLeft && r.c.Spec.pairOf(a.Elem, b.Elem) && r.behind[a.Elem.Val] > r.lateness && r.behind[b.Elem.Val] > r.lateness {
				return true
			}
		}
	}
	return false
}

// TestRunnerModelUniqueLeft runs generated cases made to have one left
// element per key (uniqueLefts) under every schedule of modelSchedules
// with UniqueLeft, and checks each run against the oracle of the join
// without it: the option changes no record, only what is buffered. A
// failure names the seeds; BEAMJOIN_MODEL_CASES sets the number of cases.
func TestRunnerModelUniqueLeft(t *testing.T) {
	if replayModelSeed(t, true) {
		return
	}
	n := modelSize(t, 2000)
	failed, decided := 0, 0
	for i := range n {
		cs := caseSeed(20261205, i)
		c := uniqueLefts(genCase(cs))
		for si, sc := range modelSchedules {
			sc.UniqueLeft = true
			ss := caseSeed(cs, si)
			r := runModel(c, sc, ss)
			decided += r.unbuffered
			if len(r.problems) == 0 {
				continue
			}
			if failed++; failed <= 3 {
				t.Errorf("%v (replay: BEAMJOIN_MODEL_SEED=%#x/%#x/%d go test ./transforms/join -run '^TestRunnerModelUniqueLeft$'):\n%s", r, cs, ss, si, strings.Join(r.problems, "\n"))
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d runs failed", failed, n*len(modelSchedules))
	}
	// The runs must include right elements that were not buffered, or
	// the test shows nothing about the option.
	if decided == 0 {
		t.Errorf("no right element went unbuffered in %d runs", n*len(modelSchedules))
	}
	t.Logf("%d right elements not buffered in %d runs", decided, n*len(modelSchedules))
}

// uniqueLefts is c with one left element per key, the first to arrive
// (the others are removed from its script), and no size cap, which
// UniqueLeft does not take.
func uniqueLefts(c dCase) dCase {
	c.Spec.MaxBuffered = 0
	seen := map[string]bool{}
	script := make([]oStep, 0, len(c.Script))
	for _, st := range c.Script {
		if e := st.Elem; e != nil && e.Side == oLeft {
			if seen[e.Key] {
				continue
			}
			seen[e.Key] = true
		}
		script = append(script, st)
	}
	c.Script = script
	return c
}

// knownModelBugs are the defects of the join that the harness finds and
// that are not fixed yet, each by the words of the problems it causes: a
// run whose every problem is one of them is counted, not failed, and each
// must still be found (so the harness is shown to find it, and the entry
// goes when the fix lands).
var knownModelBugs = []struct{ name, words string }{}

// knownModelBug names the known bug that every one of problems is of, or
// returns "".
func knownModelBug(problems []string) string {
	name := ""
	for _, p := range problems {
		which := ""
		for _, b := range knownModelBugs {
			for _, w := range strings.Split(b.words, "|") {
				if strings.Contains(p, w) {
					which = b.name
				}
			}
		}
		if which == "" || (name != "" && which != name) {
			return ""
		}
		name = which
	}
	return name
}
