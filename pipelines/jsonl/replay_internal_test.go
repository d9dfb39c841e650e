package jsonl

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/beamjoin/beamjoin/pipelines/internal/skew"
)

// The tracker takes each file's lines in order, checkpoints into what was
// claimed and the rest of every file, and refuses any other split.
func TestCursorTracker(t *testing.T) {
	c := cursor{Start: []int64{0, 0}, End: []int64{10, 6}, Line: []int64{1, 1}, ReportBytes: 3}
	tr := newCursorTracker(c)
	for _, cl := range []claim{{File: 1, Start: 0, Next: 3, Line: 1}, {File: 0, Start: 0, Next: 4, Line: 1}, {File: 1, Start: 3, Next: 6, Line: 2}} {
		if !tr.TryClaim(cl) {
			t.Fatalf("claim %+v refused: %v", cl, tr.GetError())
		}
	}
	if p, r, _ := tr.TrySplit(0.5); r != nil || !cmp.Equal(p, c) {
		t.Fatalf("dynamic split = %v, %v; want none: a replay is one stream", p, r)
	}
	if done, rest := tr.GetProgress(); done != 10 || rest != 6 {
		t.Fatalf("progress = %v done, %v remaining; want 10, 6", done, rest)
	}
	p, r, err := tr.TrySplit(0)
	wantP := cursor{Start: []int64{0, 0}, End: []int64{4, 6}, Line: []int64{1, 1}, ReportBytes: 3}
	wantR := cursor{Start: []int64{4, 6}, End: []int64{10, 6}, Line: []int64{2, 3}, ReportBytes: 3}
	if err != nil || !tr.IsDone() {
		t.Fatalf("checkpoint: err %v, done %v", err, tr.IsDone())
	}
	if diff := cmp.Diff(wantP, p); diff != "" {
		t.Errorf("checkpoint primary (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantR, r); diff != "" {
		t.Errorf("checkpoint residual (-want +got):\n%s", diff)
	}

	for name, cl := range map[string]claim{
		"a gap":           {File: 0, Start: 5, Next: 7, Line: 2},
		"past the end":    {File: 1, Start: 6, Next: 8, Line: 3},
		"an unknown file": {File: 2, Start: 0, Next: 1, Line: 1},
	} {
		tr := newCursorTracker(wantR)
		if tr.TryClaim(cl) || tr.GetError() == nil {
			t.Errorf("a claim of %s was accepted", name)
		}
	}
	tr = newCursorTracker(wantR)
	if tr.TryClaim(claim{File: -1}) || !tr.IsDone() || tr.GetError() != nil {
		t.Error("claiming the end did not finish the replay")
	}
}

func TestLagEstimator(t *testing.T) {
	e := newLagEstimator(replayClock{MaxTime: noTime, Skew: skew.State{Earliest: skew.None}}, 1000, 60_000)
	if got := e.CurrentWatermark().UnixMilli(); got > -9e15 {
		t.Fatalf("watermark before any record = %d, want the minimum", got)
	}
	var got []string
	for _, ts := range []int64{5000, 4000, 1e15, 6000} {
		ahead := e.take(ts)
		got = append(got, fmt.Sprintf("took %d (ahead %v): watermark %d, largest time %d", ts, ahead, e.CurrentWatermark().UnixMilli(), e.MaxTime()))
	}
	want := []string{
		"took 5000 (ahead false): watermark 4000, largest time 5000",
		"took 4000 (ahead false): watermark 4000, largest time 5000",
		"took 1000000000000000 (ahead true): watermark 4000, largest time 5000",
		"took 6000 (ahead false): watermark 5000, largest time 6000",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The merge takes the earliest next line, a dead letter first, ties to the
// earlier file, and skips files that are done. With a skew bound, a record
// that far ahead of the latest time goes first while another file's next
// record is within the bound; when all are ahead, the earliest goes.
func TestNext(t *testing.T) {
	rec := func(ts int64) *replayReader { return &replayReader{head: headLine{ts: ts}} }
	bad := &replayReader{head: headLine{ts: 0, err: errors.New("blank line")}}
	done := &replayReader{done: true}
	for _, tc := range []struct {
		name           string
		files          []*replayReader
		maxTime, bound int64
		want           int
	}{
		{"earliest_time", []*replayReader{rec(5), rec(3), rec(4)}, noTime, 0, 1},
		{"tie_to_the_earlier_file", []*replayReader{rec(3), rec(3)}, noTime, 0, 0},
		{"dead_letter_first", []*replayReader{rec(-100), bad}, noTime, 0, 1},
		{"skips_done_and_closed", []*replayReader{done, nil, rec(9)}, noTime, 0, 2},
		{"all_done", []*replayReader{done, nil}, noTime, 0, -1},
		{"no_bound_waits_for_an_outlier", []*replayReader{rec(1e15), rec(110)}, 100, 0, 1},
		{"an_outlier_goes_at_once", []*replayReader{rec(110), rec(1e15)}, 100, 60, 1},
		{"a_dead_letter_is_not_the_stream_going_on", []*replayReader{bad, rec(1e15)}, 100, 60, 0},
		{"all_ahead_the_earliest_goes", []*replayReader{rec(1e15), rec(500), done}, 100, 60, 1},
		{"nothing_ahead_before_the_first_record", []*replayReader{rec(1e15), rec(110)}, noTime, 60, 1},
	} {
		if got := next(tc.files, tc.maxTime, tc.bound); got != tc.want {
			t.Errorf("%s: next = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// A bundle reports once it has read its share of the data and the largest
// time has risen by the step, or once it has read bundleBytes.
func TestReportDue(t *testing.T) {
	r := report{From: 1000, Step: 500, Bytes: 100}
	for _, tc := range []struct {
		name   string
		r      report
		n, max int64
		want   bool
	}{
		{"risen_enough_with_enough_data", r, 100, 1500, true},
		{"risen_too_little", r, 100, 1499, false},
		{"too_little_data", r, 99, 9000, false},
		{"first_report_after_the_first_record", report{From: noTime, Step: 500, Bytes: 100}, 100, 7, true},
		{"no_record_yet", report{From: noTime, Step: 500, Bytes: 1}, 100, noTime, false},
		{"a_full_bundle_always", r, bundleBytes, 1000, true},
	} {
		if got := tc.r.due(tc.n, tc.max); got != tc.want {
			t.Errorf("%s: due(%d, %d) = %v, want %v", tc.name, tc.n, tc.max, got, tc.want)
		}
	}
}
