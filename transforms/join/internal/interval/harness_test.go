package interval

// This file drives the interval join's stateful DoFn directly, without a
// runner, over an in-memory state and timer backend (package statetest): for what a runner
// rarely does on demand (a stale timer firing) and for measuring the
// per-bundle cache over more keys than a test pipeline can afford. Its
// counters are the DoFn's own, read from a metrics store of its own, not
// from a runner.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/statetest"
)

// harness runs an interval join's DoFn over string keys and values, one
// statetest.State and statetest.Timers per key, and collects what it emits as strings.
// In the split layout (newSplitHarness) it runs both stages, a runner key
// each: "k:" and the key for the first, "b:" and the group key for a
// bucket; the first stage's pieces reach their buckets at once, in the
// order it sends them. The default layout with hot-key detection
// (newHotHarness) runs the same way, its per-key DoFn (hotFn) as the first
// stage: a key's own records come from it, its pieces, once it is hot,
// go to the buckets.
type harness struct {
	t      testing.TB
	ctx    context.Context // holds the metrics store
	fn     harnessFn
	j      *joiner // fn's
	split  *splitHarness
	states map[string]*statetest.State
	timers map[string]statetest.Timers
	out    []string
	late   []string
	// The keys seen in the open bundle, and how many times a bundle saw
	// a key first (what a cache that never overflows misses).
	inBundle map[string]bool
	first    int
	// onFire, if set, is told of each firing and the state calls and
	// reads it made.
	onFire func(key string, t timers.TimerMap, calls, reads int)
	// bucketsOf is, by key, the runner keys of the buckets its pieces
	// went to (split layout, hot keys).
	bucketsOf map[string]map[string]bool
}

// splitHarness is the split layout's two DoFns in a harness: its first
// stage, spread, or in the default layout with hot-key detection
// (newHotHarness), hot, which sends only hot keys' pieces; and the
// buckets.
type splitHarness struct {
	spread *spreadFn
	hot    *hotFn
	bucket *bucketFn
}

// bundler starts and finishes a bundle: the default layout's DoFn, or
// both of the split layout's.
type bundler interface {
	StartBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded))
	FinishBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded)) error
}

// StartBundle starts a bundle on both stages.
func (sh *splitHarness) StartBundle(emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) {
	if sh.hot != nil {
		sh.hot.StartBundle(emit, emitLate, nil)
	} else {
		sh.spread.StartBundle(nil)
	}
	sh.bucket.StartBundle(emit, emitLate)
}

// FinishBundle finishes the bundle on both stages.
func (sh *splitHarness) FinishBundle(emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) error {
	var err error
	if sh.hot != nil {
		err = sh.hot.FinishBundle(emit, emitLate, nil)
	} else {
		sh.spread.FinishBundle(nil)
	}
	sh.bucket.FinishBundle(emit, emitLate)
	return err
}

// bundlerOf is the split layout's DoFns if split is set, else fn.
func bundlerOf(fn harnessFn, split *splitHarness) bundler {
	if split != nil {
		return split
	}
	return fn
}

// harnessFn is the default layout's stateful DoFn.
type harnessFn interface {
	bundler
	ProcessElement(context.Context, beam.Window, beam.EventTime, state.Provider, timers.Provider, beam.X, raw.Encoded,
		func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded)) error
	OnTimer(context.Context, beam.Window, beam.EventTime, state.Provider, timers.Provider, beam.X, timers.Context,
		func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded)) error
}

// defaultHorizon is join.DefaultProgressHorizon, which Interval takes
// without ProgressHorizon.
const defaultHorizon = time.Hour

// newHarness returns a harness for a join with these rules and cleanup
// granularity (bag layout), and its bundle cache bounded at cacheBytes (0:
// the default; negative: no cache).
func newHarness(t testing.TB, rules match.Rules, cleanupEvery time.Duration, cacheBytes int64) *harness {
	return newLayoutHarness(t, joiner{Rules: rules, CleanupEvery: cleanupEvery.Milliseconds()}, cacheBytes)
}

// newLayoutHarness returns a harness for the default layout's joiner j,
// whose Rules, CleanupEvery and MaxBuffered it takes. Its bundle cache is
// bounded at cacheBytes (0: the default; negative: no cache). A Horizon of
// zero is taken for the default (defaultHorizon), as Interval does; a
// test of ProgressHorizon(0) sets h.j.Horizon to zero.
func newLayoutHarness(t testing.TB, j joiner, cacheBytes int64) *harness {
	t.Helper()
	h := newBareHarness(t)
	if j.Horizon == 0 {
		j.Horizon = defaultHorizon.Milliseconds()
	}
	j.Key, j.CacheBytes, j.NoCache = h.keyCoder(), max(cacheBytes, 0), cacheBytes < 0
	j.AppendCleanup = appendable(j.Rules) // tests may turn it off in h.j
	fn := statefulFn(j)
	h.fn, h.j = fn, &fn.Join
	// The harness is a process of its own: its cache's budget is not
	// the test binary's, which other tests' pipelines use.
	h.j.cache.budget = new(CacheBudget)
	if err := h.j.Key.Setup(); err != nil {
		t.Fatal(err)
	}
	return h
}

// newSplitHarness returns a harness for the split layout of a join with
// these rules, cleanup granularity and bucket width (0: the default), its
// bundle caches bounded at cacheBytes (0: the default; negative: no
// cache).
func newSplitHarness(t testing.TB, rules match.Rules, cleanupEvery, width time.Duration, cacheBytes int64) *harness {
	t.Helper()
	h := newBareHarness(t)
	cfg := Config{Rules: rules, CleanupEvery: cleanupEvery.Milliseconds(), Horizon: defaultHorizon.Milliseconds(),
		Split: true, SplitWidth: width.Milliseconds(), CacheBytes: max(cacheBytes, 0), NoCache: cacheBytes < 0}
	spread, bucket := NewSplitFns(cfg, h.keyCoder(), new(CacheBudget))
	h.split = &splitHarness{spread: spread, bucket: bucket}
	if err := spread.Setup(); err != nil {
		t.Fatal(err)
	}
	if err := bucket.Setup(); err != nil {
		t.Fatal(err)
	}
	return h
}

// newHotHarness returns a harness for the default layout with hot-key
// detection (Config.HotAfter = hotAfter) of a join with these rules and
// cleanup granularity, its buckets of the default width, its bundle
// caches bounded at cacheBytes (0: the default; negative: no cache).
func newHotHarness(t testing.TB, rules match.Rules, cleanupEvery time.Duration, hotAfter int, cacheBytes int64) *harness {
	t.Helper()
	h := newBareHarness(t)
	cfg := Config{Rules: rules, CleanupEvery: cleanupEvery.Milliseconds(), Horizon: defaultHorizon.Milliseconds(),
		HotAfter: hotAfter, CacheBytes: max(cacheBytes, 0), NoCache: cacheBytes < 0}
	hot, bucket := NewHotFns(cfg, h.keyCoder(), new(CacheBudget))
	h.split = &splitHarness{hot: hot, bucket: bucket}
	h.j = &hot.Join
	if err := hot.Setup(); err != nil {
		t.Fatal(err)
	}
	if err := bucket.Setup(); err != nil {
		t.Fatal(err)
	}
	return h
}

func newBareHarness(t testing.TB) *harness {
	ctx := metrics.SetPTransformID(metrics.SetBundleID(context.Background(), "harness"), "join")
	return &harness{t: t, ctx: ctx, states: map[string]*statetest.State{}, timers: map[string]statetest.Timers{},
		bucketsOf: map[string]map[string]bool{}}
}

// keyCoder is the coder of the harness's string keys.
func (h *harness) keyCoder() coders.Element {
	h.t.Helper()
	_, s := beam.NewPipelineWithRoot()
	keyCoder, err := coders.KVKey(beam.ParDo(s, keyedByItself, beam.Create(s, "k")))
	if err != nil {
		h.t.Fatal(err)
	}
	return keyCoder
}

// caches are the bundle caches of the harness's DoFns.
func (h *harness) caches() []*keyCache {
	if h.split != nil && h.split.hot != nil {
		return []*keyCache{&h.split.hot.Join.cache, &h.split.hot.Spread.cache, &h.split.bucket.Bucket.cache}
	}
	if h.split != nil {
		return []*keyCache{&h.split.spread.Spread.cache, &h.split.bucket.Bucket.cache}
	}
	return []*keyCache{&h.j.cache}
}

// checkCaches checks every cache's bookkeeping (keyCache.check).
func (h *harness) checkCaches() error {
	for _, c := range h.caches() {
		if err := c.check(); err != nil {
			return err
		}
	}
	return nil
}

// totals are the state traffic of every runner key together, and the
// largest value one call wrote.
func (h *harness) totals() (calls int, readBytes, writtenBytes, largestWrite int64) {
	for _, st := range h.states {
		calls += st.Calls
		readBytes += st.ReadBytes
		writtenBytes += st.WrittenBytes
		largestWrite = max(largestWrite, st.LargestWrite)
	}
	return calls, readBytes, writtenBytes, largestWrite
}

// keyTotals are the state traffic of one key of the join: of its runner
// key in the default layout, or in the split layout (and the hot
// layout) of its first stage's and of its buckets' together.
func (h *harness) keyTotals(key string) (calls int, readBytes, writtenBytes int64) {
	rks := []string{key}
	if h.split != nil {
		rks = []string{"k:" + key}
		for rk := range h.bucketsOf[key] {
			rks = append(rks, rk)
		}
	}
	for _, rk := range rks {
		if st := h.states[rk]; st != nil {
			calls += st.Calls
			readBytes += st.ReadBytes
			writtenBytes += st.WrittenBytes
		}
	}
	return calls, readBytes, writtenBytes
}

// keyedByItself makes a KV pair, for a PCollection with a string key coder.
func keyedByItself(v string) (string, string) { return v, v }

func init() { register.Function1x2(keyedByItself) }

func (h *harness) stores(key string) (*statetest.State, statetest.Timers) {
	if !h.inBundle[key] {
		h.inBundle[key] = true
		h.first++
	}
	if h.states[key] == nil {
		h.states[key], h.timers[key] = statetest.NewState(), statetest.Timers{}
	}
	return h.states[key], h.timers[key]
}

func (h *harness) emit(_ beam.EventTime, key beam.X, r raw.Record) {
	switch {
	case r.Kind == raw.Pair:
		h.out = append(h.out, fmt.Sprintf("pair %v %s@%d %s@%d", key, r.Left, r.LeftTime, r.Right, r.RightTime))
	case r.HasLeft:
		h.out = append(h.out, fmt.Sprintf("%v %v %s@%d -", r.Kind, key, r.Left, r.LeftTime))
	default:
		h.out = append(h.out, fmt.Sprintf("%v %v - %s@%d", r.Kind, key, r.Right, r.RightTime))
	}
}

func (h *harness) emitLate(et beam.EventTime, key beam.X, in raw.Encoded) {
	h.late = append(h.late, fmt.Sprintf("late %v %v %s@%d", raw.SideName[in.Side], key, in.Value, et.Milliseconds()))
}

func (h *harness) startBundle() {
	h.inBundle = map[string]bool{}
	bundlerOf(h.fn, h.split).StartBundle(h.emit, h.emitLate)
}

// loads is how many times a bundle saw a key for the first time.
func (h *harness) loads() int64 { return int64(h.first) }

func (h *harness) finishBundle() {
	h.t.Helper()
	if err := bundlerOf(h.fn, h.split).FinishBundle(h.emit, h.emitLate); err != nil {
		h.t.Fatal(err)
	}
}

// element processes one element of side at time ms, in the open bundle.
func (h *harness) element(side match.Side, ms int64, key, value string) {
	h.t.Helper()
	if h.split != nil {
		h.splitElement(side, ms, key, value)
		return
	}
	sp, tp := h.stores(key)
	err := h.fn.ProcessElement(h.ctx, window.GlobalWindow{}, beam.EventTime(ms), sp, tp, key,
		raw.Encoded{Side: uint8(side), Value: []byte(value)}, h.emit, h.emitLate)
	if err != nil {
		h.t.Fatal(err)
	}
}

// fire delivers a firing of the key's timer t, in the open bundle, as a
// runner does: the firing is the timer's tag, and OnTimer's event time is
// its hold. A timer still set as t is consumed by its firing; delivering
// t again after that is a stale firing.
func (h *harness) fire(key string, t timers.TimerMap) {
	h.t.Helper()
	sp, tp := h.stores(key)
	if tp[t.Tag] == t {
		delete(tp, t.Tag)
	}
	calls, reads := sp.Calls, sp.Reads
	err := h.fn.OnTimer(h.ctx, window.GlobalWindow{}, beam.EventTime(t.HoldTimestamp), sp, tp, key,
		timers.Context{Family: t.Family, Tag: t.Tag}, h.emit, h.emitLate)
	if err != nil {
		h.t.Fatal(err)
	}
	if h.onFire != nil {
		h.onFire(key, t, sp.Calls-calls, sp.Reads-reads)
	}
}

// counter returns the value of one of the join's counters so far.
func (h *harness) counter(name string) int64 {
	h.t.Helper()
	var v int64
	err := metrics.Extractor{SumInt64: func(l metrics.Labels, n int64) {
		if l.Namespace() == Namespace && l.Name() == name {
			v += n
		}
	}}.ExtractFrom(metrics.GetStore(h.ctx))
	if err != nil {
		h.t.Fatal(err)
	}
	return v
}

// only returns the key's one set timer.
func (h *harness) only(key string) timers.TimerMap {
	h.t.Helper()
	_, tp := h.stores(key)
	if len(tp) != 1 {
		h.t.Fatalf("key %s has %d timers set, want 1: %v", key, len(tp), tp)
	}
	for _, t := range tp {
		return t
	}
	panic("unreachable")
}

// sentPiece is a piece the split layout's first stage sent.
type sentPiece struct {
	at    beam.EventTime
	group []byte
	p     Piece
}

// splitElement runs an element through the split layout's first stage
// (or the hot layout's per-key DoFn) and its pieces through their buckets.
func (h *harness) splitElement(side match.Side, ms int64, key, value string) {
	h.t.Helper()
	sp, tp := h.stores("k:" + key)
	var sent []sentPiece
	in := raw.Encoded{Side: uint8(side), Value: []byte(value)}
	emitPiece := func(at beam.EventTime, g []byte, p Piece) { sent = append(sent, sentPiece{at, g, p}) }
	var err error
	if h.split.hot != nil {
		err = h.split.hot.ProcessElement(h.ctx, window.GlobalWindow{}, beam.EventTime(ms), sp, tp, key, in, h.emit, h.emitLate, emitPiece)
	} else {
		err = h.split.spread.ProcessElement(h.ctx, beam.EventTime(ms), sp, tp, key, in, emitPiece)
	}
	if err != nil {
		h.t.Fatal(err)
	}
	for _, x := range sent {
		rk := "b:" + string(x.group)
		if h.bucketsOf[key] == nil {
			h.bucketsOf[key] = map[string]bool{}
		}
		h.bucketsOf[key][rk] = true
		sp, tp := h.stores(rk)
		if err := h.split.bucket.ProcessElement(h.ctx, x.at, sp, tp, x.group, x.p, h.emit, h.emitLate); err != nil {
			h.t.Fatal(err)
		}
	}
}

// fireSplit delivers a firing of timer t of runner key rk (see harness),
// in the open bundle.
func (h *harness) fireSplit(rk string, t timers.TimerMap) {
	h.t.Helper()
	sp, tp := h.stores(rk)
	if tp[t.Tag] == t {
		delete(tp, t.Tag)
	}
	tc := timers.Context{Family: t.Family, Tag: t.Tag}
	var err error
	noPiece := func(beam.EventTime, []byte, Piece) { h.t.Fatal("a firing sent a piece") }
	if key, ok := strings.CutPrefix(rk, "k:"); ok && h.split.hot != nil {
		err = h.split.hot.OnTimer(h.ctx, window.GlobalWindow{}, beam.EventTime(t.HoldTimestamp), sp, tp, key, tc, h.emit, h.emitLate, noPiece)
	} else if ok {
		err = h.split.spread.OnTimer(h.ctx, beam.EventTime(t.HoldTimestamp), sp, tp, key, tc, noPiece)
	} else {
		err = h.split.bucket.OnTimer(h.ctx, beam.EventTime(t.HoldTimestamp), sp, tp, []byte(strings.TrimPrefix(rk, "b:")), tc, h.emit, h.emitLate)
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

// splitDue returns the split layout's timers due at input watermark wm,
// earliest first: the first stage's at wm, the buckets' at the first
// stage's output watermark (wm held back by its timers' holds).
func (h *harness) splitDue(wm int64) []dueTimer {
	out := wm
	for rk, tp := range h.timers {
		if strings.HasPrefix(rk, "k:") {
			for _, t := range tp {
				out = min(out, t.HoldTimestamp.Milliseconds())
			}
		}
	}
	var due []dueTimer
	for rk, tp := range h.timers {
		limit := wm
		if strings.HasPrefix(rk, "b:") {
			limit = out
		}
		for _, t := range tp {
			if t.FireTimestamp.Milliseconds() <= limit {
				due = append(due, dueTimer{rk, t})
			}
		}
	}
	slices.SortFunc(due, func(a, b dueTimer) int {
		return cmp.Or(cmp.Compare(a.t.FireTimestamp, b.t.FireTimestamp), strings.Compare(a.key, b.key))
	})
	return due
}

// dueTimer is a timer due to fire, of a runner key.
type dueTimer struct {
	key string
	t   timers.TimerMap
}
