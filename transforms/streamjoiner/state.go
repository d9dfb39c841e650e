package streamjoiner

import "github.com/beamjoin/beamjoin/transforms/join/match"

// keyState is one key's buffer, with its place in the joiner's index of
// keys by age.
type keyState[L, R any, K comparable] struct {
	key K
	buf *match.Buffer[value[L, R]]
	// oldest and oldestSide are the time and side of the element the
	// buffer would evict first (match.Buffer.Evict: oldest, left first).
	oldest     int64
	oldestSide match.Side
	seq        uint64 // when the key appeared, to order equally old keys
	index      int    // position in keyHeap
}

// olderThanOldest reports whether an element of side s at ts would be
// evicted before ks's current oldest element.
func (ks *keyState[L, R, K]) olderThanOldest(s match.Side, ts int64) bool {
	return ts < ks.oldest || (ts == ks.oldest && s == match.Left && ks.oldestSide == match.Right)
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

// keyHeap is a min-heap of keys by their oldest element: its root holds the
// element that eviction takes next across all keys, and the earliest
// timestamp retention may drop. Each keyState knows its index, so a key
// whose oldest element changed is moved in O(log keys).
type keyHeap[L, R any, K comparable] []*keyState[L, R, K]

func (h keyHeap[L, R, K]) less(i, j int) bool {
	a, b := h[i], h[j]
	if a.oldest != b.oldest {
		return a.oldest < b.oldest
	}
	if a.oldestSide != b.oldestSide {
		return a.oldestSide == match.Left
	}
	return a.seq < b.seq
}

func (h keyHeap[L, R, K]) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *keyHeap[L, R, K]) push(ks *keyState[L, R, K]) {
	ks.index = len(*h)
	*h = append(*h, ks)
	h.up(ks.index)
}

// remove takes the key at index i out of the heap.
func (h *keyHeap[L, R, K]) remove(i int) {
	last := len(*h) - 1
	if i != last {
		h.swap(i, last)
	}
	(*h)[last] = nil
	*h = (*h)[:last]
	if i != last {
		h.down(i)
		h.up(i)
	}
}

// up moves the key at index i towards the root while it is older than its
// parent.
func (h keyHeap[L, R, K]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

// down moves the key at index i towards the leaves while a child is older.
func (h keyHeap[L, R, K]) down(i int) {
	for {
		least := i
		if l := 2*i + 1; l < len(h) && h.less(l, least) {
			least = l
		}
		if r := 2*i + 2; r < len(h) && h.less(r, least) {
			least = r
		}
		if least == i {
			return
		}
		h.swap(i, least)
		i = least
	}
}
