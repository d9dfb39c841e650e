package panes

// Golden state: bags as the window join's and cogroup's late-counting
// path writes them, kept in testdata/state/ so that every later release
// is checked to read state a running job wrote with an earlier one. A
// file is frozen once committed; a format change adds a file, it never
// rewrites one.

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/google/go-cmp/cmp"
)

var writeGolden = flag.String("write-golden", "", "write the golden state of today's encoders to testdata/state/`NAME`.hex (a new file only)")

// goldenBag is one key's bag in a golden file: its chunks in bag order.
type goldenBag struct {
	Name   string
	Chunks [][]byte
}

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

// encodeGolden is the golden state as today's encoders write it, in the
// shapes the late-counting path writes: a rewrite (State.Encode) followed
// by arrivals (AppendEntry); a rewrite with no progress; arrivals alone.
func encodeGolden() []goldenBag {
	return []goldenBag{
		{Name: "rewrite-and-arrivals", Chunks: [][]byte{
			State{Progress: 1_700_000_060_000, Entries: goldenEntries[:2]}.Encode(),
			AppendEntry(nil, goldenEntries[2]),
			AppendEntry(nil, goldenEntries[3]),
		}},
		{Name: "no-progress", Chunks: [][]byte{State{Progress: NoTime, Entries: goldenEntries[2:]}.Encode()}},
		{Name: "arrivals", Chunks: [][]byte{AppendEntry(nil, goldenEntries[0]), AppendEntry(nil, goldenEntries[3])}},
	}
}

// goldenWant is what every golden file decodes to, written out rather
// than derived from the encoders.
var goldenWant = map[string]State{
	"rewrite-and-arrivals": {Progress: 1_700_000_060_000, Entries: goldenEntries},
	"no-progress":          {Progress: NoTime, Entries: goldenEntries[2:]},
	"arrivals":             {Progress: NoTime, Entries: []Entry{goldenEntries[0], goldenEntries[3]}},
}

// formatGolden writes bags as text: a "bag NAME" line, then one chunk
// per line in hex.
func formatGolden(bags []goldenBag) []byte {
	var b bytes.Buffer
	b.WriteString("# Window join and cogroup late-counting state (package panes), one chunk per line in hex.\n")
	b.WriteString("# Frozen: a later release must decode it as golden_test.go says.\n")
	for _, g := range bags {
		fmt.Fprintf(&b, "bag %s\n", g.Name)
		for _, c := range g.Chunks {
			fmt.Fprintf(&b, "%x\n", c)
		}
	}
	return b.Bytes()
}

// readGolden parses a file written by formatGolden.
func readGolden(t *testing.T, path string) []goldenBag {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bags []goldenBag
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch kind, name, _ := strings.Cut(line, " "); {
		case line == "" || strings.HasPrefix(line, "#"):
		case kind == "bag":
			bags = append(bags, goldenBag{Name: name})
		default:
			c, err := hex.DecodeString(line)
			if err != nil || len(bags) == 0 {
				t.Fatalf("%s:%d: not a chunk in hex after a bag line: %q", path, n, line)
			}
			bags[len(bags)-1].Chunks = append(bags[len(bags)-1].Chunks, c)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return bags
}

// TestWriteGolden writes a new golden file when -write-golden is given; it
// never overwrites one.
func TestWriteGolden(t *testing.T) {
	if *writeGolden == "" {
		t.Skip("no -write-golden")
	}
	path := filepath.Join("testdata", "state", *writeGolden+".hex")
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("%s exists: golden files are frozen", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, formatGolden(encodeGolden()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkGolden decodes every bag of a golden file and compares it with
// goldenWant.
func checkGolden(t *testing.T, path string) {
	t.Helper()
	bags := readGolden(t, path)
	if len(bags) != len(goldenWant) {
		t.Errorf("%s holds %d bags, want %d", path, len(bags), len(goldenWant))
	}
	for _, g := range bags {
		got, err := Decode(g.Chunks)
		if err != nil {
			t.Errorf("%s: %s: %v", path, g.Name, err)
			continue
		}
		want, ok := goldenWant[g.Name]
		if !ok {
			t.Errorf("%s: unexpected bag %q", path, g.Name)
			continue
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })); diff != "" {
			t.Errorf("%s: %s decoded (-want +got):\n%s", path, g.Name, diff)
		}
	}
}

// TestGoldenUnversioned reads state in the format of the releases that
// wrote no format version (testdata/state/unversioned.hex).
func TestGoldenUnversioned(t *testing.T) {
	checkGolden(t, filepath.Join("testdata", "state", "unversioned.hex"))
}

// TestGoldenVersion1 reads state in format version 1
// (testdata/state/v1.hex), and checks that today's encoders still write
// exactly those bytes: a change to the format must raise the version and
// add a golden file, not change what version 1 means.
func TestGoldenVersion1(t *testing.T) {
	path := filepath.Join("testdata", "state", "v1.hex")
	checkGolden(t, path)
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(formatGolden(encodeGolden()))); diff != "" {
		t.Errorf("today's encoders no longer write %s (-golden +today):\n%s", path, diff)
	}
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
