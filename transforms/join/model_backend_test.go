package join

// This file exposes the interval join's real stateful DoFns to the
// runner-model harness (model_harness_test.go, package join_test) over the
// in-memory state and timer backend of package statetest: a worker
// process, DoFn instances built as Interval builds them (interval.NewFn,
// or interval.NewSplitFns for the split layout), one runner key's
// committed state that a bundle copies and commits or discards, and what
// the DoFns emit: records as Result and LateElement values, and the split
// layout's pieces. It holds no join logic: every verdict is the DoFns'.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"slices"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/asof"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bagstate"
	"github.com/beamjoin/beamjoin/transforms/join/internal/interval"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/statetest"
)

// ModelProcess is one simulated worker process: what its DoFn instances
// share beyond their own fields.
type ModelProcess struct {
	id     string
	caches interval.CacheBudget // what its instances' bundle caches hold together
}

// NewModelProcess returns a fresh worker process, named id.
func NewModelProcess(id string) *ModelProcess { return &ModelProcess{id: id} }

// CacheBytes is what the bundle caches of the process's instances hold
// together, by the process's budget (BundleCacheBytes): the instances in
// use, and any discarded after a failed bundle that Go has not collected.
func (p *ModelProcess) CacheBytes() int64 { return p.caches.Bytes() }

// keyedByItself makes a KV pair, for a PCollection with a string key coder.
func keyedByItself(v string) (string, string) { return v, v }

func init() { register.Function1x2(keyedByItself) }

// modelKeyCoder is the string key coder of the model's joins, built once.
var modelKeyCoder = sync.OnceValues(func() (coders.Element, error) {
	_, s := beam.NewPipelineWithRoot()
	return coders.KVKey(beam.ParDo(s, keyedByItself, beam.Create(s, "k")))
})

// eventTimeFn is what the model calls of the stateful DoFn of an
// event-time join (the interval join's default layout, the as-of join).
type eventTimeFn interface {
	ProcessElement(context.Context, beam.Window, beam.EventTime, state.Provider, timers.Provider, beam.X, raw.Encoded,
		func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded)) error
	OnTimer(context.Context, beam.Window, beam.EventTime, state.Provider, timers.Provider, beam.X, timers.Context,
		func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded)) error
}

// intervalFn is the interval join's stateful DoFn in its default layout.
type intervalFn interface {
	eventTimeFn
	StartBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded))
	FinishBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded)) error
	CacheBytes() int64
}

// splitFns are the split layout's two stateful DoFns: the first stage,
// keyed by the join's key, and a bucket.
type splitFns struct {
	spread interface {
		ProcessElement(context.Context, beam.EventTime, state.Provider, timers.Provider, beam.X, raw.Encoded, func(beam.EventTime, []byte, interval.Piece)) error
		OnTimer(context.Context, beam.EventTime, state.Provider, timers.Provider, beam.X, timers.Context, func(beam.EventTime, []byte, interval.Piece)) error
		StartBundle(func(beam.EventTime, []byte, interval.Piece))
		FinishBundle(func(beam.EventTime, []byte, interval.Piece))
		CacheBytes() int64
	}
	bucket bucketStage
}

// bucketStage is the split layout's second stage, keyed by a key's bucket.
type bucketStage interface {
	ProcessElement(context.Context, beam.EventTime, state.Provider, timers.Provider, []byte, interval.Piece,
		func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded)) error
	OnTimer(context.Context, beam.EventTime, state.Provider, timers.Provider, []byte, timers.Context,
		func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded)) error
	StartBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded))
	FinishBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded))
	CacheBytes() int64
}

// StartBundle starts a bundle on both stages.
func (sf *splitFns) StartBundle(emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) {
	sf.spread.StartBundle(nil)
	sf.bucket.StartBundle(emit, emitLate)
}

// FinishBundle finishes the bundle on both stages.
func (sf *splitFns) FinishBundle(emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) error {
	sf.spread.FinishBundle(nil)
	sf.bucket.FinishBundle(emit, emitLate)
	return nil
}

// hotFns are the default layout's DoFns with hot-key detection: the
// per-key DoFn, which sends a hot key's pieces, and the split layout's
// second stage, which takes them.
type hotFns struct {
	fn interface {
		ProcessElement(context.Context, beam.Window, beam.EventTime, state.Provider, timers.Provider, beam.X, raw.Encoded,
			func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded), func(beam.EventTime, []byte, interval.Piece)) error
		OnTimer(context.Context, beam.Window, beam.EventTime, state.Provider, timers.Provider, beam.X, timers.Context,
			func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded), func(beam.EventTime, []byte, interval.Piece)) error
		StartBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded), func(beam.EventTime, []byte, interval.Piece))
		FinishBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded), func(beam.EventTime, []byte, interval.Piece)) error
		CacheBytes() int64
	}
	bucket bucketStage
}

// StartBundle starts a bundle on both DoFns.
func (h *hotFns) StartBundle(emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) {
	h.fn.StartBundle(emit, emitLate, nil)
	h.bucket.StartBundle(emit, emitLate)
}

// FinishBundle finishes the bundle on both DoFns.
func (h *hotFns) FinishBundle(emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) error {
	err := h.fn.FinishBundle(emit, emitLate, nil)
	h.bucket.FinishBundle(emit, emitLate)
	return err
}

// ModelInstance is one instance of the interval join's stateful DoFn, of
// a join over string keys and values, in a ModelProcess.
type ModelInstance struct {
	proc  *ModelProcess
	fn    intervalFn
	hot   *hotFns     // the default layout's DoFns with hot-key detection, or nil
	split *splitFns   // the split layout's DoFns, or nil
	asof  eventTimeFn // an as-of join's DoFn (NewAsOfInstance), or nil
	ctx   context.Context

	records []Result[string, string, string]
	late    []LateElement[string, string, string]
}

// NewInstance builds a DoFn instance of the join opts configure, as
// Interval would build it, and sets it up.
func (p *ModelProcess) NewInstance(opts ...Option) (*ModelInstance, error) {
	cfg, err := intervalConfig(opts)
	if err != nil {
		return nil, err
	}
	key, err := modelKeyCoder()
	if err != nil {
		return nil, err
	}
	in := &ModelInstance{proc: p, ctx: metrics.SetPTransformID(metrics.SetBundleID(context.Background(), "model"), "join")}
	if cfg.split {
		spread, bucket := interval.NewSplitFns(cfg.interval(), key, &p.caches)
		in.split = &splitFns{spread: spread, bucket: bucket}
		if err := spread.Setup(); err != nil {
			return nil, err
		}
		return in, bucket.Setup()
	}
	if c := cfg.interval(); c.HotAfter > 0 {
		fn, bucket := interval.NewHotFns(c, key, &p.caches)
		in.hot = &hotFns{fn: fn, bucket: bucket}
		if err := fn.Setup(); err != nil {
			return nil, err
		}
		return in, bucket.Setup()
	}
	fn := interval.NewFn(cfg.interval(), key, &p.caches)
	in.fn = fn
	return in, fn.Setup()
}

// NewAsOfInstance builds a DoFn instance of the as-of join opts
// configure, as AsOf would build it.
func (p *ModelProcess) NewAsOfInstance(opts ...Option) (*ModelInstance, error) {
	cfg, err := asofConfig(opts)
	if err != nil {
		return nil, err
	}
	return &ModelInstance{proc: p, ctx: metrics.SetPTransformID(metrics.SetBundleID(context.Background(), "model"), "asof"),
		asof: asof.NewFn(cfg.asof().Rules)}, nil
}

// StartBundle starts a bundle on the instance.
func (in *ModelInstance) StartBundle() {
	if b := in.bundler(); b != nil {
		b.StartBundle(in.emit, in.emitLate)
	}
}

// FinishBundle finishes the instance's bundle: the interval join's DoFns
// write the state appends they left pending in it.
func (in *ModelInstance) FinishBundle() error {
	if b := in.bundler(); b != nil {
		return b.FinishBundle(in.emit, in.emitLate)
	}
	return nil
}

// bundler starts and finishes the bundles of the interval join's DoFns:
// the default layout's, or both of the split layout's; nil for an as-of
// join's.
func (in *ModelInstance) bundler() interface {
	StartBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded))
	FinishBundle(func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded)) error
} {
	switch {
	case in.split != nil:
		return in.split
	case in.hot != nil:
		return in.hot
	case in.fn != nil:
		return in.fn
	}
	return nil
}

// CacheBytes is what the instance's bundle caches hold now, by their own
// estimate.
func (in *ModelInstance) CacheBytes() int64 {
	if in.asof != nil {
		return 0
	}
	if in.split != nil {
		return in.split.spread.CacheBytes() + in.split.bucket.CacheBytes()
	}
	if in.hot != nil {
		return in.hot.fn.CacheBytes() + in.hot.bucket.CacheBytes()
	}
	return in.fn.CacheBytes()
}

// ModelPiece is a piece the split layout's first stage sent: the runner
// key of its bucket (BucketPrefix and the group key), its timestamp, the
// join's key (the harness sets it) and the piece.
type ModelPiece struct {
	Key string
	At  int64
	Of  string
	p   interval.Piece
}

// BucketPrefix starts the runner key of a split layout's bucket, as
// ModelPiece.Key has it; the first stage's runner keys are the join's
// keys.
const BucketPrefix = "b:"

// Value is the piece's element's value.
func (pc ModelPiece) Value() string { return string(pc.p.Value) }

// Time is the piece's element's event time.
func (pc ModelPiece) Time() int64 { return pc.p.Time }

// String names the piece for a failure message.
func (pc ModelPiece) String() string {
	return fmt.Sprintf("piece %v %s@%d late=%v at %d", Side(pc.p.Side), pc.p.Value, pc.p.Time, pc.p.Late, pc.At)
}

// Element processes one element of side at time ms for key, whose state
// is ks, and returns what the DoFn emitted: records and late elements,
// or in the split layout (whose first stage it runs) pieces.
func (in *ModelInstance) Element(ks *ModelKeyState, key string, side Side, ms int64, value string) (_ []Result[string, string, string], _ []LateElement[string, string, string], _ []ModelPiece, err error) {
	defer holdRefused(&err)
	in.records, in.late = nil, nil
	e := raw.Encoded{Side: uint8(side), Value: []byte(value)}
	if in.split != nil {
		var sent []ModelPiece
		err = in.split.spread.ProcessElement(in.ctx, beam.EventTime(ms), ks.st, ks.provider(), key, e, func(at beam.EventTime, g []byte, p interval.Piece) {
			sent = append(sent, ModelPiece{Key: BucketPrefix + string(g), At: at.Milliseconds(), p: p})
		})
		return nil, nil, sent, err
	}
	if in.hot != nil {
		var sent []ModelPiece
		err = in.hot.fn.ProcessElement(in.ctx, window.GlobalWindow{}, beam.EventTime(ms), ks.st, ks.provider(), key, e, in.emit, in.emitLate,
			func(at beam.EventTime, g []byte, p interval.Piece) {
				sent = append(sent, ModelPiece{Key: BucketPrefix + string(g), At: at.Milliseconds(), p: p})
			})
		return in.records, in.late, sent, err
	}
	if in.asof != nil {
		err = in.asof.ProcessElement(in.ctx, window.GlobalWindow{}, beam.EventTime(ms), ks.st, ks.provider(), key, e, in.emit, in.emitLate)
		return in.records, in.late, nil, err
	}
	err = in.fn.ProcessElement(in.ctx, window.GlobalWindow{}, beam.EventTime(ms), ks.st, ks.provider(), key, e, in.emit, in.emitLate)
	return in.records, in.late, nil, err
}

// buckets is the split layout's second stage of the instance: the split
// layout's, or that of the default layout with hot-key detection.
func (in *ModelInstance) buckets() bucketStage {
	if in.hot != nil {
		return in.hot.bucket
	}
	return in.split.bucket
}

// Piece processes a piece in its bucket, whose state is ks, and returns
// what the split layout's second stage emitted.
func (in *ModelInstance) Piece(ks *ModelKeyState, pc ModelPiece) (_ []Result[string, string, string], _ []LateElement[string, string, string], err error) {
	defer holdRefused(&err)
	in.records, in.late = nil, nil
	group := []byte(strings.TrimPrefix(pc.Key, BucketPrefix))
	err = in.buckets().ProcessElement(in.ctx, beam.EventTime(pc.At), ks.st, ks.provider(), group, pc.p, in.emit, in.emitLate)
	return in.records, in.late, err
}

// Fire delivers the firing of t, one of the runner key's timers
// (ks.Timers), as a runner does: the timer is consumed, OnTimer's event
// time is its hold.
func (in *ModelInstance) Fire(ks *ModelKeyState, key string, t ModelTimer) (_ []Result[string, string, string], err error) {
	defer holdRefused(&err)
	in.records, in.late = nil, nil
	if ks.tm[t.Tag] == t.set {
		delete(ks.tm, t.Tag)
	}
	err = in.onTimer(ks, key, t.set)
	return in.records, err
}

// onTimer calls the DoFn's OnTimer for timer t of runner key key, as the
// SDK calls it: the timer's tag, and its hold as the event time.
func (in *ModelInstance) onTimer(ks *ModelKeyState, key string, t timers.TimerMap) error {
	tc := timers.Context{Family: t.Family, Tag: t.Tag}
	hold := beam.EventTime(t.HoldTimestamp)
	var err error
	switch group, bucket := strings.CutPrefix(key, BucketPrefix); {
	case in.asof != nil:
		err = in.asof.OnTimer(in.ctx, window.GlobalWindow{}, hold, ks.st, ks.provider(), key, tc, in.emit, in.emitLate)
	case bucket:
		err = in.buckets().OnTimer(in.ctx, hold, ks.st, ks.provider(), []byte(group), tc, in.emit, in.emitLate)
	case in.hot != nil:
		sent := 0
		err = in.hot.fn.OnTimer(in.ctx, window.GlobalWindow{}, hold, ks.st, ks.provider(), key, tc, in.emit, in.emitLate, func(beam.EventTime, []byte, interval.Piece) { sent++ })
		if err == nil && sent > 0 {
			err = fmt.Errorf("a firing sent %d pieces", sent)
		}
	case in.split == nil:
		err = in.fn.OnTimer(in.ctx, window.GlobalWindow{}, hold, ks.st, ks.provider(), key, tc, in.emit, in.emitLate)
	default:
		sent := 0
		err = in.split.spread.OnTimer(in.ctx, hold, ks.st, ks.provider(), key, tc, func(beam.EventTime, []byte, interval.Piece) { sent++ })
		if err == nil && sent > 0 {
			err = fmt.Errorf("a tick sent %d pieces", sent)
		}
	}
	if err == nil && len(in.late) > 0 {
		err = fmt.Errorf("a timer firing emitted %d late elements", len(in.late))
	}
	return err
}

// holdRefused turns the panic of a timer set with its hold after its
// firing time (statetest.Timers.Set) into the call's error, as the Java SDK's
// refusal fails the bundle.
func holdRefused(err *error) {
	if r := recover(); r != nil {
		e, ok := r.(error)
		if !ok || !errors.Is(e, statetest.ErrHoldAfterFiring) {
			panic(r)
		}
		*err = e
	}
}

func (in *ModelInstance) emit(et beam.EventTime, key beam.X, r raw.Record) {
	out := Result[string, string, string]{Kind: Kind(r.Kind), Key: key.(string), Time: et.ToTime()}
	if r.HasLeft {
		v := string(r.Left)
		out.Left, out.LeftTime = &v, mtime.Time(r.LeftTime).ToTime()
	}
	if r.HasRight {
		v := string(r.Right)
		out.Right, out.RightTime = &v, mtime.Time(r.RightTime).ToTime()
	}
	in.records = append(in.records, out)
}

func (in *ModelInstance) emitLate(et beam.EventTime, key beam.X, e raw.Encoded) {
	v := string(e.Value)
	out := LateElement[string, string, string]{Side: Side(e.Side), Key: key.(string), Time: et.ToTime()}
	if out.Side == Left {
		out.Left = &v
	} else {
		out.Right = &v
	}
	in.late = append(in.late, out)
}

// ModelKeyState is one key's user state and timers as a runner keeps them.
// A bundle works on a Clone and commits it, or discards it on failure.
// Between BeginSDKBundle and EndSDKBundle the DoFn's timer changes go
// through the Go SDK's handling (sdk, model_sdk_test.go) instead of
// reaching tm at once.
type ModelKeyState struct {
	st  *statetest.State
	tm  statetest.Timers
	sdk *sdkTimers
}

// provider is the timer provider the DoFn is given: the SDK's handling
// during an SDK bundle, else the runner's timers themselves.
func (ks *ModelKeyState) provider() timers.Provider {
	if ks.sdk != nil {
		return ks.sdk
	}
	return ks.tm
}

// NewModelKeyState is the state of a key the runner has never seen.
func NewModelKeyState() *ModelKeyState {
	return &ModelKeyState{st: statetest.NewState(), tm: statetest.Timers{}}
}

// Clone is a deep copy of ks.
func (ks *ModelKeyState) Clone() *ModelKeyState {
	return &ModelKeyState{st: ks.st.Clone(), tm: ks.tm.Clone()}
}

// Writes is how many state calls on ks wrote (appended or cleared).
func (ks *ModelKeyState) Writes() int { return ks.st.Calls - ks.st.Reads }

// Empty reports whether the key holds no state and no timer.
func (ks *ModelKeyState) Empty() bool {
	return len(ks.tm) == 0 && len(ks.st.Bags) == 0
}

// Hot reports whether the key's state is that of a hot key of the default
// layout: its bag holds a split record.
func (ks *ModelKeyState) Hot() bool {
	d, err := bagstate.DecodeState(ks.st.Bags["buffer"])
	return err == nil && d.Split != match.NoProgress
}

// ModelTimer is one set timer of a key: its tag, firing time and output
// timestamp (hold), in milliseconds.
type ModelTimer struct {
	Tag        string
	Fire, Hold int64
	set        timers.TimerMap
}

// Timers lists the key's set timers, earliest firing first.
func (ks *ModelKeyState) Timers() []ModelTimer {
	out := make([]ModelTimer, 0, len(ks.tm))
	for _, t := range ks.tm {
		out = append(out, modelTimer(t))
	}
	slices.SortFunc(out, func(a, b ModelTimer) int { return cmp.Or(cmp.Compare(a.Fire, b.Fire), cmp.Compare(a.Tag, b.Tag)) })
	return out
}
