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
		{"unknown_tag", []byte{0x07, 0x02}, "beamjoin: bagstate: state chunk 0 at byte 0: unknown tag 0x7"},
		{"split_in_version_1", []byte{0x06, 0x02}, "beamjoin: bagstate: state chunk 0 at byte 0: a split record in a chunk of format version 1 (only version 2 has them)"},
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

// TestEncodeChunks cuts a key's state into chunks of at most a limit, the
// progress first, an entry larger than the limit alone, and decodes them
// back to what was encoded. 40 entries of 18 to 57 bytes take 9 chunks of
// 200 bytes; the entry of 500 bytes a tenth.
func TestEncodeChunks(t *testing.T) {
	entry := func(side match.Side, t int64, n int) match.Entry[[]byte] {
		return match.Entry[[]byte]{Side: side, Time: t, Value: make([]byte, n)}
	}
	var entries []match.Entry[[]byte]
	for i := range 40 {
		entries = append(entries, entry(match.Side(i%2), 1_700_000_000_000+int64(i), 10+i))
	}
	entries = append(entries, entry(match.Left, 1_700_000_001_000, 500)) // over the limit alone
	for _, tc := range []struct {
		name     string
		progress int64
		entries  []match.Entry[[]byte]
		chunks   int
	}{
		{"progress_and_entries", 1_699_999_999_000, entries, 10},
		{"entries_only", match.NoProgress, entries, 10},
		{"progress_only", 42, nil, 1},
		{"nothing", match.NoProgress, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const limit = 200
			chunks := EncodeChunks(tc.progress, tc.entries, limit)
			if len(chunks) != tc.chunks {
				t.Errorf("%d chunks, want %d", len(chunks), tc.chunks)
			}
			for i, c := range chunks {
				one, err := DecodeState([][]byte{c})
				if err != nil {
					t.Fatal(err)
				}
				if len(c) > limit && len(one.Entries) != 1 {
					t.Errorf("chunk %d holds %d bytes in %d entries, over the limit %d", i, len(c), len(one.Entries), limit)
				}
			}
			st, err := DecodeState(chunks)
			if err != nil {
				t.Fatal(err)
			}
			if st.Progress != tc.progress {
				t.Errorf("progress %d, want %d", st.Progress, tc.progress)
			}
			if diff := cmp.Diff(tc.entries, st.Entries, cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}
