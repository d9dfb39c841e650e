package panes

import (
	"testing"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/google/go-cmp/cmp"
)

func TestStateRoundTrip(t *testing.T) {
	a := NewEntry(match.Left, -5, []byte("a"))
	b := NewEntry(match.Right, 1_700_000_000_000, nil)
	b.From, b.Through, b.Judged, b.Matched = 10, reported, true, true
	st := State{Progress: 42, Entries: []Entry{a, b}}
	// A rewrite followed by an arrival: two chunks.
	got, err := Decode([][]byte{State{Progress: 42, Entries: []Entry{a}}.Encode(), AppendEntry(nil, b)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st, got, cmp.Comparer(func(x, y []byte) bool { return string(x) == string(y) })); diff != "" {
		t.Errorf("decoded state (-want +got):\n%s", diff)
	}
	empty, err := Decode(nil)
	if err != nil || empty.Progress != NoTime || len(empty.Entries) != 0 {
		t.Errorf("Decode(nil) = %+v, %v; want no progress and no entries", empty, err)
	}

	p := Pane{Window: Window{0, 10}, Entries: []Entry{a, b}, New: []bool{true, false}}
	entries, isNew, err := DecodePane(EncodePane(p))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p.New, isNew); diff != "" || len(entries) != 2 || string(entries[0].Value) != "a" {
		t.Errorf("DecodePane: %v %v", entries, isNew)
	}
}

func TestDecodeRejectsCorruptState(t *testing.T) {
	whole := AppendEntry(nil, NewEntry(match.Left, 7, []byte("value")))
	for name, chunk := range map[string][]byte{
		"truncated_value": whole[:len(whole)-1],
		"truncated_time":  whole[:1],
		"unknown_tag":     {0x41},
		"bad_progress":    {tagProgress},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Decode([][]byte{chunk}); err == nil {
				t.Errorf("Decode(%x) succeeded", chunk)
			}
		})
	}
}
