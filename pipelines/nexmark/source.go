package nexmark

// This file holds the Beam sources of generated events: Read, bounded, and
// ReadStream, unbounded with a watermark.

import (
	"fmt"
	"math"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*Person)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Auction)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Bid)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*offsetrange.Restriction)(nil)).Elem())
	register.DoFn4x0[offsetrange.Restriction, func(beam.EventTime, Person), func(beam.EventTime, Auction), func(beam.EventTime, Bid)](&generateFn{})
	register.DoFn6x1[*streamEstimator, *sdf.LockRTracker, []byte, func(beam.EventTime, Person), func(beam.EventTime, Auction), func(beam.EventTime, Bid), sdf.ProcessContinuation](&streamFn{})
	register.Emitter2[beam.EventTime, Person]()
	register.Emitter2[beam.EventTime, Auction]()
	register.Emitter2[beam.EventTime, Bid]()
}

// Events are the three streams of a generated run, each element
// timestamped with its dateTime: Persons a PCollection<Person>, Auctions a
// PCollection<Auction>, Bids a PCollection<Bid>.
type Events struct {
	Persons, Auctions, Bids beam.PCollection
	// Bounded says that the events are bounded PCollections (Read), so
	// that the queries may join them on join.Bounded's path, as a
	// pipeline author would for bounded input.
	Bounded bool
}

// shardEvents is how many events one bounded shard generates: small enough
// that two cores share a run, large enough that a shard's bundle overhead
// does not show.
const shardEvents = 50_000

// Read generates the events of c as bounded PCollections, in shards that
// the runner may spread over its workers: exactly the events Generate(c)
// returns, in no particular order.
//
//	ev := nexmark.Read(s, nexmark.DefaultConfig(1, 1_000_000))
//
// Read panics if c.Check fails.
func Read(s beam.Scope, c Config) Events {
	if err := c.Check(); err != nil {
		panic(err)
	}
	s = s.Scope("nexmark.Read")
	c = c.withDefaults()
	var shards []offsetrange.Restriction
	for start := int64(0); start < c.Events; start += shardEvents {
		shards = append(shards, offsetrange.Restriction{Start: start, End: min(start+shardEvents, c.Events)})
	}
	if len(shards) == 0 {
		shards = []offsetrange.Restriction{{}}
	}
	ranges := beam.Reshuffle(s, beam.CreateList(s, shards))
	p, a, b := beam.ParDo3(s, &generateFn{Config: c}, ranges)
	return Events{Persons: p, Auctions: a, Bids: b, Bounded: true}
}

// generateFn emits the events of one shard.
type generateFn struct {
	Config Config
}

func (f *generateFn) ProcessElement(r offsetrange.Restriction, person func(beam.EventTime, Person), auction func(beam.EventTime, Auction), bid func(beam.EventTime, Bid)) {
	for n := r.Start; n < r.End; n++ {
		emitEvent(f.Config.At(n), person, auction, bid)
	}
}

func emitEvent(e Event, person func(beam.EventTime, Person), auction func(beam.EventTime, Auction), bid func(beam.EventTime, Bid)) {
	t := mtime.FromMilliseconds(e.Time())
	switch {
	case e.Person != nil:
		person(t, *e.Person)
	case e.Auction != nil:
		auction(t, *e.Auction)
	default:
		bid(t, *e.Bid)
	}
}

// ReadStream generates the events of c as unbounded PCollections, in
// event-number order, with a watermark: after event n it reports the
// dateTime of event n+1, which no later event precedes, so no event is
// ever behind the watermark. It reports once per step events (at least
// one; zero means one second of event time, c.Rate events) and the
// watermark goes to the end of time after the last event, so a run of
// c.Events events ends.
//
//	ev := nexmark.ReadStream(s, nexmark.DefaultConfig(1, 1_000_000), 0)
//
// ReadStream panics if c.Check fails or step is negative.
func ReadStream(s beam.Scope, c Config, step int64) Events {
	if err := c.Check(); err != nil {
		panic(err)
	}
	if step < 0 {
		panic(fmt.Sprintf("nexmark: ReadStream step = %d, want >= 0", step))
	}
	s = s.Scope("nexmark.ReadStream")
	c = c.withDefaults()
	if step == 0 {
		step = max(1, int64(math.Ceil(c.Rate)))
	}
	p, a, b := beam.ParDo3(s, &streamFn{Config: c, Step: step}, beam.Impulse(s))
	return Events{Persons: p, Auctions: a, Bids: b}
}

// streamFn is the unbounded source: a splittable DoFn over the event
// numbers 0..Events-1, one restriction (the stream is ordered), that
// checkpoints after every Step events so that the runner sees its
// watermark move.
type streamFn struct {
	Config Config
	Step   int64
}

func (f *streamFn) CreateInitialRestriction(_ []byte) offsetrange.Restriction {
	return offsetrange.Restriction{Start: 0, End: f.Config.Events}
}

func (f *streamFn) SplitRestriction(_ []byte, r offsetrange.Restriction) []offsetrange.Restriction {
	return []offsetrange.Restriction{r}
}

func (f *streamFn) RestrictionSize(_ []byte, r offsetrange.Restriction) float64 { return r.Size() }

func (f *streamFn) CreateTracker(r offsetrange.Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(offsetrange.NewTracker(r))
}

func (f *streamFn) InitialWatermarkEstimatorState(_ beam.EventTime, _ offsetrange.Restriction, _ []byte) int64 {
	return int64(mtime.MinTimestamp)
}

func (f *streamFn) CreateWatermarkEstimator(wm int64) *streamEstimator {
	e := &streamEstimator{}
	e.wm.Store(wm)
	return e
}

func (f *streamFn) WatermarkEstimatorState(e *streamEstimator) int64 { return e.wm.Load() }

func (f *streamFn) ProcessElement(we *streamEstimator, rt *sdf.LockRTracker, _ []byte,
	person func(beam.EventTime, Person), auction func(beam.EventTime, Auction), bid func(beam.EventTime, Bid)) sdf.ProcessContinuation {
	r := rt.GetRestriction().(offsetrange.Restriction)
	end := min(r.End, r.Start+f.Step)
	for n := r.Start; n < end; n++ {
		if !rt.TryClaim(n) {
			return sdf.StopProcessing()
		}
		emitEvent(f.Config.At(n), person, auction, bid)
	}
	if end >= r.End {
		we.wm.Store(int64(mtime.MaxTimestamp))
		return sdf.StopProcessing()
	}
	we.wm.Store(f.Config.timeOf(end))
	return sdf.ResumeProcessingIn(0)
}

// streamEstimator is the source's watermark: the dateTime of the next
// event to emit. The SDK reads it from another goroutine.
type streamEstimator struct {
	wm atomic.Int64 // epoch ms
}

func (e *streamEstimator) CurrentWatermark() time.Time {
	return mtime.Time(e.wm.Load()).ToTime()
}
