// Package match is beamjoin's matching core: the rules that decide which
// elements of two keyed streams join, when a buffered element can be
// forgotten, which arrivals are late, and what an outer join reports. It is
// plain Go with no Beam import; the Beam interval join (package join) and the
// in-memory StreamJoiner (package streamjoiner) both only move data between
// their storage and this package, so they cannot disagree.
//
// Each rule is one method of Rules:
//
//   - Matches, the match rule: left l and right r match iff
//     lower <= ts(r) - ts(l) <= upper (Bounds; ends inclusive unless
//     exclusive). The left element is always the reference, so the result
//     depends only on which elements are present, not on arrival order.
//   - Expiry, the cleanup rule: a left element can be matched until event
//     time passes ts + max(upper, 0), a right element until
//     ts + max(-lower, 0), plus the allowed lateness.
//   - IsLate, the lateness rule: an element is late iff one of its potential
//     partners may already have been cleaned up on its key.
//   - UnmatchedOnArrival, RetractOnFirstMatch and UnmatchedOnRemoval, the
//     outer-emission decisions of the Immediate, Final and Retract modes.
//   - FateOf, what finally became of an element, for counters that add up.
//
// Buffer holds one key's elements of both sides and applies the rules: Add
// joins an arrival, Expire runs cleanup at a timer's time, Evict enforces a
// size cap oldest-first.
package match
