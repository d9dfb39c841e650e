// Package statetest holds an in-memory user state and timer backend, for
// tests that call a join's DoFns directly, without a runner: one key's bag
// states (State, a state.Provider that counts its calls and bytes, as a
// runner's backend would carry them) and its timers (Timers, a
// timers.Provider keyed by tag, as a runner keeps them). No non-test code
// imports it.
//
// It rests on the Beam Go SDK's state and timers alone.
package statetest

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
)

// State is one key's user state in memory: the bag states the join
// declares. Methods it does not implement panic (nil embedded
// interface), so a test notices state the join was not expected to use.
type State struct {
	state.Provider
	Bags  map[string][][]byte
	Calls int // state calls
	Reads int // of which reads
	// The bytes of state the calls read and wrote, and the largest value
	// written by one call (benchmarks: what a runner's state backend
	// would carry).
	ReadBytes, WrittenBytes, LargestWrite int64
}

// NewState is the state of a key with none.
func NewState() *State {
	return &State{Bags: map[string][][]byte{}}
}

// wrote counts a value written.
func (m *State) wrote(v []byte) {
	m.WrittenBytes += int64(len(v))
	m.LargestWrite = max(m.LargestWrite, int64(len(v)))
}

// Clone is a deep copy of m's state, its call counts reset: what a
// runner keeps of a key while a bundle works on a copy.
func (m *State) Clone() *State {
	c := NewState()
	for id, vs := range m.Bags {
		for _, v := range vs {
			c.Bags[id] = append(c.Bags[id], slices.Clone(v))
		}
	}
	return c
}

// ReadBagState reads a bag: one call.
func (m *State) ReadBagState(id string) ([]any, []state.Transaction, error) {
	m.Calls++
	m.Reads++
	out := make([]any, 0, len(m.Bags[id]))
	for _, v := range m.Bags[id] {
		out = append(out, v)
		m.ReadBytes += int64(len(v))
	}
	return out, nil, nil
}

// WriteBagState appends to a bag: one call.
func (m *State) WriteBagState(t state.Transaction) error {
	m.Calls++
	m.wrote(t.Val.([]byte))
	m.Bags[t.Key] = append(m.Bags[t.Key], t.Val.([]byte))
	return nil
}

// ClearBagState clears a bag: one call.
func (m *State) ClearBagState(t state.Transaction) error {
	m.Calls++
	delete(m.Bags, t.Key)
	return nil
}

// Timers is one key's timers in memory, by tag, as a runner keeps them.
type Timers map[string]timers.TimerMap

// Clone is a copy of m.
func (m Timers) Clone() Timers { return maps.Clone(m) }

// Set sets or clears a timer. A timer whose output timestamp is after its
// firing time panics (ErrHoldAfterFiring), as the Java SDK refuses one.
func (m Timers) Set(t timers.TimerMap) {
	if t.Clear {
		delete(m, t.Tag)
		return
	}
	if err := CheckHold(t); err != nil {
		panic(err)
	}
	m[t.Tag] = t
}

// ErrHoldAfterFiring is the error of a timer set with an output timestamp
// (hold) after its firing time, which Beam Java's SDK refuses to set
// ("Attempted to set an event-time timer with an output timestamp of ...
// that is after the timer firing timestamp").
var ErrHoldAfterFiring = errors.New("a timer's output timestamp is after its firing time")

// CheckHold checks that timer t holds the output watermark no later than
// it fires.
func CheckHold(t timers.TimerMap) error {
	if t.HoldTimestamp > t.FireTimestamp {
		return fmt.Errorf("%w: family %q, tag %q, hold %d, firing %d", ErrHoldAfterFiring, t.Family, t.Tag, t.HoldTimestamp.Milliseconds(), t.FireTimestamp.Milliseconds())
	}
	return nil
}

// HoldError runs f and returns the error of a timer it set with an output
// timestamp after its firing time (Timers.Set panics with it), or nil.
func HoldError(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok || !errors.Is(e, ErrHoldAfterFiring) {
				panic(r)
			}
			err = e
		}
	}()
	f()
	return nil
}
