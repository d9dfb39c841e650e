// Package goldenstate keeps the golden state files of beamjoin's tests:
// the bytes that a release's encoders write into a runner's state (a
// key's bag, a restriction, a watermark estimator's state), kept in a
// package's testdata/state/ so that every later release is checked to
// read what a running job wrote with an earlier one. A file is frozen
// once committed; a format change adds a file, it never rewrites one.
//
// A golden file is text: comment lines, then records, each a "KIND NAME"
// line followed by the record's chunks in hex, one a line:
//
//	# Interval join state (package bagstate), one chunk per line in hex.
//	# Frozen: a later release must decode it as golden_test.go says.
//	bag no-progress
//	0502002700
//
// A package's golden_test.go says what it encodes and how it decodes
// (the records of a File, a decode function and the values it must
// give); this package does the rest:
//
//	func TestWriteGolden(t *testing.T) { goldenstate.Write(t, goldenFile()) }
//
//	func TestGoldenVersion1(t *testing.T) {
//		path := goldenstate.Path("v1")
//		goldenstate.Check(t, path, goldenWant, decodeGolden)
//		goldenstate.CheckBytes(t, path, goldenFile())
//	}
//
// Write writes a new file only when the test binary runs with
// -write-golden=NAME (go test -run TestWriteGolden -write-golden=v2), and
// never overwrites one.
//
// The package is for tests: it imports testing, and registers the
// -write-golden flag in the binaries that import it.
package goldenstate
