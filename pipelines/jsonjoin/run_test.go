package jsonjoin_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/internal/prismrun"
	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

// TestRunAccounting runs a left outer interval join of the small inputs,
// with bad lines added to the left one, on Prism in process, and checks the
// summary that Run counts from the records: lines read, records that went
// to the join and dead letters by reason per side, and the records written
// by kind; and that the progress this process saw ends at the same
// counts.
func TestRunAccounting(t *testing.T) {
	dir := t.TempDir()
	left, err := os.ReadFile("../../testdata/e2e/left.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	left = append(left, "{\"id\":\"x\"}\n{\"t\":5}\n{\"id\":\"y\",\"t\":\"noon\"}\n{\"id\":\n"...)
	leftPath := filepath.Join(dir, "left.jsonl")
	if err := os.WriteFile(leftPath, left, 0o644); err != nil {
		t.Fatal(err)
	}
	fields := jsonl.Fields{Key: "id", Time: "t"}
	var mu sync.Mutex
	var last jsonjoin.Progress
	c := jsonjoin.Config{
		Op:    jsonjoin.Interval,
		Left:  jsonjoin.Input{Pattern: leftPath, Fields: fields},
		Right: jsonjoin.Input{Pattern: "../../testdata/e2e/right.jsonl", Fields: fields},
		Lower: 0, Upper: 5 * time.Minute, Type: join.LeftOuter, Emit: join.EmitFinal,
		Out:           filepath.Join(dir, "out.jsonl"),
		Progress:      func(p jsonjoin.Progress) { mu.Lock(); last = p; mu.Unlock() },
		ProgressEvery: 10 * time.Millisecond,
	}
	sum, err := jsonjoin.Run(context.Background(), c, jsonjoin.DefaultRunner)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"left_read": 10, "left_in": 6, "left_invalid": 4,
		"right_read": 8, "right_in": 8,
		"pairs_out": 5, "left_unmatched_out": 2,
	}
	if diff := cmp.Diff(want, sum.Counts); diff != "" {
		t.Errorf("summary counts (-want +got):\n%s", diff)
	}
	if got, want := sum.InvalidReasons(), `left: 1 bad JSON, 1 field "id": missing, 1 field "t": missing, 1 field "t": not a valid time`; got != want {
		t.Errorf("InvalidReasons() = %q, want %q", got, want)
	}
	if !sum.Ran || !sum.FromRecords {
		t.Errorf("Ran %v, FromRecords %v; want both", sum.Ran, sum.FromRecords)
	}
	if err := sum.Check(); err != nil {
		t.Errorf("Check() = %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !last.Done || !slices.Equal(last.Lines, []int64{10, 8}) || last.Out != 7 {
		t.Errorf("last progress report: done %v, lines %v, out %d; want done, [10 8], 7", last.Done, last.Lines, last.Out)
	}
	if want := time.UnixMilli(420001); !last.Time[1].Equal(want) {
		t.Errorf("last progress report: right event time %v, want %v", last.Time[1], want)
	}
}

// TestRunNoValidLine runs a join whose key field is in no line: Run
// succeeds, and the summary's check says why nothing was joined.
func TestRunNoValidLine(t *testing.T) {
	fields := jsonl.Fields{Key: "ad_id", Time: "t"}
	c := jsonjoin.Config{
		Op:    jsonjoin.Window,
		Left:  jsonjoin.Input{Pattern: "../../testdata/e2e/left.jsonl", Fields: fields},
		Right: jsonjoin.Input{Pattern: "../../testdata/e2e/right.jsonl", Fields: fields},
		Size:  time.Minute,
		Out:   filepath.Join(t.TempDir(), "out.jsonl"),
	}
	sum, err := jsonjoin.Run(context.Background(), c, jsonjoin.DefaultRunner)
	if err != nil {
		t.Fatal(err)
	}
	want := "beamjoin: no line of the left input is valid: field \"ad_id\": missing in 6 of 6 lines, e.g. ../../testdata/e2e/left.jsonl:1: {\"id\":\"a\",\"t\":0,\"v\":\"L1\"}\n" +
		"beamjoin: no line of the right input is valid: field \"ad_id\": missing in 8 of 8 lines, e.g. ../../testdata/e2e/right.jsonl:1: {\"id\":\"a\",\"t\":30000,\"v\":\"R1\"}"
	if got := errText(sum.Check()); got != want {
		t.Errorf("Check() =\n%s\nwant\n%s", got, want)
	}
}

// raceRunner fails every job as Prism v2.77 does when its progress ticker
// races a step it runs itself (see package internal/prismrun).
const raceRunner = "jsonjoin-test-progress-race"

func init() {
	beam.RegisterRunner(raceRunner, func(context.Context, *beam.Pipeline) (beam.PipelineResult, error) {
		b, err := os.ReadFile("../../internal/prismrun/testdata/progress-race.txt")
		if err != nil {
			return nil, err
		}
		return nil, errors.New(string(b))
	})
}

// TestRunProgressRace checks what Run says when Prism fails a job with its
// progress race on every attempt: one line, which says rerunning is safe.
func TestRunProgressRace(t *testing.T) {
	fields := jsonl.Fields{Key: "id", Time: "t"}
	c := jsonjoin.Config{
		Op:    jsonjoin.CoGroup,
		Left:  jsonjoin.Input{Pattern: "../../testdata/e2e/left.jsonl", Fields: fields},
		Right: jsonjoin.Input{Pattern: "../../testdata/e2e/right.jsonl", Fields: fields},
		Size:  time.Minute,
		Out:   filepath.Join(t.TempDir(), "out.jsonl"),
	}
	_, err := jsonjoin.Run(context.Background(), c, raceRunner)
	want := fmt.Sprintf("beamjoin: Prism v2.77 failed the job %d times with a known bug of its own (a progress request to a step it runs itself, likelier on a busy machine), not a fault of the data; rerunning is safe: every output is written whole", prismrun.Attempts)
	if got := errText(err); got != want {
		t.Errorf("Run() error =\n%s\nwant\n%s", got, want)
	}
}
