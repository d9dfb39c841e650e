// Package bounded holds what the bounded paths of the interval and as-of
// joins share (join.Bounded): the gatherer that stamps each tagged value
// with its event time, places it in its key's time buckets (Buckets; one
// bucket for the as-of join) and gathers a bundle's values by runner key,
// a bucket of a shard of the keys; and the state in which a stateful DoFn
// collects a runner key's gathered values until the input is done, and
// the timer that releases them (Groups). What a path does with a runner
// key's values once released, a sweep of each key's, is the engine's own.
//
// It rests on the Beam Go SDK, the interval join's state format (package
// bagstate, whose chunks the collected values are written in), the
// tagged timer family (timertag), the runner keys (runnerkey) and the
// encoded values of package raw. docs/design/interval.md ("Bounded path")
// says why and what it costs.
package bounded

// This file holds the gatherer and the bucketing it places values by.

import (
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/runnerkey"
)

func init() {
	// Registered by name, so that a worker in another process decodes a
	// gathered element's parts as such, not as unnamed structs.
	beam.RegisterType(reflect.TypeOf(Timed{}))
	beam.RegisterType(reflect.TypeOf(Part{}))
	register.DoFn4x1[beam.EventTime, beam.X, raw.Encoded, func(beam.EventTime, []byte, []Part), error](&bucketGatherFn{})
	register.Emitter3[beam.EventTime, []byte, []Part]()
}

// Timed is a tagged, encoded value with its event time.
type Timed struct {
	Side  uint8
	Time  int64
	Value []byte
}

// Part is the values of one join key (Key, the key's encoding) that a
// gatherer collected in a bundle for one runner key of the bounded path's
// stateful step.
type Part struct {
	Key    []byte
	Values []Timed
}

// DefaultShards is how many shards the bounded paths spread the join's
// keys over: the stateful step's runner keys are a shard (and, for
// Interval, a time bucket), each holding the groups of many join keys,
// so that its state calls (an append per gathered part, a read and a
// clear per runner key) are few however many keys the input has, and a
// firing holds about 1/DefaultShards of its bucket's values.
const DefaultShards = 64

// DefaultHold is how many bytes of values the gatherers hold, by default,
// before they hand them on.
const DefaultHold = 16 << 20

// noEarlierHold is the hold of a runner key whose values may be at any
// time (AsOf's, and Interval's under MaxBufferedPerKey): the start of
// time.
var noEarlierHold = beam.EventTime(mtime.MinTimestamp)

// Buckets is how a bounded path cuts a key's elements into groups by
// event time, as band joins are partitioned. Bucket b holds the elements
// with b*Width <= time < (b+1)*Width, which it owns, and as context those
// up to Back before its start and up to Ahead after its end (exclusive):
// everything its sweep must see to decide what its own elements make. The
// interval join's engine says how wide its buckets are and how much
// context they need; the zero Buckets, Width 0, is one group per key, as
// the as-of join and the interval join under MaxBufferedPerKey have it.
type Buckets struct {
	Width, Back, Ahead int64 // milliseconds; Width 0: one group per key
}

// Placement returns the buckets an element at time t is placed in: first
// to last, its own among them.
func (b Buckets) Placement(t int64) (first, last int64) {
	if b.Width == 0 {
		return 0, 0
	}
	return runnerkey.FloorDiv(t-b.Ahead, b.Width), runnerkey.FloorDiv(t+b.Back, b.Width)
}

// Hold is the timestamp of the gathered elements of runner key rk
// (runnerkey.Bucket), which the bounded path's timer holds the output
// watermark at until they are swept: the earliest time its bucket can
// hold, or under one group per key (Width 0) the start of time.
func (b Buckets) Hold(rk []byte) beam.EventTime {
	bucket, _, err := runnerkey.Split(rk)
	if b.Width == 0 || err != nil {
		return noEarlierHold
	}
	return beam.EventTime(bucket*b.Width - b.Back)
}

// Owns reports whether bucket owns an element at time t.
func (b Buckets) Owns(bucket, t int64) bool {
	return b.Width == 0 || runnerkey.FloorDiv(t, b.Width) == bucket
}

// Gathering is how a bounded path gathers its values: the buckets it
// places them in, the key coder of its join, and, for tests, how many
// bytes a gatherer holds (0: DefaultHold) and over how many shards it
// spreads the keys (0: DefaultShards).
type Gathering struct {
	Buckets Buckets
	Key     coders.Element
	Hold    int
	Shards  int
}

// Gather runs a gatherer (bucketGatherFn) on each side of the join op in
// its own scope and flattens the two (raw.Flatten): gathered before the
// Flatten, so that a runner that runs a Flatten itself (Prism does, as a
// stage of its own) handles one element per group, side and bundle rather
// than every input element. sides are each side's tagged
// PCollection<KV<K, raw.Encoded>>; the result is a
// PCollection<KV<[]byte, []Part>> keyed by runner key, each element at its
// runner key's hold.
func Gather(s beam.Scope, op string, sides [2]beam.PCollection, g Gathering) (beam.PCollection, error) {
	var gathered [2]beam.PCollection
	for side, in := range sides {
		gathered[side] = beam.ParDo(s.Scope(raw.SideName[side]), g.fn(op), in)
	}
	return raw.Flatten(s, op, gathered)
}

// GatherAll is Gather for a join of any number of inputs (the multi-way
// join's), each gathered in a scope named by its number, "input1" for the
// first. The gatherer keeps each value's Side as it is, so a join of more
// than two inputs says which input a value comes from in the value itself
// (Groups, whose state format has two sides, keeps it).
func GatherAll(s beam.Scope, op string, inputs []beam.PCollection, g Gathering) (beam.PCollection, error) {
	gathered := make([]beam.PCollection, len(inputs))
	for i, in := range inputs {
		gathered[i] = beam.ParDo(s.Scope(fmt.Sprintf("input%d", i+1)), g.fn(op), in)
	}
	all, err := beam.TryFlatten(s, gathered...)
	if err != nil {
		return beam.PCollection{}, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	return all, nil
}

// fn is the gatherer of g for the join op.
func (g Gathering) fn(op string) *bucketGatherFn {
	hold, shards := g.Hold, g.Shards
	if hold <= 0 {
		hold = DefaultHold
	}
	if shards <= 0 {
		shards = DefaultShards
	}
	return &bucketGatherFn{Op: op, Hold: hold, Buckets: g.Buckets, Shards: shards, Key: g.Key}
}

// bucketGatherFn stamps each tagged value with its event time, places it
// in its key's buckets (Buckets), and gathers a bundle's placements by
// runner key of the stateful step, a bucket and a shard of the keys
// (runnerkey.Bucket, runnerkey.Shard), so that the step gets one element
// per runner key and bundle rather than one per value: a runner's cost
// per element (Prism's above all) and the step's state calls then fall
// with the number of runner keys, not of values or keys. It holds at most
// Hold bytes of values (counting 40 more for each) and hands everything
// on when it would hold more, and at the end of the bundle, each element
// at its runner key's hold (Buckets.Hold). The order does not matter: the
// sweep sorts a group's values. Op names the join in errors.
type bucketGatherFn struct {
	Op      string
	Hold    int
	Buckets Buckets
	Shards  int
	Key     coders.Element

	g gatherer
}

// Setup readies the key coder.
func (f *bucketGatherFn) Setup() error { return f.Key.Setup() }

func (f *bucketGatherFn) ProcessElement(et beam.EventTime, key beam.X, in raw.Encoded, emit func(beam.EventTime, []byte, []Part)) error {
	k, err := f.Key.Encode(key)
	if err != nil {
		return fmt.Errorf("beamjoin: %s: bounded path: key %v: %w", f.Op, key, err)
	}
	shard := runnerkey.Shard(k, f.Shards)
	t := Timed{Side: in.Side, Time: et.Milliseconds(), Value: in.Value}
	first, last := f.Buckets.Placement(t.Time)
	for b := first; b <= last; b++ {
		f.g.add(string(runnerkey.Bucket(b, shard)), string(k), t)
	}
	if f.g.held > f.Hold {
		f.g.flush(f.Buckets.Hold, emit)
	}
	return nil
}

// StartBundle drops what a failed bundle may have left.
func (f *bucketGatherFn) StartBundle(func(beam.EventTime, []byte, []Part)) { f.g.reset() }

// FinishBundle hands on the bundle's groups.
func (f *bucketGatherFn) FinishBundle(emit func(beam.EventTime, []byte, []Part)) {
	f.g.flush(f.Buckets.Hold, emit)
}

// gatherer collects a bundle's values by runner key and join key, up to
// a number of bytes, for a bounded path's stateful step.
type gatherer struct {
	groups map[string]map[string][]Timed // by runner key, then join key
	held   int
}

// add collects value t of join key key for runner key rk: its bytes, and
// 40 more for each value, count towards held.
func (g *gatherer) add(rk, key string, t Timed) {
	if g.groups == nil {
		g.groups = map[string]map[string][]Timed{}
	}
	byKey := g.groups[rk]
	if byKey == nil {
		byKey = map[string][]Timed{}
		g.groups[rk] = byKey
	}
	if _, ok := byKey[key]; !ok {
		g.held += len(key)
	}
	byKey[key] = append(byKey[key], t)
	g.held += len(t.Value) + 40
}

// reset drops what was collected.
func (g *gatherer) reset() { clear(g.groups); g.held = 0 }

// flush hands on what was collected: one element per runner key, at the
// time hold gives it (a time at or before each of its values, the same
// for every element of the runner key).
func (g *gatherer) flush(hold func(rk []byte) beam.EventTime, emit func(beam.EventTime, []byte, []Part)) {
	for rk, byKey := range g.groups {
		parts := make([]Part, 0, len(byKey))
		for key, values := range byKey {
			parts = append(parts, Part{Key: []byte(key), Values: values})
		}
		emit(hold([]byte(rk)), []byte(rk), parts)
	}
	g.reset()
}
