package bounded

// This file holds what the bounded paths share after their gatherers: in
// place of a GroupByKey, a stateful DoFn collects the gathered groups of
// a runner key in its bag, and a timer at the end of the global window,
// holding the output watermark at or before every value collected,
// releases them once the input is done; the records the values make,
// which carry the values' own event times, are then never behind the
// output watermark. docs/design/interval.md, "Bounded path", says why and
// what it costs.

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bagstate"
	"github.com/beamjoin/beamjoin/transforms/join/internal/timertag"
)

// Groups is a runner key's gathered parts in state, and the timers that
// release them. Each gathered element reaches the DoFn at its
// hold, a time at or before every value it holds that every element of
// its runner key shares (a time bucket's first possible time, or the
// start of time). Each part is appended as chunks in the bounded path's
// state format (boundedStateVersion), with no read, and sets a timer at
// the end of the global window, when every element of the input has
// arrived, that holds the output watermark at the hold. The timer is
// tagged with its hold: a runner key has one.
//
// The firing whose hold is at or before every time the bag holds takes
// the runner key's values and clears the bag: every record made of them
// is at or after that hold. A firing that finds the bag empty (a firing
// delivered twice) takes nothing, and one whose hold is later than a
// value in the bag (a runner key given elements at two holds, which the
// gatherers never do) takes nothing either, leaving the values to the
// earlier timer, so that no firing emits before its own hold.
//
// It is made of its DoFn's own fields (Groups and Release, which the SDK
// finds only as fields of the DoFn itself): see GroupsOf.
type Groups struct {
	groups *state.Bag[[]byte]
	timer  *timers.EventTime
}

// GroupsOf is the Groups of a DoFn's state and timer fields.
func GroupsOf(groups *state.Bag[[]byte], release *timers.EventTime) Groups {
	return Groups{groups: groups, timer: release}
}

// NewState is a bounded path's DoFn's state and timer fields, to hold its
// Groups.
func NewState() (state.Bag[[]byte], timers.EventTime) {
	return state.MakeBagState[[]byte]("groups"), timers.InEventTime("release")
}

// endOfGlobal is when the release timers fire, in milliseconds: the end
// of the global window, which the input watermark passes only once the
// input is done.
var endOfGlobal = mtime.EndOfGlobalWindowTime.Milliseconds()

// boundedStateVersion is the version of the bounded paths' state format,
// which every bag element starts with: a uvarint version, the join key's
// encoding (a uvarint length, then the bytes), then the key's values as
// one chunk of the interval join's state format (bagstate, itself
// versioned).
const boundedStateVersion = 1

// encodePart writes a part as bag elements: one per chunk of at most
// bagstate.MaxValue bytes of values.
func encodePart(key []byte, entries []match.Entry[[]byte]) [][]byte {
	var out [][]byte
	for _, chunk := range bagstate.EncodeChunks(match.NoProgress, entries, bagstate.MaxValue) {
		b := binary.AppendUvarint(make([]byte, 0, 2+binary.MaxVarintLen64+len(key)+len(chunk)), boundedStateVersion)
		b = binary.AppendUvarint(b, uint64(len(key)))
		b = append(append(b, key...), chunk...)
		out = append(out, b)
	}
	return out
}

// decodeParts reads a runner key's bag: its values by join key's
// encoding. Values alias the bag's bytes.
func decodeParts(elements [][]byte) (map[string][]match.Entry[[]byte], error) {
	out := map[string][]match.Entry[[]byte]{}
	for i, b := range elements {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, fmt.Errorf("bounded state element %d: truncated version", i)
		}
		if v != boundedStateVersion {
			return nil, fmt.Errorf("bounded state element %d is in format version %d, not %d, the one this release reads", i, v, boundedStateVersion)
		}
		b = b[n:]
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return nil, fmt.Errorf("bounded state element %d: truncated key", i)
		}
		key := string(b[n : n+int(l)])
		st, err := bagstate.DecodeState([][]byte{b[n+int(l):]})
		if err != nil {
			return nil, fmt.Errorf("bounded state element %d: %w", i, err)
		}
		if st.Progress != match.NoProgress || len(st.Buckets) > 0 || len(st.Cleanups) > 0 {
			return nil, fmt.Errorf("bounded state element %d holds records the bounded path never writes", i)
		}
		out[key] = append(out[key], st.Entries...)
	}
	return out, nil
}

// Add appends a gathered element's parts, each value tagged with its
// side, and sets the timer that holds the output watermark at hold, the
// element's timestamp. op names the join in errors.
func (b Groups) Add(op string, sp state.Provider, tp timers.Provider, hold beam.EventTime, parts []Part) error {
	low := hold.Milliseconds()
	for _, p := range parts {
		entries := make([]match.Entry[[]byte], len(p.Values))
		for i, t := range p.Values {
			if t.Side > uint8(match.Right) {
				return fmt.Errorf("beamjoin: %s: gathered element of unknown side %d", op, t.Side)
			}
			if t.Time < low {
				return fmt.Errorf("beamjoin: %s: an element gathered at %d holds a value at %d, before it", op, low, t.Time)
			}
			entries[i] = match.Entry[[]byte]{Side: match.Side(t.Side), Time: t.Time, Value: t.Value}
		}
		for _, e := range encodePart(p.Key, entries) {
			if err := b.groups.Add(sp, e); err != nil {
				return fmt.Errorf("beamjoin: %s: writing state: %w", op, err)
			}
		}
	}
	timertag.Arm(b.timer, tp, strconv.FormatInt(low, 10), endOfGlobal, low)
	return nil
}

// Each is a firing of the timer tagged tag: if it releases the runner
// key's values (release), it calls sweep with each join key, decoded with
// key, and its values, in the keys' order, so that a firing emits its
// records in the same order on every worker. op names the join in errors.
func (b Groups) Each(op string, sp state.Provider, tag string, key *coders.Element, sweep func(key beam.X, entries []match.Entry[[]byte])) error {
	byKey, ok, err := b.release(op, sp, tag)
	if !ok || err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		kv, err := key.Decode([]byte(k))
		if err != nil {
			return fmt.Errorf("beamjoin: %s: bounded path: decoding a key: %w", op, err)
		}
		sweep(kv, byKey[k])
	}
	return nil
}

// release is a firing of the timer tagged tag: the runner key's values by
// join key's encoding, and ok, if the firing's hold is at or before every
// time the bag holds; the bag is then cleared. Otherwise nothing (see
// Groups).
func (b Groups) release(op string, sp state.Provider, tag string) (byKey map[string][]match.Entry[[]byte], ok bool, err error) {
	hold, err := strconv.ParseInt(tag, 10, 64)
	if err != nil {
		return nil, false, fmt.Errorf("beamjoin: %s: a release timer tagged %q, not an event time", op, tag)
	}
	elements, _, err := b.groups.Read(sp)
	if err != nil {
		return nil, false, fmt.Errorf("beamjoin: %s: reading state: %w", op, err)
	}
	if len(elements) == 0 {
		return nil, false, nil
	}
	byKey, err = decodeParts(elements)
	if err != nil {
		return nil, false, fmt.Errorf("beamjoin: %s: %w", op, err)
	}
	low := int64(math.MaxInt64)
	for _, es := range byKey {
		for _, e := range es {
			low = min(low, e.Time)
		}
	}
	if low < hold {
		return nil, false, nil // an earlier timer takes them
	}
	if err := b.groups.Clear(sp); err != nil {
		return nil, false, fmt.Errorf("beamjoin: %s: clearing state: %w", op, err)
	}
	return byKey, true, nil
}
