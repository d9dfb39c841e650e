package join

// This file drives the interval join's stateful DoFn directly, without a
// runner, over an in-memory state and timer backend: for what a runner
// rarely does on demand (a stale timer firing) and for measuring the
// per-bundle cache over more keys than a test pipeline can afford. Its
// counters are the DoFn's own, read from a metrics store of its own, not
// from a runner.

import (
	"context"
	"fmt"
	"maps"
	"slices"
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
)

// memState is one key's user state in memory: the bag and map states the
// join declares. Methods it does not implement panic (nil embedded
// interface), so a test notices state the join was not expected to use.
type memState struct {
	state.Provider
	bags  map[string][][]byte
	maps  map[string]map[int64][]byte
	calls int // state calls
	reads int // of which reads
	// The bytes of state the calls read and wrote, and the largest value
	// written by one call (benchmarks: what a runner's state backend
	// would carry).
	readBytes, writtenBytes, largestWrite int64
}

// wrote counts a value written.
func (m *memState) wrote(v []byte) {
	m.writtenBytes += int64(len(v))
	m.largestWrite = max(m.largestWrite, int64(len(v)))
}

func newMemState() *memState {
	return &memState{bags: map[string][][]byte{}, maps: map[string]map[int64][]byte{}}
}

// clone is a deep copy of m's state, its call counts reset: what a
// runner keeps of a key while a bundle works on a copy (model harness).
func (m *memState) clone() *memState {
	c := newMemState()
	for id, vs := range m.bags {
		for _, v := range vs {
			c.bags[id] = append(c.bags[id], slices.Clone(v))
		}
	}
	for id, kv := range m.maps {
		c.maps[id] = map[int64][]byte{}
		for k, v := range kv {
			c.maps[id][k] = slices.Clone(v)
		}
	}
	return c
}

func (m *memState) ReadBagState(id string) ([]any, []state.Transaction, error) {
	m.calls++
	m.reads++
	out := make([]any, 0, len(m.bags[id]))
	for _, v := range m.bags[id] {
		out = append(out, v)
		m.readBytes += int64(len(v))
	}
	return out, nil, nil
}

func (m *memState) WriteBagState(t state.Transaction) error {
	m.calls++
	m.wrote(t.Val.([]byte))
	m.bags[t.Key] = append(m.bags[t.Key], t.Val.([]byte))
	return nil
}

func (m *memState) ClearBagState(t state.Transaction) error {
	m.calls++
	delete(m.bags, t.Key)
	return nil
}

func (m *memState) ReadMapStateValue(id string, key any) (any, []state.Transaction, error) {
	m.calls++
	m.reads++
	v, ok := m.maps[id][key.(int64)]
	if !ok {
		return nil, nil, nil
	}
	m.readBytes += int64(len(v))
	return v, nil, nil
}

func (m *memState) WriteMapState(t state.Transaction) error {
	m.calls++
	if m.maps[t.Key] == nil {
		m.maps[t.Key] = map[int64][]byte{}
	}
	m.wrote(t.Val.([]byte))
	m.maps[t.Key][t.MapKey.(int64)] = t.Val.([]byte)
	return nil
}

func (m *memState) ClearMapStateKey(t state.Transaction) error {
	m.calls++
	delete(m.maps[t.Key], t.MapKey.(int64))
	return nil
}

func (m *memState) ClearMapState(t state.Transaction) error {
	m.calls++
	delete(m.maps, t.Key)
	return nil
}

// memTimers is one key's timers in memory, by tag, as a runner keeps them.
type memTimers map[string]timers.TimerMap

func (m memTimers) clone() memTimers { return maps.Clone(m) }

func (m memTimers) Set(t timers.TimerMap) {
	if t.Clear {
		delete(m, t.Tag)
		return
	}
	m[t.Tag] = t
}

// harness runs an interval join's DoFn over string keys and values, one
// memState and memTimers per key, and collects what it emits as strings.
type harness struct {
	t      testing.TB
	ctx    context.Context // holds the metrics store
	fn     harnessFn
	j      *joiner // fn's
	states map[string]*memState
	timers map[string]memTimers
	out    []string
	late   []string
	// The keys seen in the open bundle, and how many times a bundle saw
	// a key first (what a cache that never overflows misses).
	inBundle map[string]bool
	first    int
	// onFire, if set, is told of each firing and the state calls and
	// reads it made.
	onFire func(key string, t timers.TimerMap, calls, reads int)
}

// harnessFn is the stateful DoFn of either layout.
type harnessFn interface {
	StartBundle(func(beam.EventTime, beam.X, record), func(beam.EventTime, beam.X, encoded))
	FinishBundle(func(beam.EventTime, beam.X, record), func(beam.EventTime, beam.X, encoded))
	ProcessElement(context.Context, beam.Window, beam.EventTime, state.Provider, timers.Provider, beam.X, encoded,
		func(beam.EventTime, beam.X, record), func(beam.EventTime, beam.X, encoded)) error
	OnTimer(context.Context, beam.Window, beam.EventTime, state.Provider, timers.Provider, beam.X, timers.Context,
		func(beam.EventTime, beam.X, record), func(beam.EventTime, beam.X, encoded)) error
}

// newHarness returns a harness for a join with these rules and cleanup
// granularity (bag layout), and its bundle cache bounded at cacheBytes (0:
// the default; negative: no cache).
func newHarness(t testing.TB, rules match.Rules, cleanupEvery time.Duration, cacheBytes int64) *harness {
	return newLayoutHarness(t, joiner{Rules: rules, CleanupEvery: cleanupEvery.Milliseconds()}, cacheBytes)
}

// newLayoutHarness returns a harness for the joiner j, whose Rules,
// CleanupEvery, MaxBuffered and BucketAbove it takes: the bucketed layout
// (HotKeyBuckets) if BucketAbove is positive, else the bag layout. Its
// bundle cache is bounded at cacheBytes (0: the default; negative: no
// cache).
func newLayoutHarness(t testing.TB, j joiner, cacheBytes int64) *harness {
	t.Helper()
	_, s := beam.NewPipelineWithRoot()
	keyCoder, err := coders.KVKey(beam.ParDo(s, keyedByItself, beam.Create(s, "k")))
	if err != nil {
		t.Fatal(err)
	}
	j.Key, j.CacheBytes, j.NoCache, j.LogLimit = keyCoder, max(cacheBytes, 0), cacheBytes < 0, bucketLogLimit
	ctx := metrics.SetPTransformID(metrics.SetBundleID(context.Background(), "harness"), "join")
	h := &harness{t: t, ctx: ctx, states: map[string]*memState{}, timers: map[string]memTimers{}}
	if j.BucketAbove > 0 {
		fn := &bucketedIntervalFn{intervalDoFn: intervalDoFn{Join: j}, Buffer: state.MakeBagState[[]byte]("buffer"),
			Buckets: state.MakeMapState[int64, []byte]("buckets"), Cleanup: timers.InEventTime("cleanup")}
		h.fn, h.j = fn, &fn.Join
	} else {
		j.BucketAbove = 1 << 30
		j.AppendCleanup = appendable(j.Rules) // tests may turn it off in h.j
		fn := &intervalFn{intervalDoFn: intervalDoFn{Join: j}, Buffer: state.MakeBagState[[]byte]("buffer"),
			Cleanup: timers.InEventTime("cleanup")}
		h.fn, h.j = fn, &fn.Join
	}
	// The harness is a process of its own: its cache's budget is not
	// the test binary's, which other tests' pipelines use.
	h.j.cache.budget = new(cacheBudget)
	if err := h.j.Key.Setup(); err != nil {
		t.Fatal(err)
	}
	return h
}

// keyedByItself makes a KV pair, for a PCollection with a string key coder.
func keyedByItself(v string) (string, string) { return v, v }

func init() { register.Function1x2(keyedByItself) }

func (h *harness) stores(key string) (*memState, memTimers) {
	if !h.inBundle[key] {
		h.inBundle[key] = true
		h.first++
	}
	if h.states[key] == nil {
		h.states[key], h.timers[key] = newMemState(), memTimers{}
	}
	return h.states[key], h.timers[key]
}

func (h *harness) emit(_ beam.EventTime, key beam.X, r record) {
	switch {
	case r.Kind == KindPair:
		h.out = append(h.out, fmt.Sprintf("pair %v %s@%d %s@%d", key, r.Left, r.LeftTime, r.Right, r.RightTime))
	case r.HasLeft:
		h.out = append(h.out, fmt.Sprintf("%v %v %s@%d -", r.Kind, key, r.Left, r.LeftTime))
	default:
		h.out = append(h.out, fmt.Sprintf("%v %v - %s@%d", r.Kind, key, r.Right, r.RightTime))
	}
}

func (h *harness) emitLate(et beam.EventTime, key beam.X, in encoded) {
	h.late = append(h.late, fmt.Sprintf("late %v %v %s@%d", Side(in.Side), key, in.Value, et.Milliseconds()))
}

func (h *harness) startBundle() {
	h.inBundle = map[string]bool{}
	h.fn.StartBundle(h.emit, h.emitLate)
}

// loads is how many times a bundle saw a key for the first time.
func (h *harness) loads() int64 { return int64(h.first) }

func (h *harness) finishBundle() { h.fn.FinishBundle(h.emit, h.emitLate) }

// element processes one element of side at time ms, in the open bundle.
func (h *harness) element(side Side, ms int64, key, value string) {
	h.t.Helper()
	sp, tp := h.stores(key)
	err := h.fn.ProcessElement(h.ctx, window.GlobalWindow{}, beam.EventTime(ms), sp, tp, key,
		encoded{Side: uint8(side), Value: []byte(value)}, h.emit, h.emitLate)
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
	calls, reads := sp.calls, sp.reads
	err := h.fn.OnTimer(h.ctx, window.GlobalWindow{}, beam.EventTime(t.HoldTimestamp), sp, tp, key,
		timers.Context{Family: t.Family, Tag: t.Tag}, h.emit, h.emitLate)
	if err != nil {
		h.t.Fatal(err)
	}
	if h.onFire != nil {
		h.onFire(key, t, sp.calls-calls, sp.reads-reads)
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
