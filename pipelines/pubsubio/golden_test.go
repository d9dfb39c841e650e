package pubsubio

// Golden state: the read's restriction (cursor) and watermark estimator
// state (clock) as releases wrote them, kept in testdata/state/ so that
// every later release is checked to read what a running job persisted
// with an earlier one (across a Flink savepoint or a Dataflow update). A
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

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/google/go-cmp/cmp"

	"github.com/beamjoin/beamjoin/pipelines/internal/skew"
)

var writeGolden = flag.String("write-golden", "", "write the golden state of today's encoders to testdata/state/`NAME`.hex (a new file only)")

// goldenValue is one encoded value of a golden file.
type goldenValue struct {
	Kind, Name string // Kind: "cursor" or "clock"
	Bytes      []byte
}

// goldenCursors and goldenClocks are the values of the golden files of
// version 1 and later, in the shapes a read makes: an initial cursor, a
// reader's, a residual naming the messages to acknowledge, a drained one;
// a new clock, a reading one, a silent reader's, and one awaiting handed
// back messages with a run of skewed times.
var goldenCursors = []struct {
	Name string
	C    cursor
}{
	{"initial", cursor{Subscription: "projects/shop/subscriptions/orders", ID: "5f1c2a9e0b7d4c31/c1", Group: "5f1c2a9e0b7d4c31/c1"}},
	{"reader", cursor{Subscription: "projects/shop/subscriptions/orders", Group: "5f1c2a9e0b7d4c31/c1", Reader: 2, ID: "5f1c2a9e0b7d4c31/c4"}},
	{"residual", cursor{Subscription: "projects/shop/subscriptions/orders", Group: "5f1c2a9e0b7d4c31/c1", Reader: 1, ID: "9a8b7c6d5e4f3a2b/c17",
		Lease: "9a8b7c6d5e4f3a2b/16", Emitted: []string{"projects/shop/subscriptions/orders:1714554000000-17", "ack-2", ""}}},
	{"done", cursor{}},
}

var goldenClocks = []struct {
	Name string
	C    clock
}{
	{"new", newClock()},
	{"reading", clock{MaxTime: 1714554005000, Watermark: 1714554000000, Quiet: 1500, Active: 86_400_000, Base: noTime, Skew: skew.State{Earliest: skew.None}}},
	{"silent", clock{MaxTime: noTime, Watermark: 1780000000000, Quiet: 12_000, Active: 13_000, Base: 1779999990000, Skew: skew.State{Earliest: skew.None}}},
	{"awaiting", clock{MaxTime: 1714554005000, Watermark: 1714554001000, Active: 700_000, Base: noTime,
		Skew:    skew.State{Ahead: 2, Earliest: 1714554000000000},
		Awaited: []awaited{{ID: "17", Time: 1714554001002, Since: 600_000}, {ID: "18", Time: -5, Since: 0}}}},
}

// encodeGolden is the golden state as today's encoders write it.
func encodeGolden() []goldenValue {
	var out []goldenValue
	for _, c := range goldenCursors {
		out = append(out, goldenValue{"cursor", c.Name, encodeCursor(c.C)})
	}
	for _, c := range goldenClocks {
		out = append(out, goldenValue{"clock", c.Name, encodeClock(c.C)})
	}
	return out
}

// goldenWant is what every value of a golden file decodes to, by file,
// written out rather than derived from the encoders.
var goldenWant = map[string]map[string]any{
	// The unversioned row encoding of the releases before version 1
	// (written by Beam's row coder from the types cursorV0 and clockV0
	// are frozen copies of). A clock keeps its largest time and its
	// watermark; its quiet time and its wait for handed-back messages
	// start afresh.
	"unversioned.hex": {
		"cursor initial":  goldenCursors[0].C,
		"cursor reader":   goldenCursors[1].C,
		"cursor residual": goldenCursors[2].C,
		"cursor done":     cursor{},
		"clock new":       newClock(),
		"clock reading":   clock{MaxTime: 1714554005000, Watermark: 1714554000000, Base: noTime, Skew: skew.State{Earliest: skew.None}},
		"clock awaiting": clock{MaxTime: 1714554005000, Watermark: 1714554001000, Base: noTime, Skew: skew.State{Earliest: skew.None},
			Awaited: []awaited{{ID: "17", Time: 1714554001002}, {ID: "18", Time: -5}}},
	},
	"v1.hex": {
		"cursor initial":  goldenCursors[0].C,
		"cursor reader":   goldenCursors[1].C,
		"cursor residual": goldenCursors[2].C,
		"cursor done":     cursor{},
		"clock new":       clock{MaxTime: noTime, Watermark: int64(mtime.MinTimestamp), Base: noTime, Skew: skew.State{Earliest: skew.None}},
		"clock reading":   goldenClocks[1].C,
		"clock silent":    goldenClocks[2].C,
		"clock awaiting":  goldenClocks[3].C,
	},
}

// formatGolden writes values as text: a "KIND NAME" line, then the value
// in hex.
func formatGolden(values []goldenValue) []byte {
	var b bytes.Buffer
	b.WriteString("# Pub/Sub read state (package pubsubio): the restriction (cursor) and the\n")
	b.WriteString("# watermark estimator state (clock), one value per line in hex.\n")
	b.WriteString("# Frozen: a later release must decode it as golden_test.go says.\n")
	for _, v := range values {
		fmt.Fprintf(&b, "%s %s\n%x\n", v.Kind, v.Name, v.Bytes)
	}
	return b.Bytes()
}

// readGolden parses a golden file.
func readGolden(t *testing.T, path string) []goldenValue {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var values []goldenValue
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch kind, name, _ := strings.Cut(line, " "); {
		case line == "" || strings.HasPrefix(line, "#"):
		case kind == "cursor" || kind == "clock":
			values = append(values, goldenValue{Kind: kind, Name: name})
		default:
			b, err := hex.DecodeString(line)
			if err != nil || len(values) == 0 || values[len(values)-1].Bytes != nil {
				t.Fatalf("%s:%d: not a value in hex after a cursor or clock line: %q", path, n, line)
			}
			values[len(values)-1].Bytes = b
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return values
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
	if err := os.WriteFile(path, formatGolden(encodeGolden()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGoldenState decodes every value of every golden file, as the
// runner hands them to a reader, and compares them with goldenWant; and
// checks that today's encoders still write the file of StateVersion
// byte for byte: a change to the format must raise StateVersion and add a
// golden file, not change what a version means.
func TestGoldenState(t *testing.T) {
	for file, want := range goldenWant {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join("testdata", "state", file)
			values := readGolden(t, path)
			got := map[string]any{}
			for _, v := range values {
				var x any
				var err error
				if v.Kind == "cursor" {
					x, err = decodeCursor(v.Bytes)
				} else {
					x, err = decodeClock(v.Bytes)
				}
				if err != nil {
					t.Errorf("%s: %s %s: %v", path, v.Kind, v.Name, err)
				}
				got[v.Kind+" "+v.Name] = x
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(cursor{}, clock{}, awaited{})); diff != "" {
				t.Errorf("%s decoded (-want +got):\n%s", path, diff)
			}
		})
	}
	path := filepath.Join("testdata", "state", fmt.Sprintf("v%d.hex", StateVersion))
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(golden), string(formatGolden(encodeGolden()))); diff != "" {
		t.Errorf("today's encoders no longer write %s (-golden +today):\n%s", path, diff)
	}
}

// TestStateFormatErrors: state of a newer version is refused naming both
// versions, and state that is empty, cut short or corrupt is refused
// saying which state and where.
func TestStateFormatErrors(t *testing.T) {
	residual := encodeCursor(goldenCursors[2].C)
	awaiting := encodeClock(goldenClocks[3].C)
	newer := append([]byte{0}, byte(StateVersion+1))
	for _, tc := range []struct {
		name string
		b    []byte
		clk  bool
		want string
	}{
		{"newer_cursor", append(newer, residual[2:]...), false, fmt.Sprintf("beamjoin: pubsubio: the read's restriction (cursor) is in state format version %d, newer than version %d, the newest this release reads (was the pipeline updated to an older beamjoin release?)", StateVersion+1, StateVersion)},
		{"newer_clock", append(newer, awaiting[2:]...), true, fmt.Sprintf("beamjoin: pubsubio: the read's watermark estimator state (clock) is in state format version %d, newer than version %d, the newest this release reads (was the pipeline updated to an older beamjoin release?)", StateVersion+1, StateVersion)},
		{"empty", nil, false, "beamjoin: pubsubio: the read's restriction (cursor) (0 bytes): empty"},
		{"version_0", []byte{0, 0}, true, "beamjoin: pubsubio: the read's watermark estimator state (clock) (2 bytes): invalid state format version 0"},
		{"cut_short", residual[:len(residual)-3], false, fmt.Sprintf("beamjoin: pubsubio: the read's restriction (cursor) (%d bytes): a count of 5 items at byte %d, more than the bytes left", len(residual)-3, len(residual)-6)},
		{"left_over", append(append([]byte(nil), awaiting...), 7), true, fmt.Sprintf("beamjoin: pubsubio: the read's watermark estimator state (clock) (%d bytes): 1 bytes left over at byte %d", len(awaiting)+1, len(awaiting))},
		{"unversioned_corrupt", []byte{6, 1, 0x20, 0xff}, false, "beamjoin: pubsubio: the read's restriction (cursor) (4 bytes): unversioned: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.clk {
				_, err = decodeClock(tc.b)
			} else {
				_, err = decodeCursor(tc.b)
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}
