package asof

// This file holds the as-of join's stateful DoFn: per key, it reads the
// key's state (state.go), lets the rules (rules.go) decide, emits what
// they say, and writes the state back and moves the key's one timer.

import (
	"context"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/timertag"
)

func init() {
	register.DoFn9x1[context.Context, beam.Window, beam.EventTime, state.Provider, timers.Provider, beam.X, raw.Encoded,
		func(beam.EventTime, beam.X, raw.Record), func(beam.EventTime, beam.X, raw.Encoded), error](&asofFn{})
}

// counters are the as-of join's own metrics, beside the counters it
// shares with Interval (elements in, late, pairs and unmatched out,
// retractions, stale firings).
var counters = struct {
	superseded, dropped beam.Counter
	versionsPerKey      beam.Distribution
}{
	superseded:     beam.NewCounter(raw.Namespace, "asof_versions_superseded"),
	dropped:        beam.NewCounter(raw.Namespace, "asof_versions_dropped"),
	versionsPerKey: beam.NewDistribution(raw.Namespace, "asof_versions_per_key"),
}

// asofFn is the as-of join's stateful DoFn. An arrival costs two state
// calls (read the bag, append a chunk), a late one one (the read); a
// timer firing three (read, clear, append the rewritten key).
type asofFn struct {
	Rules Rules
	State state.Bag[[]byte]
	Timer timers.EventTime
}

func (f *asofFn) read(sp state.Provider) (*keyState, error) {
	chunks, _, err := f.State.Read(sp)
	if err != nil {
		return nil, fmt.Errorf("beamjoin: join.AsOf: reading state: %w", err)
	}
	return decodeKey(f.Rules, chunks)
}

func (f *asofFn) ProcessElement(ctx context.Context, _ beam.Window, et beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, in raw.Encoded,
	emit func(beam.EventTime, beam.X, raw.Record), emitLate func(beam.EventTime, beam.X, raw.Encoded)) error {
	if in.Side > uint8(match.Right) {
		return fmt.Errorf("beamjoin: join.AsOf: element of unknown side %d", in.Side)
	}
	side := match.Side(in.Side)
	raw.Count.In[side].Inc(ctx, 1)
	k, err := f.read(sp)
	if err != nil {
		return err
	}
	e := entry{Time: et.Milliseconds(), Value: in.Value}
	if k.late(e.Time) {
		raw.Count.Fate[side][match.Late].Inc(ctx, 1)
		emitLate(et, key, in)
		return nil
	}
	before := f.Rules.timer(k)
	var chunk []byte
	if side == match.Left {
		if f.Rules.Retract {
			v, ok := f.Rules.match(k.Versions, e.Time)
			f.emitRecord(ctx, key, e, v, ok, emit)
		}
		k.Pending = append(k.Pending, e)
		chunk = appendRecord(nil, recLeft, e)
	} else {
		kept, changes := k.addVersion(f.Rules, e)
		if !kept {
			counters.superseded.Inc(ctx, 1)
		} else {
			chunk = appendRecord(nil, recVersion, e)
		}
		for _, c := range changes {
			f.emitRetraction(ctx, key, c, emit)
			f.emitRecord(ctx, key, c.Left, c.New, true, emit)
		}
	}
	if chunk != nil {
		if err := f.State.Add(sp, chunk); err != nil {
			return fmt.Errorf("beamjoin: join.AsOf: writing state: %w", err)
		}
	}
	counters.versionsPerKey.Update(ctx, int64(len(k.Versions)))
	f.moveTimer(tp, before, f.Rules.timer(k), false, "")
	return nil
}

func (f *asofFn) OnTimer(ctx context.Context, _ beam.Window, et beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, tc timers.Context,
	emit func(beam.EventTime, beam.X, raw.Record), _ func(beam.EventTime, beam.X, raw.Encoded)) error {
	k, err := f.read(sp)
	if err != nil {
		return err
	}
	cur := f.Rules.timer(k)
	fd := timertag.Read(tc, et)
	if fd.Stale(cur.Set, cur.Fire) {
		// Stale: the key moved on since the timer was set (see
		// joiner.firing, timertag.Fired.Stale). The runner may have taken
		// this firing for the key's timer, so set that again.
		raw.Count.StaleFirings.Inc(ctx, 1)
		f.moveTimer(tp, timertag.Timer{}, cur, false, "")
		return nil
	}
	at := cur.Fire
	if fd.OK && fd.At > at {
		at = fd.At // the watermark has passed the later time too
	}
	if k.forgettable() {
		// Only the progress is left, and its horizon is up: forget the
		// key. An element behind the watermark that comes later finds no
		// progress and is joined as new (ProgressHorizon).
		if err := f.State.Clear(sp); err != nil {
			return fmt.Errorf("beamjoin: join.AsOf: clearing state: %w", err)
		}
		return nil
	}
	final, dropped := k.fire(f.Rules, at)
	if !f.Rules.Retract {
		for _, x := range final {
			f.emitRecord(ctx, key, x.Left, x.Version, x.Matched, emit)
		}
	}
	if dropped > 0 {
		counters.dropped.Inc(ctx, int64(dropped))
	}
	if err := f.State.Clear(sp); err != nil {
		return fmt.Errorf("beamjoin: join.AsOf: clearing state: %w", err)
	}
	if err := f.State.Add(sp, encodeKey(k)); err != nil {
		return fmt.Errorf("beamjoin: join.AsOf: writing state: %w", err)
	}
	counters.versionsPerKey.Update(ctx, int64(len(k.Versions)))
	f.moveTimer(tp, cur, f.Rules.timer(k), true, fd.Tag)
	return nil
}

// emitRecord emits the record of left element l: its pair with version v
// if matched, else its unmatched record under LeftOuter. Either carries
// l's time, which the key's timer holds the output watermark at.
func (f *asofFn) emitRecord(ctx context.Context, key beam.X, l, v entry, matched bool, emit func(beam.EventTime, beam.X, raw.Record)) {
	if r, ok := recordOf(f.Rules, raw.Pair, l, v, matched); ok {
		emit(beam.EventTime(l.Time), key, r)
		if matched {
			raw.Count.Pairs.Inc(ctx, 1)
		} else {
			raw.Count.UnmatchedOut[match.Left].Inc(ctx, 1)
		}
	}
}

// emitRetraction withdraws c's earlier record, if one was emitted.
func (f *asofFn) emitRetraction(ctx context.Context, key beam.X, c change, emit func(beam.EventTime, beam.X, raw.Record)) {
	if r, ok := recordOf(f.Rules, raw.Retract, c.Left, c.Old, c.HadOld); ok {
		emit(beam.EventTime(c.Left.Time), key, r)
		raw.Count.Retractions.Inc(ctx, 1)
	}
}

// recordOf is the record of kind (raw.Pair, or raw.Retract to withdraw
// one) for left element l: with version v if matched, else l alone, which
// only LeftOuter reports (ok false otherwise), as raw.Unmatched (or
// raw.Retract).
func recordOf(r Rules, kind raw.Kind, l, v entry, matched bool) (raw.Record, bool) {
	if matched {
		return raw.Record{Kind: kind, HasLeft: true, HasRight: true, LeftTime: l.Time, RightTime: v.Time, Left: l.Value, Right: v.Value}, true
	}
	if !r.Outer {
		return raw.Record{}, false
	}
	if kind == raw.Pair {
		kind = raw.Unmatched
	}
	return raw.Record{Kind: kind, HasLeft: true, LeftTime: l.Time, Left: l.Value}, true
}

// moveTimer moves the key's timer from where it was (before) to where its
// state now puts it (after). fired says that a timer tagged firedTag has
// just fired, and so is set no more. As for Interval (joiner.moveTimer), a
// timer is tagged with its hold and firing time, and a change of tag
// clears the old timer and sets a new one, for Prism's sake.
func (f *asofFn) moveTimer(tp timers.Provider, before, after timertag.Timer, fired bool, firedTag string) {
	timertag.Move(&f.Timer, tp, before, after, before.Set && !(fired && before.Tag() == firedTag))
}
