package streamjoiner

import "github.com/beamjoin/beamjoin/transforms/internal/match"

// keyTable holds the buffers of the keys that have elements buffered, and
// an index of them by age: a min-heap ordered by each key's oldest element,
// whose root holds the element that eviction takes next across all keys and
// the earliest timestamp that retention may drop. A key whose buffer
// empties is deleted, so the table never outlives the data.
//
// Keys live in a slab and the heap holds their slots, not pointers, so
// that keeping the heap in order is plain integer moves.
type keyTable[K comparable, L, R any] struct {
	slots  map[K]int32
	states []keyState[K, L, R]
	free   []int32 // slots of deleted keys, for reuse
	byAge  []ageEntry
	seq    uint64 // counts keys as they appear, to order equally old ones
}

// keyState is one key's buffer and its position in the heap.
type keyState[K comparable, L, R any] struct {
	key   K
	buf   *match.Buffer[value[L, R]]
	index int // in byAge
}

// ageEntry is one key in the heap: the time and side of the element its
// buffer would evict first (match.Buffer.Evict: oldest, left first).
type ageEntry struct {
	oldest int64
	seq    uint64
	slot   int32
	side   match.Side
}

func newKeyTable[K comparable, L, R any]() keyTable[K, L, R] {
	return keyTable[K, L, R]{slots: make(map[K]int32)}
}

// lookup returns k's buffer, if k has elements buffered.
func (t *keyTable[K, L, R]) lookup(k K) (*match.Buffer[value[L, R]], bool) {
	slot, ok := t.slots[k]
	if !ok {
		return nil, false
	}
	return t.states[slot].buf, true
}

// buffer returns k's buffer, creating it for an element of side s at ts if
// k has none, and otherwise moving k up the heap if that element will be
// its oldest. Call it before adding the element.
func (t *keyTable[K, L, R]) buffer(k K, s match.Side, ts int64) *match.Buffer[value[L, R]] {
	if slot, ok := t.slots[k]; ok {
		ks := &t.states[slot]
		a := &t.byAge[ks.index]
		if ts < a.oldest || (ts == a.oldest && s == match.Left && a.side == match.Right) {
			a.oldest, a.side = ts, s
			t.up(ks.index)
		}
		return ks.buf
	}
	var slot int32
	if n := len(t.free); n > 0 {
		slot, t.free = t.free[n-1], t.free[:n-1]
	} else {
		slot = int32(len(t.states))
		t.states = append(t.states, keyState[K, L, R]{})
	}
	buf := match.NewBuffer[value[L, R]]()
	t.states[slot] = keyState[K, L, R]{key: k, buf: buf, index: len(t.byAge)}
	t.slots[k] = slot
	t.byAge = append(t.byAge, ageEntry{oldest: ts, seq: t.seq, slot: slot, side: s})
	t.seq++
	t.up(len(t.byAge) - 1)
	return buf
}

// oldest returns the buffer holding the oldest element of all keys, and
// that element's time.
func (t *keyTable[K, L, R]) oldest() (buf *match.Buffer[value[L, R]], ts int64, ok bool) {
	if len(t.byAge) == 0 {
		return nil, 0, false
	}
	a := t.byAge[0]
	return t.states[a.slot].buf, a.oldest, true
}

// shrunk moves the key of the oldest element, whose buffer has just lost
// its oldest elements, to its new place in the heap, or deletes it if its
// buffer is empty.
func (t *keyTable[K, L, R]) shrunk() {
	a := &t.byAge[0]
	ks := &t.states[a.slot]
	if ks.buf.Len() == 0 {
		delete(t.slots, ks.key)
		t.free = append(t.free, a.slot)
		*ks = keyState[K, L, R]{}
		last := len(t.byAge) - 1
		t.swap(0, last)
		t.byAge = t.byAge[:last]
		t.down(0)
		return
	}
	a.oldest, a.side = oldestOf(ks.buf)
	t.down(0)
}

// clear deletes every key.
func (t *keyTable[K, L, R]) clear() {
	clear(t.slots)
	clear(t.states)
	t.states, t.free, t.byAge, t.seq = t.states[:0], t.free[:0], t.byAge[:0], 0
}

// oldestOf returns the time and side of the element b would evict first.
// b must not be empty.
func oldestOf[V any](b *match.Buffer[V]) (int64, match.Side) {
	lt, lok := b.Oldest(match.Left)
	rt, rok := b.Oldest(match.Right)
	if lok && (!rok || lt <= rt) {
		return lt, match.Left
	}
	return rt, match.Right
}

func (t *keyTable[K, L, R]) less(i, j int) bool {
	a, b := &t.byAge[i], &t.byAge[j]
	if a.oldest != b.oldest {
		return a.oldest < b.oldest
	}
	if a.side != b.side {
		return a.side == match.Left
	}
	return a.seq < b.seq
}

func (t *keyTable[K, L, R]) swap(i, j int) {
	h := t.byAge
	h[i], h[j] = h[j], h[i]
	t.states[h[i].slot].index = i
	t.states[h[j].slot].index = j
}

// up moves the key at heap index i towards the root while it is older
// than its parent.
func (t *keyTable[K, L, R]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !t.less(i, parent) {
			return
		}
		t.swap(i, parent)
		i = parent
	}
}

// down moves the key at heap index i towards the leaves while a child is
// older.
func (t *keyTable[K, L, R]) down(i int) {
	n := len(t.byAge)
	for {
		least := i
		if l := 2*i + 1; l < n && t.less(l, least) {
			least = l
		}
		if r := 2*i + 2; r < n && t.less(r, least) {
			least = r
		}
		if least == i {
			return
		}
		t.swap(i, least)
		i = least
	}
}
