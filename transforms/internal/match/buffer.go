package match

import "sort"

// Entry is one buffered element: its side, its event time in milliseconds,
// whether it is known to have matched, and its value.
//
// Matched may lag behind the truth while a partner is still buffered: the
// Beam join appends new elements to state without rewriting older ones, so a
// buffered element learns of a partner only when the buffer is next settled
// (on expiry or eviction). Buffer always combines the flag with a look at the
// partners still buffered, so its decisions never depend on the lag.
type Entry[V any] struct {
	Side    Side
	Time    int64
	Matched bool
	Value   V
}

// Buffer holds one key's buffered elements of both sides and the key's
// cleanup progress. Each side is kept sorted by time, ties in arrival order,
// so partners are found by binary search and the oldest elements are always
// a prefix.
//
// A Buffer is not safe for concurrent use.
type Buffer[V any] struct {
	sides [2][]Entry[V]
	// Progress is the time up to which expired elements have been removed
	// (see Rules.IsLate), or NoProgress.
	Progress int64
	// valueBytes is the total length of the buffered values (ValueBytes).
	valueBytes int64
}

// NewBuffer returns an empty buffer with no progress.
func NewBuffer[V any]() *Buffer[V] {
	return &Buffer[V]{Progress: NoProgress}
}

// Restore rebuilds a buffer from entries in any order, as read back from
// state, and the key's progress.
func Restore[V any](entries []Entry[V], progress int64) *Buffer[V] {
	b := &Buffer[V]{Progress: progress}
	for _, e := range entries {
		b.sides[e.Side] = append(b.sides[e.Side], e)
		b.valueBytes += valueLen(&e.Value)
	}
	for s := range b.sides {
		side := b.sides[s]
		if !sort.SliceIsSorted(side, func(i, j int) bool { return side[i].Time < side[j].Time }) {
			sort.SliceStable(side, func(i, j int) bool { return side[i].Time < side[j].Time })
		}
	}
	return b
}

// Len returns the number of buffered elements on both sides.
func (b *Buffer[V]) Len() int { return len(b.sides[Left]) + len(b.sides[Right]) }

// ValueBytes returns the total length of the buffered values when V is
// []byte or string, or 0 for other value types: what the values hold in
// memory, kept as elements come and go, at no cost per call.
func (b *Buffer[V]) ValueBytes() int64 { return b.valueBytes }

// valueLen is the length of a []byte or string value, else 0.
func valueLen[V any](v *V) int64 {
	switch x := any(v).(type) {
	case *[]byte:
		return int64(len(*x))
	case *string:
		return int64(len(*x))
	}
	return 0
}

// SideLen returns the number of buffered elements of side s.
func (b *Buffer[V]) SideLen(s Side) int { return len(b.sides[s]) }

// Entries returns all buffered elements, left side first, each side in time
// order. The slice is new; the values are shared.
func (b *Buffer[V]) Entries() []Entry[V] {
	out := make([]Entry[V], 0, b.Len())
	out = append(out, b.sides[Left]...)
	return append(out, b.sides[Right]...)
}

// Oldest returns the earliest time buffered on side s.
func (b *Buffer[V]) Oldest(s Side) (int64, bool) {
	if len(b.sides[s]) == 0 {
		return 0, false
	}
	return b.sides[s][0].Time, true
}

// OldestFrom returns the earliest time buffered on side s that is at or
// after from.
func (b *Buffer[V]) OldestFrom(s Side, from int64) (int64, bool) {
	side := b.sides[s]
	i := sort.Search(len(side), func(k int) bool { return side[k].Time >= from })
	if i == len(side) {
		return 0, false
	}
	return side[i].Time, true
}

// Newest returns the latest time buffered on side s.
func (b *Buffer[V]) Newest(s Side) (int64, bool) {
	if n := len(b.sides[s]); n > 0 {
		return b.sides[s][n-1].Time, true
	}
	return 0, false
}

// NextExpiry returns the earliest Expiry among the buffered elements: the
// time at which the key's cleanup next has work to do.
func (b *Buffer[V]) NextExpiry(r Rules) (int64, bool) {
	next, ok := int64(0), false
	for s := range b.sides {
		if len(b.sides[s]) == 0 {
			continue
		}
		if t := r.Expiry(Side(s), b.sides[s][0].Time); !ok || t < next {
			next, ok = t, true
		}
	}
	return next, ok
}

// Arrival is what the join emits for a newly arrived element.
type Arrival[V any] struct {
	// Late: the element is late (Rules.IsLate); it was not joined or
	// buffered.
	Late bool
	// Partners are the buffered elements of the other side it matches, in
	// time order: one pair each.
	Partners []Entry[V]
	// Retracted are the partners whose unmatched record is retracted before
	// the pairs (Retract mode, their first match).
	Retracted []Entry[V]
	// Unmatched: emit the new element as unmatched now.
	Unmatched bool
	// Marked: the arrival set the Matched flag of a partner that did not
	// have it.
	Marked bool
}

// Partners returns the buffered elements of the other side that an
// element of side s at ts matches, in time order: the pairs Add would make,
// found without changing the buffer. The slice is the buffer's own: read
// it before the buffer next changes, and do not modify it.
func (b *Buffer[V]) Partners(r Rules, s Side, ts int64) []Entry[V] {
	other := b.sides[s.Other()]
	from, to := r.PartnerRange(s, ts)
	i, j := timeRange(other, from, to)
	return other[i:j:j]
}

// Add joins a newly arrived element against the buffer and, unless it is
// late, buffers it. The element's Matched field is set from its partners.
func (b *Buffer[V]) Add(r Rules, e Entry[V]) Arrival[V] {
	out := b.Join(r, e)
	if !out.Late {
		e.Matched = len(out.Partners) > 0
		b.insert(e)
	}
	return out
}

// Join joins a newly arrived element against the buffer as Add does,
// marking its partners matched, without buffering it: for an element that
// Decided says needs no buffering.
func (b *Buffer[V]) Join(r Rules, e Entry[V]) Arrival[V] {
	if r.IsLate(e.Side, e.Time, b.Progress) {
		return Arrival[V]{Late: true}
	}
	var out Arrival[V]
	other := b.sides[e.Side.Other()]
	from, to := r.PartnerRange(e.Side, e.Time)
	i, j := timeRange(other, from, to)
	if j > i {
		out.Partners = append([]Entry[V](nil), other[i:j]...)
		for k := i; k < j; k++ {
			x := &other[k]
			if !x.Matched && r.RetractOnFirstMatch(x.Side) && !b.hasPartner(r, *x) {
				out.Retracted = append(out.Retracted, *x)
			}
			out.Marked = out.Marked || !x.Matched
			x.Matched = true
		}
	}
	out.Unmatched = r.UnmatchedOnArrival(e.Side, j > i)
	return out
}

// Decided reports whether the buffer decides the fate of a right element
// arriving now, for a key known to have at most one left element
// (join.UniqueLeft): the key's one left element is buffered, so no other
// can come, and the element's partners are that one or none. Such an
// element need not be buffered: Join joins it. The answer depends on what
// the buffer holds alone.
func (b *Buffer[V]) Decided() bool { return len(b.sides[Left]) == 1 }

// Expire removes every element whose Expiry is at or before now, the time of
// a cleanup timer that fired, and advances Progress to now. It returns the
// removed elements, left side first, with Matched settled.
func (b *Buffer[V]) Expire(r Rules, now int64) []Entry[V] {
	if now > b.Progress {
		b.Progress = now
	}
	var n [2]int
	for s := range b.sides {
		side := b.sides[s]
		n[s] = sort.Search(len(side), func(i int) bool { return r.Expiry(Side(s), side[i].Time) > now })
	}
	return b.removePrefixes(r, n)
}

// Evict removes the oldest elements by time, across both sides, until at
// most max remain; on equal times the left element goes first. It returns
// the removed elements, left side first, with Matched settled.
func (b *Buffer[V]) Evict(r Rules, max int) []Entry[V] {
	var n [2]int
	for excess := b.Len() - max; excess > 0; excess-- {
		left, right := b.sides[Left], b.sides[Right]
		if n[Right] == len(right) || (n[Left] < len(left) && left[n[Left]].Time <= right[n[Right]].Time) {
			n[Left]++
		} else {
			n[Right]++
		}
	}
	return b.removePrefixes(r, n)
}

// DropBefore removes every element older than cutoff, without changing
// Progress. It is the StreamJoiner's retention rule, which measures age
// against the largest timestamp seen rather than a watermark.
func (b *Buffer[V]) DropBefore(r Rules, cutoff int64) []Entry[V] {
	var n [2]int
	for s := range b.sides {
		side := b.sides[s]
		n[s] = sort.Search(len(side), func(i int) bool { return side[i].Time >= cutoff })
	}
	return b.removePrefixes(r, n)
}

// removePrefixes removes the first n[s] elements of each side. Before they
// go, it settles Matched on them and on the survivors that could have been
// their partners, so that no match is forgotten with them.
func (b *Buffer[V]) removePrefixes(r Rules, n [2]int) []Entry[V] {
	if n[Left] == 0 && n[Right] == 0 {
		return nil
	}
	for s := range b.sides {
		if n[s] == 0 {
			continue
		}
		side := b.sides[s]
		b.settle(r, side[:n[s]])
		from, _ := r.PartnerRange(Side(s), side[0].Time)
		_, to := r.PartnerRange(Side(s), side[n[s]-1].Time)
		other := b.sides[1-s]
		i, j := timeRange(other, from, to)
		b.settle(r, other[i:j])
	}
	removed := make([]Entry[V], 0, n[Left]+n[Right])
	for s := range b.sides {
		side := b.sides[s]
		removed = append(removed, side[:n[s]]...)
		for k := range side[:n[s]] {
			b.valueBytes -= valueLen(&side[k].Value)
		}
		// Zero the removed slots so their values can be collected, and
		// reslice: append reallocates before the dead prefix grows large.
		clear(side[:n[s]])
		b.sides[s] = side[n[s]:]
	}
	return removed
}

// settle marks each entry that has a buffered partner as matched.
func (b *Buffer[V]) settle(r Rules, entries []Entry[V]) {
	for k := range entries {
		if !entries[k].Matched && b.hasPartner(r, entries[k]) {
			entries[k].Matched = true
		}
	}
}

// hasPartner reports whether x has a partner buffered on the other side.
func (b *Buffer[V]) hasPartner(r Rules, x Entry[V]) bool {
	from, to := r.PartnerRange(x.Side, x.Time)
	i, j := timeRange(b.sides[x.Side.Other()], from, to)
	return j > i
}

// insert places e after every element of its side with time <= e.Time.
func (b *Buffer[V]) insert(e Entry[V]) {
	b.valueBytes += valueLen(&e.Value)
	side := b.sides[e.Side]
	if n := len(side); n == 0 || side[n-1].Time <= e.Time {
		b.sides[e.Side] = append(side, e)
		return
	}
	i := sort.Search(len(side), func(i int) bool { return side[i].Time > e.Time })
	side = append(side, Entry[V]{})
	copy(side[i+1:], side[i:])
	side[i] = e
	b.sides[e.Side] = side
}

// timeRange returns the index range [i, j) of entries with from <= Time <= to.
func timeRange[V any](side []Entry[V], from, to int64) (i, j int) {
	i = sort.Search(len(side), func(k int) bool { return side[k].Time >= from })
	j = i + sort.Search(len(side)-i, func(k int) bool { return side[i+k].Time > to })
	return i, j
}
