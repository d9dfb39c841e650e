// Package coders says how beamjoin encodes what it keeps in Beam state and
// passes between its stages.
//
// Two things live here:
//
//   - Element, a value coder taken from a PCollection's own Beam coder, so
//     that buffered elements are encoded exactly as Beam encodes them: any
//     user type with a Beam coder (a registered custom coder, a schema row,
//     a primitive) can be joined, not only strings. An Element is a plain
//     struct that travels inside a DoFn and rebuilds its encoder in Setup.
//   - The chunk format of the interval join's state: a bag element holds
//     one chunk, a run of buffered entries (side, event time, matched flag,
//     encoded value), optionally the key's cleanup progress and, in the
//     bucketed layout (join.HotKeyBuckets), a directory of the time buckets
//     kept in map state, whose values are chunks of entries too. Arrivals
//     append a one-entry chunk; cleanup rewrites the bag as one chunk
//     (EncodeState). Keeping many entries per bag element is what lets a
//     rewrite cost one state append instead of one per surviving element.
package coders
