// Package streamjoiner joins two streams in memory, element by element, by
// key and time bounds: a plain-Go StreamJoiner for tests and single-process
// programs, which runs no Beam pipeline. It decides matches with the same
// matching core as beamjoin's Beam interval join, so the two agree on which
// elements pair, and it speaks the join's words: its join types are
// join.Type values (join.Inner, join.LeftOuter, …) and the sides it names
// are join.Side values. (Importing package join for them brings the Beam SDK
// into the build.)
//
// # Joining
//
// A StreamJoiner is built from the two key selectors, a JoinFunc and
// options, in the style of package join's (go-cmp's: options are values):
//
//	j, err := streamjoiner.New(
//		func(o Order) string { return o.UserID },
//		func(u User) string { return u.ID },
//		func(o *Order, u *User) (Enriched, error) {
//			return Enriched{OrderID: o.ID, Name: u.Name}, nil
//		},
//		streamjoiner.Between(-10*time.Second, 10*time.Second),
//		streamjoiner.LeftTime(func(o Order) int64 { return o.At }),
//		streamjoiner.RightTime(func(u User) int64 { return u.At }))
//
// New validates the options once; afterwards every element is fed
// with ProcessLeft or ProcessRight, which returns the records the element
// produced. An element is first matched against the other side's buffered
// elements with the same key, then buffered itself, so whichever of two
// partners arrives second produces their pair.
//
// # Matching
//
// A left element l and a right element r match iff their keys are equal and
// r's timestamp lies within the bounds given by Between, as in the Beam
// interval join's join.Between(lower, upper):
//
//	lower <= ts(r) - ts(l) <= upper
//
// (LowerExclusive and UpperExclusive exclude the ends.) The left element is
// always the reference, whichever arrives first, so the pairs produced
// depend only on which elements have been fed, not on their order (as long
// as neither was dropped in between, see below).
//
// Timestamps are milliseconds since the Unix epoch, read by the functions
// given with LeftTime and RightTime. A side without one is stamped with the
// Clock when its element arrives, so its elements pair by arrival time.
//
// # Join types and outer records
//
// An Inner join emits pairs only. LeftOuter, RightOuter and FullOuter also
// emit an element of their outer side(s) alone, with a nil partner, and do
// so immediately: when it arrives and no partner is buffered. There is no
// waiting and no retraction. If a partner arrives later, still inside the
// bounds, the pair is emitted as a further record, so downstream sees the
// element first unmatched and then matched and must tolerate or
// deduplicate that. (The Beam interval join's EmitFinal and EmitRetract
// modes avoid it; they need event time, which a StreamJoiner does not
// have.)
//
// # Memory
//
// Two limits keep the buffers small, and neither emits anything:
//
//   - MaxStateSize caps the elements buffered on both sides across all keys.
//     After an element is buffered, the oldest elements by timestamp are
//     evicted until the cap holds again; on equal timestamps a left element
//     goes before a right one.
//   - StateRetention drops, after every element, everything older than the
//     largest timestamp seen so far minus the retention. The reference is
//     the data, not the clock, so a StreamJoiner replays historical
//     timestamps the same way at any time. The retention must be at least
//     the span of the bounds, so that no element a newly arrived one could match
//     has been dropped.
//
// An element that arrives older than the retention still joins whatever is
// buffered, and is then dropped at once.
//
// Both limits find the oldest elements through an index of keys ordered by
// their oldest element, so the cost of an element does not grow with the
// number of keys; within a key, partners are found by binary search.
//
// # Errors
//
// Construction errors name the field at fault. A key selector that returns
// no key — nil (a nil pointer, or an interface K holding nil) or the empty
// string; 0 and other zero values are keys — makes ProcessLeft or
// ProcessRight fail with an error naming the side, for which
// errors.Is(err, ErrEmptyKey) holds. A key that cannot be one fails the
// same way, with ErrUnusableKey: a key holding a value that cannot be
// compared (a slice, map or func in an interface K, or in an interface
// field of a struct K), which a Go map cannot hash, or a key holding a NaN,
// which equals nothing, so that no element could ever match it. A JoinFunc
// that fails makes the call return its error, wrapped, and no records.
// Every such failed call changes nothing but Stats' Rejected count: the
// element is not buffered and nothing is evicted or dropped for it, so a
// caller may call again with the same element without getting a pair
// twice.
//
// # Accounting
//
// Stats counts, per side, the elements accepted, rejected, matched,
// emitted unmatched, evicted, dropped, cleared and buffered, and the pairs,
// in a snapshot in which every accepted element is accounted for exactly
// once (see Stats for the equations).
//
// # Concurrency
//
// All methods of a StreamJoiner may be called from many goroutines. They
// take turns on one lock, so the functions given to New
// are never called concurrently by the same joiner.
package streamjoiner
