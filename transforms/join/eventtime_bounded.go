package join

// This file holds the step the bounded paths of Interval and AsOf share
// after their gatherers: in place of a GroupByKey, a stateful DoFn
// appends each gathered group to its key's bag and sets an event-time
// timer at the end of the global window that holds the output watermark
// at the group's earliest event time, so that the records the key's
// elements make, which carry those elements' own times, are never behind
// the output watermark. docs/design/interval.md, "Bounded path", says
// why and what it costs.

import (
	"fmt"
	"math"
	"strconv"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bagstate"
)

// boundedGroups is a key's gathered groups in state, and the timers that
// release them. Each group is appended as chunks of entries in the
// interval join's state format (bagstate, versioned), with no read; its
// timer fires at the end of the global window, when every element of the
// input has arrived, and holds the output watermark at the group's
// earliest event time. Timers are told apart by that time, their tag,
// so that a group with an earlier time never replaces the hold of one
// with a later time (one timer family, BEAM_NOTES), and an append needs
// no read.
//
// The first firing whose hold is the earliest time in the bag takes the
// key's entries and clears the bag: every record made of them is at or
// after that hold. A firing whose hold is later than the bag's earliest
// time takes nothing: the timer holding that earliest time is still set,
// and its firing takes them, so that no firing emits before its own hold.
// A firing that finds the bag empty takes nothing either.
//
// It is made of its DoFn's own fields (Groups and Release, which the SDK
// finds only as fields of the DoFn itself): see groupsOf.
type boundedGroups struct {
	groups *state.Bag[[]byte]
	timer  *timers.EventTime
}

// groupsOf is the boundedGroups of a DoFn's state and timer fields.
func groupsOf(groups *state.Bag[[]byte], release *timers.EventTime) boundedGroups {
	return boundedGroups{groups: groups, timer: release}
}

// newBoundedState is a bounded path's DoFn's state and timer fields.
func newBoundedState() (state.Bag[[]byte], timers.EventTime) {
	return state.MakeBagState[[]byte]("groups"), timers.InEventTime("release")
}

// endOfGlobal is when the release timers fire, in milliseconds: the end
// of the global window, which the input watermark passes only once the
// input is done.
var endOfGlobal = mtime.EndOfGlobalWindowTime.Milliseconds()

// add appends a gathered group, each value tagged with its side, and
// sets the timer that holds its earliest time. op names the join in
// errors.
func (b boundedGroups) add(op string, sp state.Provider, tp timers.Provider, group []timed) error {
	if len(group) == 0 {
		return nil
	}
	entries := make([]match.Entry[[]byte], len(group))
	low := int64(math.MaxInt64)
	for i, t := range group {
		if t.Side > uint8(Right) {
			return fmt.Errorf("beamjoin: %s: gathered element of unknown side %d", op, t.Side)
		}
		entries[i] = match.Entry[[]byte]{Side: match.Side(t.Side), Time: t.Time, Value: t.Value}
		low = min(low, t.Time)
	}
	for _, chunk := range bagstate.EncodeChunks(match.NoProgress, entries, maxStateValue) {
		if err := b.groups.Add(sp, chunk); err != nil {
			return fmt.Errorf("beamjoin: %s: writing state: %w", op, err)
		}
	}
	setTimer(b.timer, tp, strconv.FormatInt(low, 10), endOfGlobal, low)
	return nil
}

// release is a firing of the timer tagged tag: the key's entries, and
// ok, if the firing's hold is the earliest time the bag holds; the bag is
// then cleared. Otherwise nothing (see boundedGroups).
func (b boundedGroups) release(op string, sp state.Provider, tag string) (entries []match.Entry[[]byte], ok bool, err error) {
	hold, err := strconv.ParseInt(tag, 10, 64)
	if err != nil {
		return nil, false, fmt.Errorf("beamjoin: %s: a release timer tagged %q, not an event time", op, tag)
	}
	chunks, _, err := b.groups.Read(sp)
	if err != nil {
		return nil, false, fmt.Errorf("beamjoin: %s: reading state: %w", op, err)
	}
	if len(chunks) == 0 {
		return nil, false, nil
	}
	st, err := bagstate.DecodeState(chunks)
	if err != nil {
		return nil, false, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	if st.Progress != match.NoProgress || len(st.Buckets) > 0 || len(st.Cleanups) > 0 {
		return nil, false, fmt.Errorf("beamjoin: %s: the bounded path's state holds records it never writes", op)
	}
	low := int64(math.MaxInt64)
	for _, e := range st.Entries {
		low = min(low, e.Time)
	}
	if low < hold {
		return nil, false, nil // the timer holding low takes them
	}
	if err := b.groups.Clear(sp); err != nil {
		return nil, false, fmt.Errorf("beamjoin: %s: clearing state: %w", op, err)
	}
	return st.Entries, true, nil
}
