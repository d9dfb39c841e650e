package join

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/join/match"
)

func init() {
	register.DoFn3x1[beam.X, beam.Y, func(beam.X, encoded), error](&encodeFn{})
	register.Emitter2[beam.X, encoded]()
	register.DoFn9x1[context.Context, beam.Window, beam.EventTime, state.Provider, timers.Provider, beam.X, encoded,
		func(beam.EventTime, beam.X, record), func(beam.EventTime, beam.X, encoded), error](&intervalFn{})
	register.DoFn9x1[context.Context, beam.Window, beam.EventTime, state.Provider, timers.Provider, beam.X, encoded,
		func(beam.EventTime, beam.X, record), func(beam.EventTime, beam.X, encoded), error](&bucketedIntervalFn{})
	register.Emitter3[beam.EventTime, beam.X, record]()
	register.Emitter3[beam.EventTime, beam.X, encoded]()
	register.DoFn4x1[beam.EventTime, beam.X, record, func(beam.Y), error](&resultFn{})
	register.DoFn4x1[beam.EventTime, beam.X, encoded, func(beam.Y), error](&lateFn{})
	register.Emitter1[beam.Y]()
}

// intervalOptions are the options Interval takes.
const intervalOptions = setBounds | setLowerExclusive | setUpperExclusive | setType | setEmit | setLateness | setMaxBuffered | setCleanupEvery | setHotKeyBuckets

// bucketLogLimit is how many arrivals a bucketed key appends to its bag
// before moving them into their buckets.
const bucketLogLimit = 64

// testLayout forces a layout on the joins built while it is set (tests
// and benchmarks, through export_test.go).
var testLayout struct {
	set, bucketed         bool
	bucketAbove, logLimit int
	noCache               bool
}

// Interval joins left, a PCollection<KV<K,L>>, with right, a
// PCollection<KV<K,R>>: a left element l and a right element r with the
// same key match iff lower <= ts(r) - ts(l) <= upper, with the bounds given
// by Between. It returns the join's records, a PCollection<Result[K,L,R]>,
// and the elements judged late, a PCollection<LateElement[K,L,R]>.
//
//	results, late := join.Interval[string, Order, Payment](s, orders, payments,
//		join.Between(0, 15*time.Minute), join.LeftOuter, join.EmitFinal)
//
// The left element is always the reference, whichever arrives first, so the
// pairs depend only on which elements are present, never on arrival order.
// Inner (the default), LeftOuter, RightOuter and FullOuter choose which
// elements without a partner are reported; EmitImmediate (the default),
// EmitFinal and EmitRetract choose when.
//
// # How it runs
//
// Interval tags each side's values with their side, encoding them with the
// input's own Beam coder, flattens the two, and runs one stateful DoFn on the
// key. The DoFn keeps both sides of a key in one state.Bag (a bag element is
// a chunk of entries, see package coders) and cleans it with one
// event-time timer. Every state call is a round trip to the runner (about
// 50 µs on Prism), so the design counts them:
//
//   - An arriving element costs one bag read and one append. The read is
//     skipped when the key was already read in the same bundle: the DoFn
//     keeps the keys it has read, decoded, until the bundle ends, because a
//     key's state can only change through the one DoFn instance that
//     processes it during a bundle. A runner that bundles many elements of
//     a key together (Prism does) thus reads a hot key once per bundle,
//     not once per element. Eviction (MaxBufferedPerKey) adds a clear: the
//     bag is rewritten as one chunk. A timer is set only when the key's
//     cleanup time or watermark hold moves.
//   - The cleanup timer fires at the key's earliest expiry, rounded up to
//     CleanupEvery (default 1 s). A firing reads the bag, removes everything
//     that has expired and writes the rest back as one chunk: three calls,
//     shared by every element that expired in that span. Keys whose
//     elements are seconds apart pay one firing per element; a coarser
//     CleanupEvery is then the way to trade state size and the delay of
//     EmitFinal's records for throughput.
//
// HotKeyBuckets(n) adds a second layout for keys that buffer more than n
// elements, so that an arrival no longer reads the key's whole buffer. Such
// a key keeps its elements in a state.Map of time buckets, each as wide as
// the partner range (upper - lower + 1 ms) but at least CleanupEvery, so an
// element's partners are in at most two buckets. Its bag keeps the
// progress, a directory of the buckets (count and oldest time per side) and
// up to 64 recent arrivals. Then:
//
//   - An arrival reads the bag (unless cached), gets each bucket its
//     partners can be in that is not cached yet (at most two; under
//     EmitRetract up to four, since a retraction looks at the partners'
//     partners), and appends to the bag. Every 64 arrivals are moved into
//     their buckets: a get per bucket not yet read, a put (two calls) per
//     bucket written, and a bag rewrite (two calls).
//   - A cleanup firing reads the bag and the buckets that can hold an
//     expiring element or its partners, writes back each bucket that
//     changed (two calls; one to remove an emptied bucket) and rewrites the
//     bag. Eviction does the same for the oldest buckets.
//   - A key whose buffer falls to n/2 elements or fewer moves back into
//     the bag at its next rewrite.
//
// Without the option a join declares bag state only. Map state is
// supported by Prism, but not by every runner's portable state API, so the
// bucketed layout is opt-in; with the bundle cache the bag layout already
// keeps a hot key's cost nearly flat on Prism, whose bundles hold many
// elements of a key, while the buckets keep it flat also where bundles are
// small (see the README's Performance section for the figures).
//
// A left element can be matched until event time passes
// ts + max(upper, 0) + allowed lateness, a right element until
// ts + max(-lower, 0) + allowed lateness; then it is removed and, under
// EmitFinal, reported unmatched if it is on an outer side and never matched.
// The timer holds the output watermark at the oldest buffered outer element,
// so EmitFinal and EmitRetract records, which carry that element's own
// timestamp, are never late downstream.
//
// # Late data
//
// A DoFn cannot read the watermark, so lateness is judged per key from the
// cleanup already done: an element is late iff one of its potential partners
// may already have been removed. Late elements are not joined or buffered;
// they go to the second output. An element that is not behind the watermark
// by more than the allowed lateness is never late, so no pair is lost at the
// cleanup boundary. After a key's last element is removed the key remembers
// its progress for one more join span (max(upper,0) + max(-lower,0) +
// allowed lateness); then its state is cleared, and an element arriving for
// that key later still is treated as new.
//
// # Counters
//
// Beam counters in namespace "beamjoin": left_in and right_in; pairs_out,
// retractions_out, left_unmatched_out and right_unmatched_out (records);
// and each element's fate, exactly one per element once its key is cleaned
// up: left_matched, left_unmatched (an outer element that never matched),
// left_expired (an inner-side element that never matched), left_evicted,
// left_late, and the same for right. The distribution buffered_per_key
// records a key's buffered count at each arrival, and the counter
// keys_with_state goes up when a key gets state and down when its state is
// cleared: it is zero once every key's state is gone.
//
// Interval panics on misuse with a clear message; TryInterval returns the
// error.
func Interval[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) (results, late beam.PCollection) {
	results, late, err := TryInterval[K, L, R](s, left, right, opts...)
	if err != nil {
		panic(err)
	}
	return results, late
}

// TryInterval is Interval returning an error instead of panicking.
func TryInterval[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) (results, late beam.PCollection, err error) {
	s = s.Scope("join.Interval")
	cfg, err := newConfig("join.Interval", intervalOptions, opts)
	if err != nil {
		return results, late, err
	}
	if cfg.set&setBounds == 0 {
		return results, late, fmt.Errorf("beamjoin: join.Interval needs bounds: add join.Between(lower, upper)")
	}
	if err := cfg.rules.Validate(); err != nil {
		return results, late, err
	}
	if err := checkInputs[K, L, R]("join.Interval", left, right); err != nil {
		return results, late, err
	}
	leftCoder, err := coders.KVValue(left)
	if err != nil {
		return results, late, err
	}
	rightCoder, err := coders.KVValue(right)
	if err != nil {
		return results, late, err
	}

	tagged := beam.Flatten(s,
		beam.ParDo(s.Scope("left"), &encodeFn{Side: match.Left, Value: leftCoder}, left),
		beam.ParDo(s.Scope("right"), &encodeFn{Side: match.Right, Value: rightCoder}, right))
	keyCoder, err := coders.KVKey(left)
	if err != nil {
		return results, late, err
	}
	j := joiner{
		Rules:        cfg.rules,
		MaxBuffered:  cfg.maxBuffered,
		CleanupEvery: cfg.cleanupEvery.Milliseconds(),
		Key:          keyCoder,
		NoCache:      testLayout.noCache,
		BucketAbove:  cfg.bucketAbove,
		LogLimit:     bucketLogLimit,
	}
	bucketed := cfg.set&setHotKeyBuckets != 0
	if testLayout.set {
		bucketed, j.BucketAbove, j.LogLimit = testLayout.bucketed, testLayout.bucketAbove, testLayout.logLimit
	}
	var fn any = &intervalFn{Join: j, Buffer: state.MakeBagState[[]byte]("buffer"), Cleanup: timers.InEventTime("cleanup")}
	if bucketed {
		fn = &bucketedIntervalFn{Join: j, Buffer: state.MakeBagState[[]byte]("buffer"),
			Buckets: state.MakeMapState[int64, []byte]("buckets"), Cleanup: timers.InEventTime("cleanup")}
	}
	raw, rawLate := beam.ParDo2(s, fn, tagged)

	resultType := reflect.TypeOf(Result[K, L, R]{})
	results = beam.ParDo(s.Scope("results"), &resultFn{Out: beam.EncodedType{T: resultType}, Left: leftCoder, Right: rightCoder}, raw,
		beam.TypeDefinition{Var: beam.YType, T: resultType})
	lateType := reflect.TypeOf(LateElement[K, L, R]{})
	late = beam.ParDo(s.Scope("late"), &lateFn{Out: beam.EncodedType{T: lateType}, Left: leftCoder, Right: rightCoder}, rawLate,
		beam.TypeDefinition{Var: beam.YType, T: lateType})
	return results, late, nil
}

// encoded is a value tagged with its side and encoded with its input's coder.
type encoded struct {
	Side  uint8
	Value []byte
}

// encodeFn tags one side's values and encodes them.
type encodeFn struct {
	Side  match.Side
	Value coders.Element
}

func (f *encodeFn) Setup() error { return f.Value.Setup() }

func (f *encodeFn) ProcessElement(k beam.X, v beam.Y, emit func(beam.X, encoded)) error {
	b, err := f.Value.Encode(v)
	if err != nil {
		return err
	}
	emit(k, encoded{Side: uint8(f.Side), Value: b})
	return nil
}

// record is a join record before its values are decoded.
type record struct {
	Kind                Kind
	HasLeft, HasRight   bool
	LeftTime, RightTime int64
	Left, Right         []byte
}

// intervalFn is the interval join's stateful DoFn in the bag layout: a
// key's whole buffer lives in Buffer. It only moves data between state, the
// timer and the matching core (package match); see joiner.
type intervalFn struct {
	Join    joiner
	Buffer  state.Bag[[]byte]
	Cleanup timers.EventTime
}

func (f *intervalFn) stores(sp state.Provider, tp timers.Provider) stores {
	return stores{sp: sp, tp: tp, buffer: &f.Buffer, cleanup: &f.Cleanup}
}

func (f *intervalFn) Setup() error { return f.Join.Key.Setup() }

// StartBundle and FinishBundle drop the bundle's cache of key states. (The
// SDK requires them to declare ProcessElement's emitters.)
func (f *intervalFn) StartBundle(func(beam.EventTime, beam.X, record), func(beam.EventTime, beam.X, encoded)) {
	f.Join.forget()
}

func (f *intervalFn) FinishBundle(func(beam.EventTime, beam.X, record), func(beam.EventTime, beam.X, encoded)) {
	f.Join.forget()
}

func (f *intervalFn) ProcessElement(ctx context.Context, w beam.Window, et beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, in encoded,
	emit func(beam.EventTime, beam.X, record), emitLate func(beam.EventTime, beam.X, encoded)) error {
	return f.Join.process(ctx, f.stores(sp, tp), w, et, key, in, emit, emitLate)
}

func (f *intervalFn) OnTimer(ctx context.Context, w beam.Window, _ beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, _ timers.Context,
	emit func(beam.EventTime, beam.X, record), _ func(beam.EventTime, beam.X, encoded)) error {
	return f.Join.cleanup(ctx, f.stores(sp, tp), w, key, emit)
}

// bucketedIntervalFn is the interval join's stateful DoFn when hot keys may
// move their buffers into time buckets (HotKeyBuckets): intervalFn plus a
// state.Map of buckets. It is a type of its own so that a join without the
// option declares no map state, which not every runner supports.
type bucketedIntervalFn struct {
	Join    joiner
	Buffer  state.Bag[[]byte]
	Buckets state.Map[int64, []byte]
	Cleanup timers.EventTime
}

func (f *bucketedIntervalFn) stores(sp state.Provider, tp timers.Provider) stores {
	return stores{sp: sp, tp: tp, buffer: &f.Buffer, buckets: &f.Buckets, cleanup: &f.Cleanup}
}

func (f *bucketedIntervalFn) Setup() error { return f.Join.Key.Setup() }

// StartBundle and FinishBundle drop the bundle's cache of key states. (The
// SDK requires them to declare ProcessElement's emitters.)
func (f *bucketedIntervalFn) StartBundle(func(beam.EventTime, beam.X, record), func(beam.EventTime, beam.X, encoded)) {
	f.Join.forget()
}

func (f *bucketedIntervalFn) FinishBundle(func(beam.EventTime, beam.X, record), func(beam.EventTime, beam.X, encoded)) {
	f.Join.forget()
}

func (f *bucketedIntervalFn) ProcessElement(ctx context.Context, w beam.Window, et beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, in encoded,
	emit func(beam.EventTime, beam.X, record), emitLate func(beam.EventTime, beam.X, encoded)) error {
	return f.Join.process(ctx, f.stores(sp, tp), w, et, key, in, emit, emitLate)
}

func (f *bucketedIntervalFn) OnTimer(ctx context.Context, w beam.Window, _ beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, _ timers.Context,
	emit func(beam.EventTime, beam.X, record), _ func(beam.EventTime, beam.X, encoded)) error {
	return f.Join.cleanup(ctx, f.stores(sp, tp), w, key, emit)
}

// joiner is the interval join's logic, shared by the DoFns of both layouts:
// its exported fields are the join's configuration, the rest is the
// instance's cache of the keys seen in the current bundle. State access
// goes through interval_state.go.
type joiner struct {
	Rules        match.Rules
	MaxBuffered  int
	CleanupEvery int64
	// Key encodes keys, to name them in the bundle cache.
	Key coders.Element
	// NoCache turns the bundle cache off (benchmarks measure it).
	NoCache bool
	// BucketAbove and LogLimit place a key's buffer in the bucketed layout
	// (bucketedIntervalFn only); see layoutOf.
	BucketAbove, LogLimit int

	keys map[cacheKey]*keyState
}

// noHold marks a timer that holds no output watermark.
const noHold = int64(-1 << 63)

// timer is where the cleanup timer of a buffer must be: the firing time and
// the output watermark hold.
type timer struct {
	fire, hold int64
	set        bool
}

// timerFor derives the timer from the key's state alone, so that a firing
// can recompute which time it is for: the earliest expiry rounded up to
// CleanupEvery, holding the output watermark at the oldest outer element
// when EmitFinal or EmitRetract may still emit it; or, for a key holding
// only progress, the time its progress is forgotten.
func (j *joiner) timerFor(ks *keyState) timer {
	var oldest [2]int64
	var has [2]bool
	next, ok := int64(0), false
	for _, s := range []match.Side{match.Left, match.Right} {
		oldest[s], has[s] = ks.oldest(s)
		if t := j.Rules.Expiry(s, oldest[s]); has[s] && (!ok || t < next) {
			next, ok = t, true
		}
	}
	if ok {
		t := timer{fire: roundUp(next, j.CleanupEvery), hold: noHold, set: true}
		if j.Rules.Emit != match.Immediate {
			for _, s := range []match.Side{match.Left, match.Right} {
				if has[s] && j.Rules.Type.Outer(s) && (t.hold == noHold || oldest[s] < t.hold) {
					t.hold = oldest[s]
				}
			}
		}
		return t
	}
	if p := ks.b.Progress; p != match.NoProgress {
		lo, hi := j.Rules.Bounds.Millis()
		memory := max(hi, 0) + max(-lo, 0) + j.Rules.Lateness.Milliseconds() + 1
		return timer{fire: roundUp(p+memory, j.CleanupEvery), hold: noHold, set: true}
	}
	return timer{}
}

// moveTimer moves the cleanup timer from where it was (before) to where it
// must be (after). A timer that need not hold the output watermark holds it
// at its own firing time, Beam's default, which never holds it back.
//
// The timer's tag is its hold. Prism v2.77 miscounts watermark holds when a
// timer is replaced by one with the same firing time and another hold (the
// stale firing passes its check and drops the old hold twice), so a change
// of hold clears the old timer and sets a new one under a new tag instead.
// (timers.WithNoOutputTimestamp has a similar counting bug, hence the
// firing-time hold.)
func (j *joiner) moveTimer(st stores, before, after timer) {
	if after == before {
		return
	}
	if before.set && before.tag() != after.tag() {
		st.cleanup.ClearTag(st.tp, before.tag())
	}
	if !after.set {
		return
	}
	hold := after.hold
	if hold == noHold {
		hold = after.fire
	}
	st.cleanup.Set(st.tp, time.UnixMilli(after.fire), timers.WithOutputTimestamp(time.UnixMilli(hold)), timers.WithTag(after.tag()))
}

func (t timer) tag() string {
	if t.hold == noHold {
		return ""
	}
	return strconv.FormatInt(t.hold, 10)
}

// roundUp rounds t up to a multiple of every.
func roundUp(t, every int64) int64 {
	if every <= 1 {
		return t
	}
	r := t % every
	switch {
	case r > 0:
		return t - r + every
	case r < 0:
		return t - r
	}
	return t
}

// process joins an arriving element and buffers it.
func (j *joiner) process(ctx context.Context, st stores, w beam.Window, et beam.EventTime, key beam.X, in encoded,
	emit func(beam.EventTime, beam.X, record), emitLate func(beam.EventTime, beam.X, encoded)) error {
	ks, err := j.load(st, w, key)
	if err != nil {
		return err
	}
	side := match.Side(in.Side)
	counters.in[side].Inc(ctx, 1)
	before := ks.timer
	if !before.set {
		counters.keysWithState.Inc(ctx, 1)
	}
	e := match.Entry[[]byte]{Side: side, Time: et.Milliseconds(), Value: in.Value}
	if err := j.loadPartners(st, ks, e); err != nil {
		return err
	}
	a := ks.b.Add(j.Rules, e)
	if a.Late {
		counters.fate[side][match.Late].Inc(ctx, 1)
		emitLate(et, key, in)
		return nil
	}
	for _, x := range a.Retracted {
		emit(beam.EventTime(x.Time), key, single(KindRetract, x))
		counters.retractions.Inc(ctx, 1)
	}
	for _, x := range a.Partners {
		l, r := e, x
		if side == match.Right {
			l, r = x, e
		}
		emit(beam.EventTime(max(l.Time, r.Time)), key, record{
			Kind: KindPair, HasLeft: true, HasRight: true,
			LeftTime: l.Time, RightTime: r.Time, Left: l.Value, Right: r.Value,
		})
	}
	counters.pairs.Inc(ctx, int64(len(a.Partners)))
	if a.Unmatched {
		emit(et, key, single(KindUnmatched, e))
		counters.unmatchedOut[side].Inc(ctx, 1)
	}

	counters.buffered.Inc(ctx, 1)
	ks.inBag++ // until stored elsewhere below
	switch {
	case j.MaxBuffered > 0 && ks.len() > j.MaxBuffered:
		removed, err := j.evict(st, ks, ks.len()-j.MaxBuffered)
		if err != nil {
			return err
		}
		for _, x := range removed {
			j.remove(ctx, key, x, true, emit)
		}
		if err := j.store(st, ks, false); err != nil {
			return err
		}
	case j.mustFlush(st, ks):
		if err := j.store(st, ks, true); err != nil {
			return err
		}
	default:
		e.Matched = len(a.Partners) > 0
		if err := st.buffer.Add(st.sp, coders.AppendEntry(nil, e)); err != nil {
			return fmt.Errorf("beamjoin: join.Interval: writing state: %w", err)
		}
	}
	counters.bufferedPerKey.Update(ctx, int64(ks.len()))
	ks.timer = j.timerFor(ks)
	j.moveTimer(st, before, ks.timer)
	return nil
}

// remove accounts for an element leaving the buffer, emitting it as
// unmatched if the emission mode says so.
func (j *joiner) remove(ctx context.Context, key beam.X, x match.Entry[[]byte], evicted bool, emit func(beam.EventTime, beam.X, record)) {
	if j.Rules.UnmatchedOnRemoval(x.Side, x.Matched) {
		emit(beam.EventTime(x.Time), key, single(KindUnmatched, x))
		counters.unmatchedOut[x.Side].Inc(ctx, 1)
	}
	counters.fate[x.Side][j.Rules.FateOf(x.Side, x.Matched, evicted)].Inc(ctx, 1)
	counters.buffered.Inc(ctx, -1)
}

// single is an unmatched or retract record for x.
func single(kind Kind, x match.Entry[[]byte]) record {
	if x.Side == match.Left {
		return record{Kind: kind, HasLeft: true, LeftTime: x.Time, Left: x.Value}
	}
	return record{Kind: kind, HasRight: true, RightTime: x.Time, Right: x.Value}
}

// cleanup is the timer's firing: remove what has expired, or forget a key
// that holds only progress.
func (j *joiner) cleanup(ctx context.Context, st stores, w beam.Window, key beam.X, emit func(beam.EventTime, beam.X, record)) error {
	ks, err := j.load(st, w, key)
	if err != nil {
		return err
	}
	t := ks.timer
	if !t.set {
		return nil // state already gone; a stale firing
	}
	if ks.len() == 0 {
		// Only progress is left, and its time is up.
		if err := st.buffer.Clear(st.sp); err != nil {
			return fmt.Errorf("beamjoin: join.Interval: clearing state: %w", err)
		}
		ks.forgotten()
		counters.keysWithState.Inc(ctx, -1)
		return nil
	}
	if err := j.loadExpiring(st, ks, t.fire); err != nil {
		return err
	}
	for _, x := range ks.b.Expire(j.Rules, t.fire) {
		j.remove(ctx, key, x, false, emit)
	}
	if err := j.store(st, ks, false); err != nil {
		return err
	}
	// The timer that fired is gone: nothing to move it from.
	ks.timer = j.timerFor(ks)
	j.moveTimer(st, timer{}, ks.timer)
	return nil
}

// resultFn decodes records into the author's Result[K,L,R]. It is not
// generic, so it can be registered in init; the result type travels as a
// field and values are built by reflection.
type resultFn struct {
	Out         beam.EncodedType
	Left, Right coders.Element

	kind, key, left, right, leftTime, rightTime, time int
}

// fieldIndexes sets each *int to the index of the field of t it is named
// after.
func fieldIndexes(t reflect.Type, fields map[string]*int) error {
	for name, p := range fields {
		fl, ok := t.FieldByName(name)
		if !ok {
			return fmt.Errorf("beamjoin: %v has no field %s", t, name)
		}
		*p = fl.Index[0]
	}
	return nil
}

func (f *resultFn) Setup() error {
	if err := fieldIndexes(f.Out.T, map[string]*int{"Kind": &f.kind, "Key": &f.key, "Left": &f.left, "Right": &f.right,
		"LeftTime": &f.leftTime, "RightTime": &f.rightTime, "Time": &f.time}); err != nil {
		return err
	}
	if err := f.Left.Setup(); err != nil {
		return err
	}
	return f.Right.Setup()
}

func (f *resultFn) ProcessElement(et beam.EventTime, key beam.X, r record, emit func(beam.Y)) error {
	v := reflect.New(f.Out.T).Elem()
	v.Field(f.kind).Set(reflect.ValueOf(r.Kind))
	v.Field(f.key).Set(reflect.ValueOf(key))
	if r.HasLeft {
		if err := setDecoded(v.Field(f.left), &f.Left, r.Left); err != nil {
			return err
		}
		v.Field(f.leftTime).Set(reflect.ValueOf(time.UnixMilli(r.LeftTime).UTC()))
	}
	if r.HasRight {
		if err := setDecoded(v.Field(f.right), &f.Right, r.Right); err != nil {
			return err
		}
		v.Field(f.rightTime).Set(reflect.ValueOf(time.UnixMilli(r.RightTime).UTC()))
	}
	v.Field(f.time).Set(reflect.ValueOf(et.ToTime().UTC()))
	emit(v.Interface())
	return nil
}

// setDecoded decodes b into a new value and stores its address in ptr, a
// field of type *T.
func setDecoded(ptr reflect.Value, c *coders.Element, b []byte) error {
	x, err := c.Decode(b)
	if err != nil {
		return err
	}
	p := reflect.New(ptr.Type().Elem())
	p.Elem().Set(reflect.ValueOf(x))
	ptr.Set(p)
	return nil
}

// lateFn decodes late elements into the author's LateElement[K,L,R].
type lateFn struct {
	Out         beam.EncodedType
	Left, Right coders.Element

	side, key, time, left, right int
}

func (f *lateFn) Setup() error {
	if err := fieldIndexes(f.Out.T, map[string]*int{"Side": &f.side, "Key": &f.key, "Time": &f.time, "Left": &f.left, "Right": &f.right}); err != nil {
		return err
	}
	if err := f.Left.Setup(); err != nil {
		return err
	}
	return f.Right.Setup()
}

func (f *lateFn) ProcessElement(et beam.EventTime, key beam.X, in encoded, emit func(beam.Y)) error {
	v := reflect.New(f.Out.T).Elem()
	side := match.Side(in.Side)
	v.Field(f.side).Set(reflect.ValueOf(side))
	v.Field(f.key).Set(reflect.ValueOf(key))
	v.Field(f.time).Set(reflect.ValueOf(et.ToTime().UTC()))
	field, c := f.left, &f.Left
	if side == match.Right {
		field, c = f.right, &f.Right
	}
	if err := setDecoded(v.Field(field), c, in.Value); err != nil {
		return err
	}
	emit(v.Interface())
	return nil
}
