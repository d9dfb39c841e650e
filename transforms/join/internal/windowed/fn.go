package windowed

// This file holds the stateful DoFn of the late-counting path of Window
// and CoGroup, windowedFn: it keeps a key's values of both sides in one
// bag, fires each window with one event-time timer family, and reports
// late elements. It only moves data between its state, its timer and
// package panes, which decides everything. Also here: its records.

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/internal/panes"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/timertag"
)

func init() {
	register.DoFn9x1[context.Context, beam.EventTime, state.Provider, timers.Provider, beam.X, raw.Encoded,
		func(beam.EventTime, beam.X, PaneRecord), func(beam.EventTime, beam.X, MissedRecord), func(beam.EventTime, beam.X, raw.FateRecord), error](&windowedFn{})
	register.Emitter3[beam.EventTime, beam.X, PaneRecord]()
	register.Emitter3[beam.EventTime, beam.X, MissedRecord]()
}

// PaneRecord is one firing of one window of a key: its entries, encoded by
// panes.EncodePane, with their values encoded by their input's coder. Its
// element timestamp is the window's max timestamp.
type PaneRecord struct {
	Start, End int64
	Entries    []byte
}

// MissedRecord is an element and a window it came too late for. Its
// element timestamp is the element's.
type MissedRecord struct {
	Side       uint8
	Value      []byte
	Start, End int64
}

// windowOutcomes are the outcomes of a window join's or a cogroup's
// elements.
var windowOutcomes = []raw.Outcome{raw.OutcomeOf(match.Matched), raw.OutcomeOf(match.Unmatched), raw.OutcomeOf(match.Expired), raw.OutcomeOf(match.Late), raw.Grouped}

// outcomeCounters are the window join's and cogroup's counters of each
// outcome per side ("left_matched", "left_late"); the elements in are
// counted by raw.Count.In.
var outcomeCounters = func() (c [2]map[raw.Outcome]beam.Counter) {
	for side, name := range raw.SideName {
		c[side] = map[raw.Outcome]beam.Counter{}
		for _, o := range windowOutcomes {
			c[side][o] = beam.NewCounter(raw.Namespace, name+"_"+o.String())
		}
	}
	return c
}()

// windowedFn is the stateful DoFn of Window (Join set) and CoGroup, on both
// inputs tagged with their side, keyed, in the global window. Each key's
// entries live in Buffer, as chunks (see package panes); Fire is its one
// timer family, whose tag is the firing time in milliseconds, so that a
// firing knows what it is for and every timer set for a time holds the
// output watermark at the same place (just before it).
//
// An arrival costs one bag append and a timer set. A firing costs a bag
// read, and, when it emits or expires anything, a clear and an append of
// the rewritten state.
type windowedFn struct {
	Rules panes.Rules
	// Join: a window join of join type Type, whose fates are matched,
	// unmatched or expired; otherwise a cogroup, whose fate is grouped.
	Join bool
	Type match.Type
	// Keep makes panes carry every value of their window, not only the new
	// ones: a window join pairs new values with old ones, and an
	// accumulating cogroup repeats them.
	Keep bool
	// Fates makes the DoFn emit a fateRecord per element.
	Fates bool

	Buffer state.Bag[[]byte]
	Fire   timers.EventTime
}

// ProcessElement only stores the element and makes sure its first window
// will fire: whether it is late is judged at that firing, against the
// key's progress, which this saves reading.
func (f *windowedFn) ProcessElement(ctx context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, in raw.Encoded,
	_ func(beam.EventTime, beam.X, PaneRecord), _ func(beam.EventTime, beam.X, MissedRecord), _ func(beam.EventTime, beam.X, raw.FateRecord)) error {
	raw.Count.In[in.Side].Inc(ctx, 1)
	e := panes.NewEntry(match.Side(in.Side), et.Milliseconds(), in.Value)
	if err := f.Buffer.Add(sp, panes.AppendEntry(nil, e)); err != nil {
		return fmt.Errorf("beamjoin: writing window state: %w", err)
	}
	f.setTimer(tp, f.Rules.FirstFiring(e))
	return nil
}

func (f *windowedFn) OnTimer(ctx context.Context, _ beam.EventTime, sp state.Provider, tp timers.Provider, key beam.X, tc timers.Context,
	emitPane func(beam.EventTime, beam.X, PaneRecord), emitMissed func(beam.EventTime, beam.X, MissedRecord), emitFate func(beam.EventTime, beam.X, raw.FateRecord)) error {
	at, err := strconv.ParseInt(tc.Tag, 10, 64)
	if err != nil {
		return fmt.Errorf("beamjoin: window timer with tag %q: %w", tc.Tag, err)
	}
	chunks, _, err := f.Buffer.Read(sp)
	if err != nil {
		return fmt.Errorf("beamjoin: reading window state: %w", err)
	}
	st, err := panes.Decode(chunks)
	if err != nil {
		return err
	}
	fr := f.Rules.Fire(&st, at)
	for _, m := range fr.Missed {
		emitMissed(beam.EventTime(m.Entry.Time), key, MissedRecord{Side: uint8(m.Entry.Side), Value: m.Entry.Value, Start: m.Window.Start, End: m.Window.End})
	}
	for _, e := range fr.Late {
		f.leave(ctx, key, e, raw.OutcomeOf(match.Late), emitFate)
	}
	for _, p := range fr.Panes {
		if !f.Keep {
			p = newOnly(p)
		}
		emitPane(beam.EventTime(p.Window.MaxTimestamp()), key, PaneRecord{Start: p.Window.Start, End: p.Window.End, Entries: panes.EncodePane(p)})
	}
	for _, e := range fr.Done {
		f.leave(ctx, key, e, f.outcomeOf(e), emitFate)
	}
	switch {
	case fr.Forget:
		if err := f.Buffer.Clear(sp); err != nil {
			return fmt.Errorf("beamjoin: clearing window state: %w", err)
		}
		return nil
	case fr.Write:
		if err := f.Buffer.Clear(sp); err != nil {
			return fmt.Errorf("beamjoin: clearing window state: %w", err)
		}
		if err := f.Buffer.Add(sp, st.Encode()); err != nil {
			return fmt.Errorf("beamjoin: writing window state: %w", err)
		}
	}
	if fr.Next != panes.NoTime {
		f.setTimer(tp, fr.Next)
	}
	return nil
}

// setTimer sets the timer for time at (milliseconds). Its tag is its
// time, so timers for different times coexist, and it holds the output
// watermark just before at: the max timestamp of a window that fires then.
func (f *windowedFn) setTimer(tp timers.Provider, at int64) {
	timertag.Arm(&f.Fire, tp, strconv.FormatInt(at, 10), at, at-1)
}

// outcomeOf is the outcome of an entry whose windows have all expired.
func (f *windowedFn) outcomeOf(e panes.Entry) raw.Outcome {
	switch {
	case !f.Join:
		return raw.Grouped
	case e.Matched:
		return raw.OutcomeOf(match.Matched)
	case f.Type.Outer(e.Side):
		return raw.OutcomeOf(match.Unmatched)
	}
	return raw.OutcomeOf(match.Expired)
}

// leave counts an entry's outcome and, if asked, reports it.
func (f *windowedFn) leave(ctx context.Context, key beam.X, e panes.Entry, o raw.Outcome, emitFate func(beam.EventTime, beam.X, raw.FateRecord)) {
	outcomeCounters[e.Side][o].Inc(ctx, 1)
	if f.Fates {
		emitFate(beam.EventTime(e.Time), key, raw.FateRecord{Side: uint8(e.Side), Outcome: uint8(o)})
	}
}

// newOnly is p without its old entries: a discarding cogroup's pane.
func newOnly(p panes.Pane) panes.Pane {
	q := panes.Pane{Window: p.Window}
	for i, e := range p.Entries {
		if p.New[i] {
			q.Entries, q.New = append(q.Entries, e), append(q.New, true)
		}
	}
	return q
}
