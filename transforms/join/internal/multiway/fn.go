package multiway

// This file holds the multi-way join's stateful DoFn: per key, it loads
// the buffer (from its bundle cache or one bag read), judges an arriving
// element's lateness, emits the rows it completes (EmitImmediate,
// EmitRetract), appends it to the bag and moves the key's timer; a firing
// expires elements, emits anchors' rows (EmitFinal) and fates, and
// rewrites the bag.

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/timertag"
)

func init() {
	register.DoFn10x1[context.Context, beam.Window, beam.EventTime, state.Provider, timers.Provider, beam.X, raw.Encoded,
		func(beam.EventTime, beam.X, Row), func(beam.EventTime, beam.X, raw.Encoded), func(beam.EventTime, beam.X, raw.FateRecord), error](&Fn{})
	register.Emitter3[beam.EventTime, beam.X, Row]()
	register.Emitter3[beam.EventTime, beam.X, raw.Encoded]()
	register.Emitter3[beam.EventTime, beam.X, raw.FateRecord]()
}

// The kinds of a Row, numbered as package join's Kind.
const (
	KindRow     uint8 = 0 // join.KindPair
	KindRetract uint8 = 2 // join.KindRetract
)

// Row is a row before its values are decoded: bit i of Present says
// whether input i has an element in it, Times[i] and Values[i] are that
// element's time and encoded value.
type Row struct {
	Kind    uint8
	Present uint64
	Times   []int64
	Values  [][]byte
}

// rowOf is the row of elems (nil for an absent input).
func rowOf(kind uint8, elems []*Elem) Row {
	r := Row{Kind: kind, Times: make([]int64, len(elems)), Values: make([][]byte, len(elems))}
	for i, e := range elems {
		if e != nil {
			r.Present |= 1 << i
			r.Times[i], r.Values[i] = e.Time, e.Value
		}
	}
	return r
}

// Config is a join's configuration, as package join derives it from its
// options.
type Config struct {
	Rules Rules
	// CleanupEvery groups cleanups: a key's timer fires CleanupEvery less
	// a millisecond after its earliest expiry (milliseconds, at least 1).
	CleanupEvery int64
	// Horizon is how long (ms of event time) a key that holds only its
	// progress keeps it (join.ProgressHorizon).
	Horizon int64
	// Fates makes the join emit each element's fate.
	Fates bool
	// Key encodes keys, to name them in the bundle cache.
	Key coders.Element
	// NoCache turns the bundle cache off (tests), and with it
	// write-behind; NoWriteBehind turns write-behind off alone: every
	// arrival a state append of its own (benchmarks).
	NoCache       bool
	NoWriteBehind bool
}

// Fn is the multi-way join's stateful DoFn. An arrival costs one read the
// first time the bundle sees its key, and the key's arrivals in a bundle
// one bag append in all (write-behind: appendPending, flush); a firing a
// read (unless cached), a clear and an append.
type Fn struct {
	Config  Config
	Buffer  state.Bag[[]byte]
	Cleanup timers.EventTime

	cache map[string]*keyState
	c     *counters
}

// keyState is one key's buffer as this instance knows it, and where its
// timer is.
type keyState struct {
	b     *Buffer
	timer timer
	// pending is the chunk of the key's arrivals in the bundle that is not
	// yet written, and sp the state provider to write it with (one of the
	// key's elements' in the bundle): it is written as one append when the
	// bundle finishes or the cache starts again (flush), and dropped when
	// a firing rewrites or clears the bag, which then holds what it says.
	// Within the bundle only this instance reads the key, from the cache;
	// the runner commits a bundle's state writes together (as the interval
	// join's write-behind: docs/design/interval.md).
	pending []byte
	sp      state.Provider
}

// NewFn is the join's DoFn for cfg.
func NewFn(cfg Config) *Fn {
	return &Fn{Config: cfg, Buffer: state.MakeBagState[[]byte]("buffer"), Cleanup: timers.InEventTime("cleanup")}
}

// Setup rebuilds the key coder and the counters.
func (f *Fn) Setup() error {
	f.c = newCounters(len(f.Config.Rules.Inputs))
	return f.Config.Key.Setup()
}

// StartBundle drops the bundle cache, and what a failed bundle left
// unwritten in it: a key's state may have changed on another worker since
// the last bundle.
func (f *Fn) StartBundle(func(beam.EventTime, beam.X, Row), func(beam.EventTime, beam.X, raw.Encoded), func(beam.EventTime, beam.X, raw.FateRecord)) {
	f.cache = nil
}

// FinishBundle writes the keys' pending arrivals (flush) and drops the
// bundle cache.
func (f *Fn) FinishBundle(func(beam.EventTime, beam.X, Row), func(beam.EventTime, beam.X, raw.Encoded), func(beam.EventTime, beam.X, raw.FateRecord)) error {
	err := f.flush()
	f.cache = nil
	return err
}

// flush writes every cached key's pending arrivals, one append a key.
func (f *Fn) flush() error {
	for _, ks := range f.cache {
		if len(ks.pending) == 0 {
			continue
		}
		if err := f.Buffer.Add(ks.sp, ks.pending); err != nil {
			return fmt.Errorf("beamjoin: join.Multi: writing state: %w", err)
		}
		ks.pending, ks.sp = nil, nil
	}
	return nil
}

// maxCached is how many keys the bundle cache holds before it starts
// again.
const maxCached = 4096

// load returns the key's state: from the bundle cache if this instance
// saw the key earlier in the bundle (its state can only have changed
// through this instance since), else read from the bag.
func (f *Fn) load(sp state.Provider, w beam.Window, key beam.X) (*keyState, string, error) {
	var ck string
	if !f.Config.NoCache {
		k, err := f.Config.Key.Encode(key)
		if err != nil {
			return nil, "", err
		}
		ck = string(k) + "\x00" + strconv.FormatInt(int64(w.MaxTimestamp()), 10)
		if ks, ok := f.cache[ck]; ok {
			return ks, ck, nil
		}
	}
	chunks, _, err := f.Buffer.Read(sp)
	if err != nil {
		return nil, "", fmt.Errorf("beamjoin: join.Multi: reading state: %w", err)
	}
	b, err := decode(len(f.Config.Rules.Inputs), chunks)
	if err != nil {
		return nil, "", err
	}
	ks := &keyState{b: b, timer: f.Config.timerFor(b)}
	if !f.Config.NoCache {
		if f.cache == nil || len(f.cache) >= maxCached {
			if err := f.flush(); err != nil {
				return nil, "", err
			}
			f.cache = map[string]*keyState{}
		}
		f.cache[ck] = ks
	}
	return ks, ck, nil
}

// ProcessElement joins an arriving element and buffers it, or reports it
// late.
func (f *Fn) ProcessElement(ctx context.Context, w beam.Window, et beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, in raw.Encoded,
	emit func(beam.EventTime, beam.X, Row), emitLate func(beam.EventTime, beam.X, raw.Encoded), emitFate func(beam.EventTime, beam.X, raw.FateRecord)) error {
	r := f.Config.Rules
	i := int(in.Side)
	if i >= len(r.Inputs) {
		return fmt.Errorf("beamjoin: join.Multi: element of input %d, the join has %d", i+1, len(r.Inputs))
	}
	ks, ck, err := f.load(sp, w, key)
	if err != nil {
		return err
	}
	f.c.in[i].Inc(ctx, 1)
	ts := et.Milliseconds()
	if r.IsLate(i, ts, ks.b.Progress) {
		f.fate(ctx, key, i, ts, match.Late, emitFate)
		emitLate(et, key, in)
		return nil
	}
	e := &Elem{Input: i, Time: ts, Value: in.Value}
	if r.Emit != match.Final {
		f.arrived(ctx, ks.b, key, e, emit)
	}
	ks.b.Add(e)
	if ck != "" && !f.Config.NoWriteBehind {
		ks.pending, ks.sp = appendElem(ks.pending, e), sp
	} else if err := f.Buffer.Add(sp, appendElem(nil, e)); err != nil {
		return fmt.Errorf("beamjoin: join.Multi: writing state: %w", err)
	}
	f.c.bufferedPerKey.Update(ctx, int64(ks.b.Len()))
	before := ks.timer
	ks.timer = f.Config.timerFor(ks.b)
	f.moveTimer(tp, before, ks.timer)
	return nil
}

// arrived emits the rows that e completes (EmitImmediate, EmitRetract):
// for an anchor, all its rows; for an element of input i, for each
// buffered anchor it matches, the rows with e at i. Under EmitRetract the
// rows an anchor had with no element at i, an optional input, are
// withdrawn first when e is its first: what the join has emitted for an
// anchor nets, after each arrival, to the rows of what is buffered.
func (f *Fn) arrived(ctx context.Context, b *Buffer, key beam.X, e *Elem, emit func(beam.EventTime, beam.X, Row)) {
	r := f.Config.Rules
	out := func(kind uint8) func([]*Elem) {
		return func(row []*Elem) {
			emit(beam.EventTime(RowTime(row)), key, rowOf(kind, row))
			if kind == KindRetract {
				f.c.retractions.Inc(ctx, 1)
			} else {
				f.c.rows.Inc(ctx, 1)
			}
		}
	}
	if e.Input == Anchor {
		r.Rows(e, r.Partners(b, e), out(KindRow))
		return
	}
	in := r.Inputs[e.Input]
	for _, a := range b.Between(Anchor, e.Time-in.Upper, e.Time-in.Lower) {
		p := r.Partners(b, a)
		if r.Emit == match.Retract && in.Optional && len(p[e.Input]) == 0 {
			r.Rows(a, p, out(KindRetract))
		}
		p[e.Input] = []*Elem{e}
		r.Rows(a, p, out(KindRow))
	}
}

// OnTimer is a firing of the key's cleanup timer: it expires what is due
// (emitting rows under EmitFinal, and fates), or forgets a key that holds
// only its progress. A firing for an earlier time than the state implies
// is stale (the key was cleaned up since, or its timer moved): it sets
// the timer again and changes nothing.
func (f *Fn) OnTimer(ctx context.Context, w beam.Window, et beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, tc timers.Context,
	emit func(beam.EventTime, beam.X, Row), _ func(beam.EventTime, beam.X, raw.Encoded), emitFate func(beam.EventTime, beam.X, raw.FateRecord)) error {
	ks, ck, err := f.load(sp, w, key)
	if err != nil {
		return err
	}
	cur := ks.timer
	if timertag.Read(tc, et).Stale(cur.Set, cur.Fire) {
		f.c.staleFirings.Inc(ctx, 1)
		f.moveTimer(tp, timer{}, cur)
		return nil
	}
	t := cur.Fire
	if ks.b.Len() > 0 {
		f.expire(ctx, ks.b, key, t, emit, emitFate)
		ks.b.Progress = max(ks.b.Progress, t)
	}
	ks.pending, ks.sp = nil, nil // the clear or the rewrite below holds them
	if ks.b.Len() == 0 && f.Config.forgetAt(ks.b.Progress) <= t {
		if err := f.Buffer.Clear(sp); err != nil {
			return fmt.Errorf("beamjoin: join.Multi: clearing state: %w", err)
		}
		ks.b, ks.timer = NewBuffer(len(f.Config.Rules.Inputs)), timer{}
		if ck != "" {
			delete(f.cache, ck)
		}
		return nil
	}
	if err := f.Buffer.Clear(sp); err != nil {
		return fmt.Errorf("beamjoin: join.Multi: clearing state: %w", err)
	}
	if err := f.Buffer.Add(sp, encode(ks.b)); err != nil {
		return fmt.Errorf("beamjoin: join.Multi: writing state: %w", err)
	}
	ks.timer = f.Config.timerFor(ks.b)
	f.moveTimer(tp, timer{}, ks.timer)
	return nil
}

// expire removes from b what expires by t: anchors first, each emitting
// its rows under EmitFinal and marking its partners matched if it has a
// row, then the other inputs' elements, whose partners all expired
// before or with them. Each gets its fate.
func (f *Fn) expire(ctx context.Context, b *Buffer, key beam.X, t int64, emit func(beam.EventTime, beam.X, Row), emitFate func(beam.EventTime, beam.X, raw.FateRecord)) {
	r := f.Config.Rules
	for i := range b.By {
		n := 0
		for _, e := range b.By[i] {
			if r.Expiry(i, e.Time) > t {
				break
			}
			n++
			var fate match.Fate
			if i == Anchor {
				p := r.Partners(b, e)
				rows := r.Rows(e, p, func(row []*Elem) {
					if r.Emit == match.Final {
						emit(beam.EventTime(RowTime(row)), key, rowOf(KindRow, row))
					}
				})
				if r.Emit == match.Final {
					f.c.rows.Inc(ctx, int64(rows))
				}
				if rows > 0 {
					for _, ps := range p[1:] {
						for _, x := range ps {
							x.Matched = true
						}
					}
				}
				fate = r.AnchorFate(p)
			} else if e.Matched {
				fate = match.Matched
			} else {
				fate = match.Expired
			}
			f.fate(ctx, key, i, e.Time, fate, emitFate)
		}
		b.By[i] = b.By[i][n:]
	}
}

// fate counts the fate of an element of input i at ts, and emits it when
// the join tracks fates.
func (f *Fn) fate(ctx context.Context, key beam.X, i int, ts int64, fate match.Fate, emitFate func(beam.EventTime, beam.X, raw.FateRecord)) {
	f.c.fate[i][fate].Inc(ctx, 1)
	if f.Config.Fates {
		emitFate(beam.EventTime(ts), key, raw.FateRecord{Side: uint8(i), Outcome: uint8(raw.OutcomeOf(fate))})
	}
}
