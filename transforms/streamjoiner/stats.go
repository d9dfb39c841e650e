package streamjoiner

// This file holds Stats, the StreamJoiner's account of every element it
// was given.

import "github.com/beamjoin/beamjoin/transforms/internal/match"

// Stats counts what a StreamJoiner did with the elements it was given,
// since New: per side, and the pairs. Every count only grows except
// Buffered, and Clear does not reset them.
//
// A Stats from StreamJoiner.Stats is a consistent snapshot, taken while no
// call is in progress, so its equations hold exactly, per side, at any
// time, also under concurrent callers:
//
//	In = Buffered + Evicted + Dropped + Cleared
//
// Every accepted element is still buffered, or left the buffers once, in
// one of three ways. And, since outer join types emit an element that finds
// no partner on arrival at once, before a partner may still come:
//
//	In = Matched + Unmatched - MatchedAfterUnmatched   (an outer side)
//	Unmatched = MatchedAfterUnmatched = 0              (an inner side)
//
// Each accepted element found a partner on arrival or did not; on an outer
// side the latter were emitted unmatched, and MatchedAfterUnmatched counts
// those of them that a later partner paired after all, whose unmatched
// record the pair supersedes. In - Matched elements have not been in any
// pair (yet, if still buffered). Elements refused with an error are in
// Rejected and in none of the other counts.
type Stats struct {
	Left, Right SideStats
	// Pairs is the number of pair records returned.
	Pairs int64
}

// SideStats counts the elements of one side; see Stats for how the counts
// add up.
type SideStats struct {
	// In is the number of elements accepted: joined and buffered.
	In int64
	// Rejected is the number of elements refused with an error, whose call
	// changed nothing else: a key selector that returned no usable key, or
	// a JoinFunc that failed on one of the element's records.
	Rejected int64
	// Matched is the number of accepted elements that have been in at least
	// one pair.
	Matched int64
	// Unmatched is the number of elements emitted alone on arrival, with no
	// partner (outer join types only).
	Unmatched int64
	// MatchedAfterUnmatched is the number of elements emitted alone on
	// arrival that a partner arriving later then paired.
	MatchedAfterUnmatched int64
	// Evicted is the number of elements removed to keep MaxStateSize.
	Evicted int64
	// Dropped is the number of elements removed by StateRetention.
	Dropped int64
	// Cleared is the number of elements that Clear removed.
	Cleared int64
	// Buffered is the number of elements buffered now.
	Buffered int64
}

// Stats returns the joiner's counts so far.
func (j *StreamJoiner[K, L, R, O]) Stats() Stats {
	j.mu.Lock()
	defer j.mu.Unlock()
	st := j.stats
	st.Left.Buffered = int64(j.sizes[match.Left])
	st.Right.Buffered = int64(j.sizes[match.Right])
	return st
}

// side returns the counts of side s.
func (st *Stats) side(s match.Side) *SideStats {
	if s == match.Left {
		return &st.Left
	}
	return &st.Right
}
