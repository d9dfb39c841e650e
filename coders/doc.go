// Package coders says how beamjoin encodes the values it buffers and passes
// between its stages.
//
// Element is a value coder taken from a PCollection's own Beam coder, so
// that buffered elements are encoded exactly as Beam encodes them: any user
// type with a Beam coder (a registered custom coder, a schema row, a
// primitive) can be joined, not only strings. An Element is a plain struct
// that travels inside a DoFn and rebuilds its encoder in Setup.
package coders
