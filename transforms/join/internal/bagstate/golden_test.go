package bagstate

// Golden state (internal/goldenstate): bags as the interval join writes
// them, kept in testdata/state/ so that every later release is checked to
// read state a running job wrote with an earlier one.

import (
	"bytes"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/beamjoin/beamjoin/internal/goldenstate"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/google/go-cmp/cmp"
)

func entry(side match.Side, ts int64, matched bool, v string) match.Entry[[]byte] {
	return match.Entry[[]byte]{Side: side, Time: ts, Matched: matched, Value: []byte(v)}
}

// goldenEntries are the entries of the golden bags: both sides, matched
// and not, negative, zero and large times, an empty value and one longer
// than a one-byte length.
var goldenEntries = []match.Entry[[]byte]{
	entry(match.Left, 1_700_000_000_000, true, "order-1"),
	entry(match.Right, 1_700_000_000_500, true, "payment-1"),
	entry(match.Left, -20, false, ""),
	entry(match.Right, 0, false, strings.Repeat("p", 200)),
}

// goldenBuckets is the directory of the bucketed golden bag.
var goldenBuckets = []Bucket{
	{ID: -3, Count: [2]int{1, 0}, Oldest: [2]int64{-20, 0}},
	{ID: 28_333_333, Count: [2]int{2, 1}, Oldest: [2]int64{1_700_000_000_000, 1_700_000_000_500}},
}

// goldenFile is the golden state as today's encoders write it: the bags of
// version 1 (goldenFileV1), and a key that went hot (version 2): a
// rewrite, its split record (SplitChunk) and an arrival after it.
func goldenFile() goldenstate.File {
	f := goldenFileV1()
	f.Records = append(f.Records, goldenstate.Record{Kind: "bag", Name: "hot-key", Chunks: [][]byte{
		EncodeState(1_699_999_990_000, nil, goldenEntries[:2]),
		SplitChunk(1_700_000_001_000),
		AppendEntry(nil, goldenEntries[2]),
	}})
	return f
}

// goldenFileV1 is the golden state of version 1, which today's encoders
// still write for every bag without a split record, in the shapes the
// join writes: a rewrite (EncodeState) followed by arrivals (AppendEntry,
// one with the progress of a recalled key) and cleanup records
// (AppendCleanup); a bucketed key's bag; a bucket's value (EncodeEntries,
// a "bucket" record); a bag with no progress.
func goldenFileV1() goldenstate.File {
	return goldenstate.File{
		Header: []string{"Interval join state (package bagstate), one chunk per line in hex."},
		Records: []goldenstate.Record{
			{Kind: "bag", Name: "bag-layout", Chunks: [][]byte{
				EncodeState(1_699_999_990_000, nil, goldenEntries[:2]),
				AppendEntry(nil, goldenEntries[2]),
				AppendCleanup(nil, 1_700_000_060_000),
				AppendProgress(AppendEntry(nil, goldenEntries[3]), 1_700_000_060_000),
			}},
			{Kind: "bag", Name: "bucketed", Chunks: [][]byte{
				EncodeState(1_699_999_000_000, goldenBuckets, goldenEntries[3:]),
				AppendEntry(nil, goldenEntries[2]),
			}},
			{Kind: "bucket", Name: "bucket-value", Chunks: [][]byte{EncodeEntries(goldenEntries[:2])}},
			{Kind: "bag", Name: "no-progress", Chunks: [][]byte{EncodeState(match.NoProgress, nil, goldenEntries[2:3])}},
		},
	}
}

// goldenWant is what every golden file decodes to, written out rather
// than derived from the encoders. For a bucket's value, only Entries.
var goldenWant = map[string]State{
	"bag bag-layout": {
		Progress: 1_700_000_060_000,
		Entries:  goldenEntries,
		Cleanups: []Cleanup{{At: 1_700_000_060_000, Entries: 3, Progress: 1_699_999_990_000}},
		Split:    match.NoProgress,
	},
	"bag bucketed": {
		Progress: 1_699_999_000_000,
		Entries:  []match.Entry[[]byte]{goldenEntries[3], goldenEntries[2]},
		Buckets:  goldenBuckets,
		Split:    match.NoProgress,
	},
	"bucket bucket-value": {Entries: goldenEntries[:2]},
	"bag no-progress":     {Progress: match.NoProgress, Entries: goldenEntries[2:3], Split: match.NoProgress},
	"bag hot-key":         {Progress: 1_699_999_990_000, Entries: goldenEntries[:3], Split: 1_700_000_001_000},
}

// TestWriteGolden writes a new golden file when -write-golden is given; it
// never overwrites one.
func TestWriteGolden(t *testing.T) { goldenstate.Write(t, goldenFile()) }

// decodeGolden decodes a golden bag as the join does: a key's bag with
// DecodeState, a bucket's value with DecodeEntries.
func decodeGolden(r goldenstate.Record) (State, error) {
	if r.Kind != "bucket" {
		return DecodeState(r.Chunks)
	}
	if len(r.Chunks) != 1 {
		return State{}, fmt.Errorf("bucket %s has %d chunks, want 1", r.Name, len(r.Chunks))
	}
	e, err := DecodeEntries(r.Chunks[0])
	return State{Entries: e}, err
}

// checkGolden decodes every bag of a golden file and compares it with
// goldenWant, less the bags of later versions (without).
func checkGolden(t *testing.T, path string, without ...string) {
	t.Helper()
	want := maps.Clone(goldenWant)
	for _, k := range without {
		delete(want, k)
	}
	goldenstate.Check(t, path, want, decodeGolden, cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) }))
}

// TestGoldenUnversioned reads state in the format of the releases that
// wrote no format version (testdata/state/unversioned.hex).
func TestGoldenUnversioned(t *testing.T) {
	checkGolden(t, goldenstate.Path("unversioned"), "bag hot-key")
}

// TestGoldenVersion1 reads state in format version 1
// (testdata/state/v1.hex), and checks that today's encoders still write
// exactly those bytes for a bag without a split record: a change to the
// format must raise Version and add a golden file, not change what
// version 1 means.
func TestGoldenVersion1(t *testing.T) {
	path := goldenstate.Path("v1")
	checkGolden(t, path, "bag hot-key")
	goldenstate.CheckBytes(t, path, goldenFileV1())
}

// TestGoldenVersion2 reads state in format version 2
// (testdata/state/v2.hex: version 1's bags and a hot key's), and checks
// that today's encoders write exactly those bytes.
func TestGoldenVersion2(t *testing.T) {
	path := goldenstate.Path("v2")
	checkGolden(t, path)
	if Version != 2 {
		return
	}
	goldenstate.CheckBytes(t, path, goldenFile())
}

// TestStateFormatVersion: a bag may mix unversioned chunks (an older
// release's, or this release's appends) with versioned ones; a chunk of a
// newer version is refused naming both versions, as are version 0 and a
// version record inside a chunk.
func TestStateFormatVersion(t *testing.T) {
	mixed := [][]byte{
		AppendEntry(nil, goldenEntries[0]),
		EncodeState(5, nil, goldenEntries[1:2]),
		AppendEntry(AppendVersion(nil, Version), goldenEntries[2]),
		AppendCleanup(nil, 9),
	}
	st, err := DecodeState(mixed)
	if err != nil {
		t.Fatal(err)
	}
	want := State{Progress: 5, Entries: goldenEntries[:3], Cleanups: []Cleanup{{At: 9, Entries: 3, Progress: 5}}, Split: match.NoProgress}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("mixed bag decoded (-want +got):\n%s", diff)
	}

	future := AppendEntry(AppendVersion(nil, Version+1), goldenEntries[0])
	tests := []struct {
		name   string
		chunks [][]byte
		want   string
	}{
		{"newer_version", [][]byte{AppendEntry(nil, goldenEntries[0]), future},
			fmt.Sprintf("beamjoin: bagstate: state chunk 1 is in state format version %d, newer than version %d, the newest this release reads (was the pipeline updated to an older beamjoin release?)", Version+1, Version)},
		{"version_0", [][]byte{AppendVersion(nil, 0)}, "beamjoin: bagstate: state chunk 0 at byte 0: invalid state format version 0"},
		{"version_inside_chunk", [][]byte{AppendVersion(AppendProgress(nil, 3), Version)}, "beamjoin: bagstate: state chunk 0 at byte 2: a format version record not at the start of its chunk"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := DecodeState(tc.chunks); err == nil || err.Error() != tc.want {
				t.Errorf("DecodeState() error = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := DecodeEntries(future); err == nil || !strings.Contains(err.Error(), "newer than version") {
		t.Errorf("DecodeEntries() of a newer bucket value: error = %v, want the version named", err)
	}
}
