package panes

// Golden state (internal/goldenstate): bags as the window join's and
// cogroup's late-counting path writes them, kept in testdata/state/ so
// that every later release is checked to read state a running job wrote
// with an earlier one.

import (
	"bytes"
	"strings"
	"testing"

	"github.com/beamjoin/beamjoin/internal/goldenstate"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/google/go-cmp/cmp"
)

// goldenEntries are the entries of the golden bags: both sides, judged
// and matched or not, with and without From and Through (a session's
// "reported" too), negative, zero and large times, an empty value and one
// longer than a one-byte length.
var goldenEntries = []Entry{
	{Side: match.Left, Time: 1_700_000_000_000, Value: []byte("order-1"), From: NoTime, Through: NoTime},
	{Side: match.Right, Time: 1_700_000_000_500, Value: []byte("payment-1"), From: 1_700_000_000_000, Through: 1_700_000_060_000, Judged: true, Matched: true},
	{Side: match.Left, Time: -20, Value: []byte{}, From: NoTime, Through: reported, Judged: true},
	{Side: match.Right, Time: 0, Value: []byte(strings.Repeat("p", 200)), From: -60_000, Through: NoTime, Matched: true},
}

// goldenFile is the golden state as today's encoders write it, in the
// shapes the late-counting path writes: a rewrite (State.Encode) followed
// by arrivals (AppendEntry); a rewrite with no progress; arrivals alone.
func goldenFile() goldenstate.File {
	return goldenstate.File{
		Header: []string{"Window join and cogroup late-counting state (package panes), one chunk per line in hex."},
		Records: []goldenstate.Record{
			{Kind: "bag", Name: "rewrite-and-arrivals", Chunks: [][]byte{
				State{Progress: 1_700_000_060_000, Entries: goldenEntries[:2]}.Encode(),
				AppendEntry(nil, goldenEntries[2]),
				AppendEntry(nil, goldenEntries[3]),
			}},
			{Kind: "bag", Name: "no-progress", Chunks: [][]byte{State{Progress: NoTime, Entries: goldenEntries[2:]}.Encode()}},
			{Kind: "bag", Name: "arrivals", Chunks: [][]byte{AppendEntry(nil, goldenEntries[0]), AppendEntry(nil, goldenEntries[3])}},
		},
	}
}

// goldenWant is what every golden file decodes to, written out rather
// than derived from the encoders.
var goldenWant = map[string]State{
	"bag rewrite-and-arrivals": {Progress: 1_700_000_060_000, Entries: goldenEntries},
	"bag no-progress":          {Progress: NoTime, Entries: goldenEntries[2:]},
	"bag arrivals":             {Progress: NoTime, Entries: []Entry{goldenEntries[0], goldenEntries[3]}},
}

// TestWriteGolden writes a new golden file when -write-golden is given; it
// never overwrites one.
func TestWriteGolden(t *testing.T) { goldenstate.Write(t, goldenFile()) }

// checkGolden decodes every bag of a golden file and compares it with
// goldenWant.
func checkGolden(t *testing.T, path string) {
	t.Helper()
	decode := func(r goldenstate.Record) (State, error) { return Decode(r.Chunks) }
	goldenstate.Check(t, path, goldenWant, decode, cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) }))
}

// TestGoldenUnversioned reads state in the format of the releases that
// wrote no format version (testdata/state/unversioned.hex).
func TestGoldenUnversioned(t *testing.T) {
	checkGolden(t, goldenstate.Path("unversioned"))
}

// TestGoldenVersion1 reads state in format version 1
// (testdata/state/v1.hex), and checks that today's encoders still write
// exactly those bytes: a change to the format must raise the version and
// add a golden file, not change what version 1 means.
func TestGoldenVersion1(t *testing.T) {
	path := goldenstate.Path("v1")
	checkGolden(t, path)
	goldenstate.CheckBytes(t, path, goldenFile())
}

// TestStateFormatVersion: a rewrite starts with a version record (tag
// 0x40, then the version as a zig-zag varint: 0x40 0x02 for version 1);
// a bag may mix unversioned chunks (an older release's, or this release's
// arrivals) with versioned ones; a chunk of a newer version is refused
// naming both versions, as are version 0 and a version record inside a
// chunk.
func TestStateFormatVersion(t *testing.T) {
	rewrite := State{Progress: 5, Entries: goldenEntries[1:2]}.Encode()
	if !bytes.HasPrefix(rewrite, []byte{0x40, 0x02}) {
		t.Errorf("a rewrite starts % x, want the version record 40 02", rewrite[:min(len(rewrite), 2)])
	}
	if got := (State{Progress: NoTime}).Encode(); got != nil {
		t.Errorf("an empty state encodes to % x, want nothing", got)
	}
	mixed := [][]byte{AppendEntry(nil, goldenEntries[0]), rewrite, append([]byte{0x40, 0x02}, AppendEntry(nil, goldenEntries[2])...)}
	st, err := Decode(mixed)
	if err != nil {
		t.Fatal(err)
	}
	want := State{Progress: 5, Entries: goldenEntries[:3]}
	if diff := cmp.Diff(want, st, cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })); diff != "" {
		t.Errorf("mixed bag decoded (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name   string
		chunks [][]byte
		want   string
	}{
		{"newer_version", [][]byte{AppendEntry(nil, goldenEntries[0]), append([]byte{0x40, 0x04}, AppendEntry(nil, goldenEntries[0])...)},
			"beamjoin: window state chunk 1 is in state format version 2, newer than version 1, the newest this release reads (was the pipeline updated to an older beamjoin release?)"},
		{"version_0", [][]byte{{0x40, 0x00}}, "beamjoin: window state chunk 0: invalid state format version 0"},
		{"version_inside_chunk", [][]byte{append(AppendEntry(nil, goldenEntries[0]), 0x40, 0x02)}, "beamjoin: window state chunk 0: a format version record not at the start of its chunk"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Decode(tc.chunks); err == nil || err.Error() != tc.want {
				t.Errorf("Decode() error = %v, want %q", err, tc.want)
			}
		})
	}
}
