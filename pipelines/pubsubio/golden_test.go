package pubsubio

// Golden state (internal/goldenstate): the read's restriction (cursor)
// and watermark estimator state (clock) as releases wrote them, kept in
// testdata/state/ so that every later release is checked to read what a
// running job persisted with an earlier one (across a Flink savepoint or
// a Dataflow update).

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/google/go-cmp/cmp"

	"github.com/beamjoin/beamjoin/internal/goldenstate"
	"github.com/beamjoin/beamjoin/pipelines/internal/skew"
)

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

// goldenFile is the golden state as today's encoders write it: each
// value a record of one chunk.
func goldenFile() goldenstate.File {
	f := goldenstate.File{Header: []string{
		"Pub/Sub read state (package pubsubio): the restriction (cursor) and the",
		"watermark estimator state (clock), one value per line in hex.",
	}}
	for _, c := range goldenCursors {
		f.Records = append(f.Records, goldenstate.Record{Kind: "cursor", Name: c.Name, Chunks: [][]byte{encodeCursor(c.C)}})
	}
	for _, c := range goldenClocks {
		f.Records = append(f.Records, goldenstate.Record{Kind: "clock", Name: c.Name, Chunks: [][]byte{encodeClock(c.C)}})
	}
	return f
}

// decodeGolden decodes a golden value as the runner hands it to a reader.
func decodeGolden(r goldenstate.Record) (any, error) {
	if len(r.Chunks) != 1 {
		return nil, fmt.Errorf("%d values, want 1", len(r.Chunks))
	}
	switch r.Kind {
	case "cursor":
		return decodeCursor(r.Chunks[0])
	case "clock":
		return decodeClock(r.Chunks[0])
	}
	return nil, fmt.Errorf("not a cursor or a clock")
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

// TestWriteGolden writes a new golden file when -write-golden is given; it
// never overwrites one.
func TestWriteGolden(t *testing.T) { goldenstate.Write(t, goldenFile()) }

// TestGoldenState decodes every value of every golden file, as the
// runner hands them to a reader, and compares them with goldenWant; and
// checks that today's encoders still write the file of StateVersion
// byte for byte: a change to the format must raise StateVersion and add a
// golden file, not change what a version means.
func TestGoldenState(t *testing.T) {
	for file, want := range goldenWant {
		t.Run(file, func(t *testing.T) {
			goldenstate.Check(t, filepath.Join("testdata", "state", file), want, decodeGolden, cmp.AllowUnexported(cursor{}, clock{}, awaited{}))
		})
	}
	goldenstate.CheckBytes(t, goldenstate.Path(fmt.Sprintf("v%d", StateVersion)), goldenFile())
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
