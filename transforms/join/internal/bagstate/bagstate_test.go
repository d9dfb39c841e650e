package bagstate

import (
	"testing"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/google/go-cmp/cmp"
)

func TestChunkRoundTrip(t *testing.T) {
	b := match.NewBuffer[[]byte]()
	rules := match.Rules{Bounds: match.Between(0, 0)}
	b.Add(rules, match.Entry[[]byte]{Side: match.Left, Time: -5, Value: []byte("order")})
	b.Add(rules, match.Entry[[]byte]{Side: match.Right, Time: -5, Value: []byte{}}) // matches: both flagged
	b.Add(rules, match.Entry[[]byte]{Side: match.Left, Time: 1 << 40, Value: []byte("x")})
	b.Expire(rules, -100) // sets progress without removing anything
	appended := AppendEntry(nil, match.Entry[[]byte]{Side: match.Right, Time: 7, Value: []byte("late append")})

	got, err := DecodeChunks([][]byte{EncodeState(b.Progress, nil, b.Entries()), appended})
	if err != nil {
		t.Fatal(err)
	}
	if got.Progress != -100 {
		t.Errorf("Progress = %d, want -100", got.Progress)
	}
	want := append(b.Entries(), match.Entry[[]byte]{Side: match.Right, Time: 7, Value: []byte("late append")})
	// Restore orders each side by time; the appended right entry sorts last.
	if diff := cmp.Diff(want, got.Entries(), cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

func TestDecodeChunksErrors(t *testing.T) {
	good := AppendEntry(nil, match.Entry[[]byte]{Side: match.Left, Time: 3, Value: []byte("abc")})
	tests := []struct {
		name  string
		chunk []byte
		want  string
	}{
		{"truncated_value", good[:len(good)-1], "beamjoin: bagstate: state chunk 0 at byte 2: truncated value"},
		{"truncated_time", []byte{tagLeft}, "beamjoin: bagstate: state chunk 0 at byte 1: truncated time"},
		{"unknown_tag", []byte{0x06, 0x02}, "beamjoin: bagstate: state chunk 0 at byte 0: unknown tag 0x6"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeChunks([][]byte{tc.chunk})
			if err == nil || err.Error() != tc.want {
				t.Errorf("DecodeChunks() error = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestCleanupRecords: DecodeState reports each cleanup record with how
// many entries came before it and the progress recorded before it, and
// keeps the records' times out of Progress; DecodeChunks and
// DecodeEntries refuse a bag or bucket that holds one.
func TestCleanupRecords(t *testing.T) {
	e := func(side match.Side, ts int64) []byte {
		return AppendEntry(nil, match.Entry[[]byte]{Side: side, Time: ts, Value: []byte("v")})
	}
	chunks := [][]byte{
		EncodeState(100, nil, []match.Entry[[]byte]{{Side: match.Left, Time: 200, Value: []byte("l")}}),
		e(match.Right, 300),
		AppendCleanup(nil, 5000),
		AppendProgress(e(match.Left, 9000), 150),
		AppendCleanup(nil, 12000),
	}
	st, err := DecodeState(chunks)
	if err != nil {
		t.Fatal(err)
	}
	want := []Cleanup{{At: 5000, Entries: 2, Progress: 100}, {At: 12000, Entries: 3, Progress: 150}}
	if diff := cmp.Diff(want, st.Cleanups); diff != "" {
		t.Errorf("cleanups (-want +got):\n%s", diff)
	}
	if st.Progress != 150 || len(st.Entries) != 3 {
		t.Errorf("progress %d and %d entries, want 150 and 3", st.Progress, len(st.Entries))
	}
	if _, err := DecodeChunks(chunks); err == nil {
		t.Error("DecodeChunks took a bag with cleanup records")
	}
	if _, err := DecodeEntries(AppendCleanup(nil, 1)); err == nil {
		t.Error("DecodeEntries took a bucket with a cleanup record")
	}
}
