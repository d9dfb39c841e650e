// This file holds Read's de-duplication: a message whose ID the read has
// already emitted within the de-duplication window is dropped and counted.

package pubsubio

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn1x2[Message, string, Message](&dedupKeyFn{})
	register.DoFn7x1[context.Context, beam.EventTime, state.Provider, timers.Provider, string, Message, func(Message), error](&dedupFn{})
	register.Emitter1[Message]()
}

// dedupKeyFn keys a message by the ID it is de-duplicated by: the value of
// its ID attribute when the read has one and the message carries it, its
// message ID otherwise. The two kinds of key never meet ("a:" and "m:"),
// so an attribute value that happens to equal another message's ID does
// not drop it.
type dedupKeyFn struct {
	IDAttribute string
}

func (f *dedupKeyFn) ProcessElement(m Message) (string, Message) {
	if f.IDAttribute != "" {
		if id := m.Attributes[f.IDAttribute]; id != "" {
			return "a:" + id, m
		}
	}
	return "m:" + m.ID, m
}

// dedupFn emits the first message of each ID and drops the others, counting
// them (NAME_duplicates). It remembers an ID in Beam state, per key, so the
// verdict does not depend on which worker sees the message: the runner
// keeps the memory, and moves it with the key. The memory of an ID is
// cleared by an event-time timer once the watermark passes the event time
// of its first message plus the window; an ID seen again after that is
// emitted again. Each first message costs a state read and an append and
// sets a timer; a duplicate costs the read.
type dedupFn struct {
	Name         string
	WindowMillis int64

	// Seen holds the event time of the first message of the key's ID, in
	// epoch milliseconds; empty when the ID is not remembered.
	Seen state.Bag[int64]
	// Forget clears Seen when the window has passed.
	Forget timers.EventTime

	duplicates beam.Counter
}

func newDedupFn(name string, window time.Duration) *dedupFn {
	return &dedupFn{
		Name:         name,
		WindowMillis: window.Milliseconds(),
		Seen:         state.MakeBagState[int64]("seen"),
		Forget:       timers.InEventTime("forget"),
	}
}

func (f *dedupFn) Setup() {
	f.duplicates = beam.NewCounter("beamjoin", f.Name+"_duplicates")
}

func (f *dedupFn) ProcessElement(ctx context.Context, et beam.EventTime, sp state.Provider, tp timers.Provider, _ string, m Message, emit func(Message)) error {
	seen, ok, err := f.Seen.Read(sp)
	if err != nil {
		return err
	}
	if ok && len(seen) > 0 {
		f.duplicates.Inc(ctx, 1)
		return nil
	}
	if err := f.Seen.Add(sp, et.Milliseconds()); err != nil {
		return err
	}
	forget := min(int64(et)+f.WindowMillis, int64(mtime.EndOfGlobalWindowTime))
	f.Forget.Set(tp, mtime.Time(forget).ToTime())
	emit(m)
	return nil
}

func (f *dedupFn) OnTimer(ctx context.Context, _ beam.EventTime, sp state.Provider, _ timers.Provider, _ string, _ timers.Context, _ func(Message)) error {
	return f.Seen.Clear(sp)
}

// deduplicate drops the messages of msgs whose ID an earlier message had
// within window (see dedupFn).
func deduplicate(s beam.Scope, name, idAttribute string, window time.Duration, msgs beam.PCollection) beam.PCollection {
	s = s.Scope("pubsubio.Deduplicate")
	keyed := beam.ParDo(s, &dedupKeyFn{IDAttribute: idAttribute}, msgs)
	return beam.ParDo(s, newDedupFn(name, window), keyed)
}
