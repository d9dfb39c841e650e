package join_test

// The peer of the pipeline benchmarks: the interval join a Beam user would
// write by hand from the Beam blog's "Timely (and Stateful) Processing with
// Apache Beam" pattern, on the same generator and pacing. Two bag states,
// one per side; an arriving element reads the other side's bag, emits a
// pair for each partner within the bounds, appends itself to its own bag,
// and re-sets the key's one event-time timer to its expiry; the timer's
// firing clears both bags. Inner join only: no outer records, no allowed
// lateness, no watermark holds, no late output.
//
// It is written the way that costs it least: two state calls per element
// (one read, one append), and the timer set to the arriving element's own
// expiry, which is the latest one because the generator's elements arrive
// in time order per key (a join that kept the latest expiry in a Value
// state would pay a read and a write more per element). Its price is the
// buffer: a key whose elements keep coming less than the span apart keeps
// pushing its timer back, and buffers everything until its traffic pauses
// (BenchmarkSteadyKey shows it).

import (
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*handIn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*handEntry)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*handPair)(nil)).Elem())
	register.DoFn3x0[string, string, func(string, handIn)](&handTagFn{})
	register.Emitter2[string, handIn]()
	register.DoFn6x1[beam.EventTime, state.Provider, timers.Provider, string, handIn, func(beam.EventTime, handPair), error](&handJoinFn{})
	register.Emitter2[beam.EventTime, handPair]()
	register.DoFn1x0[handPair](&countHandPairsFn{})
}

// handIn is an element of either side, tagged with its side.
type handIn struct {
	Left  bool
	Value string
}

// handEntry is a buffered element: its event time (ms) and value.
type handEntry struct {
	Time  int64
	Value string
}

// handPair is the hand-written join's output: a matching pair.
type handPair struct {
	Key                 string
	Left, Right         string
	LeftTime, RightTime int64
}

// handTagFn tags one side's elements.
type handTagFn struct{ Left bool }

func (f *handTagFn) ProcessElement(k, v string, emit func(string, handIn)) {
	emit(k, handIn{Left: f.Left, Value: v})
}

// handJoinFn is the hand-written interval join: lower <= ts(right) -
// ts(left) <= upper, in milliseconds.
type handJoinFn struct {
	Lower, Upper int64
	LeftBuffer   state.Bag[handEntry]
	RightBuffer  state.Bag[handEntry]
	Expiry       timers.EventTime
}

func (f *handJoinFn) ProcessElement(et beam.EventTime, sp state.Provider, tp timers.Provider, key string, in handIn, emit func(beam.EventTime, handPair)) error {
	ts := et.Milliseconds()
	own, other, keep := &f.LeftBuffer, &f.RightBuffer, max(f.Upper, 0)
	if !in.Left {
		own, other, keep = &f.RightBuffer, &f.LeftBuffer, max(-f.Lower, 0)
	}
	partners, _, err := other.Read(sp)
	if err != nil {
		return err
	}
	for _, x := range partners {
		p := handPair{Key: key, Left: in.Value, LeftTime: ts, Right: x.Value, RightTime: x.Time}
		if !in.Left {
			p = handPair{Key: key, Left: x.Value, LeftTime: x.Time, Right: in.Value, RightTime: ts}
		}
		if d := p.RightTime - p.LeftTime; f.Lower <= d && d <= f.Upper {
			emit(beam.EventTime(max(p.LeftTime, p.RightTime)), p)
		}
	}
	if err := own.Add(sp, handEntry{Time: ts, Value: in.Value}); err != nil {
		return err
	}
	handBuffered.added(key)
	f.Expiry.Set(tp, time.UnixMilli(ts+keep+1))
	return nil
}

func (f *handJoinFn) OnTimer(sp state.Provider, _ timers.Provider, key string, _ timers.Context, _ func(beam.EventTime, handPair)) error {
	handBuffered.cleared(key)
	if err := f.LeftBuffer.Clear(sp); err != nil {
		return err
	}
	return f.RightBuffer.Clear(sp)
}

// handBuffered counts what the hand-written join buffers per key, in the
// benchmark process (Prism runs in process), and its peak: the join
// itself keeps no count, which would cost it state calls.
var handBuffered bufferCount

type bufferCount struct {
	mu   sync.Mutex
	keys map[string]int64
	peak atomic.Int64
}

func (c *bufferCount) reset() {
	c.mu.Lock()
	c.keys = map[string]int64{}
	c.mu.Unlock()
	c.peak.Store(0)
}

func (c *bufferCount) added(key string) {
	c.mu.Lock()
	n := c.keys[key] + 1
	c.keys[key] = n
	c.mu.Unlock()
	if n > c.peak.Load() {
		c.peak.Store(n)
	}
}

func (c *bufferCount) cleared(key string) {
	c.mu.Lock()
	delete(c.keys, key)
	c.mu.Unlock()
}

// countHandPairsFn counts the hand-written join's pairs, as countResultsFn
// counts the library's.
type countHandPairsFn struct{}

func (countHandPairsFn) ProcessElement(handPair) {
	consumed.Add(2)
	results.add()
}

// handWritten is the hand-written join's pipeline case, with the bounds of
// the library's cases.
func handWritten(name string, lower, upper time.Duration) pipelineCase {
	return pipelineCase{
		name: name,
		build: func(s beam.Scope, left, right beam.PCollection) {
			s = s.Scope("handwritten")
			tagged := beam.Flatten(s,
				beam.ParDo(s, &handTagFn{Left: true}, left),
				beam.ParDo(s, &handTagFn{Left: false}, right))
			pairs := beam.ParDo(s, &handJoinFn{
				Lower: lower.Milliseconds(), Upper: upper.Milliseconds(),
				LeftBuffer:  state.MakeBagState[handEntry]("left"),
				RightBuffer: state.MakeBagState[handEntry]("right"),
				Expiry:      timers.InEventTime("expiry"),
			}, tagged)
			beam.ParDo0(s, countHandPairsFn{}, pairs)
		},
		want: func(g genSpec) int64 { return g.N / 2 },
	}
}
