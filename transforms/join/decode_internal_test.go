package join

import (
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/google/go-cmp/cmp"
)

// TestResultDecodeCache checks that resultFn's cache of the last decoded
// value on each side gives the Results a fresh decode would: records of
// several left values in a row, a left value that comes back after
// another, a record with one side absent, and a bad encoding in between.
// Each Result holds its own copy of the value.
func TestResultDecodeCache(t *testing.T) {
	decodeAll := func(noCache bool, recs []raw.Record) ([]Result[int64, benchAuction, benchBid], error) {
		f, _ := fanOutRecords(t, 0, 0)
		f.noCache = noCache
		var out []Result[int64, benchAuction, benchBid]
		for _, r := range recs {
			err := f.ProcessElement(beam.EventTime(r.LeftTime), int64(7), r, func(y beam.Y) {
				out = append(out, y.(Result[int64, benchAuction, benchBid]))
			})
			if err != nil {
				return out, err
			}
		}
		return out, nil
	}
	_, recs := fanOutRecords(t, 3, 2) // a0b0 a0b1 a1b0 a1b1 a2b0 a2b1
	unmatched := recs[2]
	unmatched.Kind, unmatched.HasRight, unmatched.Right = raw.Unmatched, false, nil
	recs = append(recs, recs[0], unmatched, recs[5], recs[1])

	want, err := decodeAll(true, recs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeAll(false, recs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Results with the cache (+) differ from without (-):\n%s", diff)
	}
	if got[0].Left.ID != 1000 || got[2].Left.ID != 1001 || got[6].Left.ID != 1000 || got[7].Right != nil {
		t.Fatalf("records decoded out of place: %+v", got)
	}
	got[0].Left.Reserve = -1
	if got[1].Left.Reserve != 150 {
		t.Errorf("two Results of one left value share it: changing one changed the other to %d", got[1].Left.Reserve)
	}

	// A bad encoding after a good one is an error, not the cached value;
	// the same instance then decodes the good one again.
	f, _ := fanOutRecords(t, 0, 0)
	var after []Result[int64, benchAuction, benchBid]
	keep := func(y beam.Y) { after = append(after, y.(Result[int64, benchAuction, benchBid])) }
	bad := recs[0]
	bad.Left = append([]byte(nil), recs[0].Left[:len(recs[0].Left)-1]...)
	if err := f.ProcessElement(0, int64(7), recs[0], keep); err != nil {
		t.Fatal(err)
	}
	if err := f.ProcessElement(0, int64(7), bad, keep); err == nil {
		t.Error("a truncated left value decoded without error after a good one")
	}
	if err := f.ProcessElement(0, int64(7), recs[1], keep); err != nil {
		t.Fatalf("the good value after a bad one: %v", err)
	}
	if len(after) != 2 || after[1].Left.ID != 1000 || after[1].LeftTime != time.UnixMilli(recs[1].LeftTime).UTC() {
		t.Errorf("after a bad value, got %+v", after)
	}
}
