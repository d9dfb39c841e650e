package multiway

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	gocmp "github.com/google/go-cmp/cmp"
)

// TestWritesOncePerBundle: a key's arrivals in a bundle are one bag
// append, written when the bundle finishes, and the bag decodes to what an
// append per arrival (NoWriteBehind) makes; the rows are the same.
func TestWritesOncePerBundle(t *testing.T) {
	rules := Rules{Inputs: []Input{{}, {Lower: -10, Upper: 10}, {Lower: -10, Upper: 10}}, Emit: match.Immediate}
	play := func(noWriteBehind bool) (*memState, []string) {
		f := NewFn(Config{Rules: rules, CleanupEvery: 100, Horizon: 1000, Key: testKeyCoder, NoWriteBehind: noWriteBehind})
		if err := f.Setup(); err != nil {
			t.Fatal(err)
		}
		st, tm := &memState{}, memTimers{}
		var rows []string
		emit := func(_ beam.EventTime, _ beam.X, r Row) { rows = append(rows, rowKey("a", r)) }
		f.StartBundle(nil, nil, nil)
		for i := range 6 {
			in := raw.Encoded{Side: uint8(i % 3), Value: []byte(fmt.Sprintf("v%d", i))}
			if err := f.ProcessElement(context.Background(), window.GlobalWindow{}, beam.EventTime(i), st, tm, "a", in,
				emit, func(beam.EventTime, beam.X, raw.Encoded) { t.Fatal("late") }, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.FinishBundle(nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		return st, rows
	}
	behind, rows := play(false)
	each, wantRows := play(true)
	if len(behind.bag) != 1 || len(each.bag) != 6 {
		t.Errorf("bag values: %d with write-behind (want 1), %d with an append per arrival (want 6)", len(behind.bag), len(each.bag))
	}
	got, err := decode(3, behind.bag)
	if err != nil {
		t.Fatal(err)
	}
	want, err := decode(3, each.bag)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("decoded bag differs (-append per arrival +write-behind):\n%s", diff)
	}
	if diff := gocmp.Diff(wantRows, rows); diff != "" || len(rows) == 0 {
		t.Errorf("rows differ (-append per arrival +write-behind):\n%s", diff)
	}
}
