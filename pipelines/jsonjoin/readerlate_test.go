package jsonjoin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

// TestReplayReaderLate runs a full outer interval join of two replayed
// files, Between(0, 10s) with 5 s of allowed lateness and a 1-minute
// watermark lag, whose reader judges lateness (join.LateBehind: 5 s for
// either side). The lines are read in this order (merged by event time):
//
//	left p@100s; right e@237s, b@238s; right p@104s (watermark 178 s: 74 s
//	behind); left z@300s (watermark 240 s), new@200s (40 s behind), b@236s
//	(4 s behind), e@235s (5 s behind), f@234.999s (5.001 s behind).
//
// right p, left new and left f are late: in the late file, marked as judged
// by the reader, never joined. So left p, the would-be partner of right p,
// is unmatched, as if right p were not there, and key new, which the join
// never saw, has no record. Left b and left e are behind the watermark by
// no more than the allowed lateness and are joined. Before the reader judged
// lateness, right p met left p or was late depending on when the join
// cleaned up key p, and left new and left f were joined as new (an
// unmatched record each, behind the watermark). The summary accounts for
// every line.
func TestReplayReaderLate(t *testing.T) {
	c := replayConfig(t, `{"k":"p","t":100000}
{"k":"z","t":300000}
{"k":"new","t":200000}
{"k":"b","t":236000}
{"k":"e","t":235000}
{"k":"f","t":234999}
`, `{"k":"e","t":237000}
{"k":"b","t":238000}
{"k":"p","t":104000}
`)
	c.Upper, c.AllowedLateness = 10*time.Second, 5*time.Second
	c.Type, c.Emit = join.FullOuter, join.EmitFinal
	c.WatermarkLag = time.Minute
	wantOut := []string{
		`{"kind":"pair","key":"b","left":{"k":"b","t":236000},"right":{"k":"b","t":238000},"left_time":236000,"right_time":238000,"time":238000}`,
		`{"kind":"pair","key":"e","left":{"k":"e","t":235000},"right":{"k":"e","t":237000},"left_time":235000,"right_time":237000,"time":237000}`,
		`{"kind":"unmatched","key":"p","left":{"k":"p","t":100000},"right":null,"left_time":100000,"right_time":null,"time":100000}`,
		`{"kind":"unmatched","key":"z","left":{"k":"z","t":300000},"right":null,"left_time":300000,"right_time":null,"time":300000}`,
	}
	wantLate := []string{
		`{"side":"left","key":"f","time":234999,"value":{"k":"f","t":234999},"judged_by":"reader"}`,
		`{"side":"left","key":"new","time":200000,"value":{"k":"new","t":200000},"judged_by":"reader"}`,
		`{"side":"right","key":"p","time":104000,"value":{"k":"p","t":104000},"judged_by":"reader"}`,
	}
	wantCounts := map[string]int64{
		"left_read": 6, "left_in": 4, "left_reader_late": 2,
		"right_read": 3, "right_in": 2, "right_reader_late": 1,
		"pairs_out": 2, "left_unmatched_out": 2, "left_late_out": 2, "right_late_out": 1,
	}
	for run := 1; run <= 2; run++ {
		sum, err := jsonjoin.Run(context.Background(), c, jsonjoin.DefaultRunner)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantOut, readLines(t, c.Out)); diff != "" {
			t.Errorf("run %d: results (-want +got):\n%s", run, diff)
		}
		if diff := cmp.Diff(wantLate, readLines(t, c.Late)); diff != "" {
			t.Errorf("run %d: late elements (-want +got):\n%s", run, diff)
		}
		if diff := cmp.Diff(wantCounts, sum.Counts); diff != "" {
			t.Errorf("run %d: summary counts (-want +got):\n%s", run, diff)
		}
		if err := sum.Check(); err != nil {
			t.Errorf("run %d: Check() = %v", run, err)
		}
		if got := strings.SplitN(sum.String(), "\n", 2)[0]; !strings.Contains(got, "reader_late") {
			t.Errorf("run %d: the summary's header %q has no reader_late column", run, got)
		}
	}
}

// TestReplayUniqueLeft replays two files through an inner interval join,
// Between(0, 5m), with UniqueLeft: key a has two left lines, a@0 and
// a@60s, read in event-time order with a's right lines (a@30s, a@90s).
// The second left line arrives while the first is held, so it goes to the
// late file, unjoined, and the right line a@90s, which arrived while a@0
// was held and was not held itself, pairs with a@0 only. Key b's one left
// line joins both its right lines, as without the option.
func TestReplayUniqueLeft(t *testing.T) {
	c := replayConfig(t, `{"k":"a","t":0}
{"k":"a","t":60000}
{"k":"b","t":120000}
`, `{"k":"a","t":30000}
{"k":"a","t":90000}
{"k":"b","t":130000}
{"k":"b","t":140000}
`)
	c.Upper, c.UniqueLeft = 5*time.Minute, true
	c.WatermarkLag = 10 * time.Minute
	sum, err := jsonjoin.Run(context.Background(), c, jsonjoin.DefaultRunner)
	if err != nil {
		t.Fatal(err)
	}
	wantOut := []string{
		`{"kind":"pair","key":"a","left":{"k":"a","t":0},"right":{"k":"a","t":30000},"left_time":0,"right_time":30000,"time":30000}`,
		`{"kind":"pair","key":"a","left":{"k":"a","t":0},"right":{"k":"a","t":90000},"left_time":0,"right_time":90000,"time":90000}`,
		`{"kind":"pair","key":"b","left":{"k":"b","t":120000},"right":{"k":"b","t":130000},"left_time":120000,"right_time":130000,"time":130000}`,
		`{"kind":"pair","key":"b","left":{"k":"b","t":120000},"right":{"k":"b","t":140000},"left_time":120000,"right_time":140000,"time":140000}`,
	}
	if diff := cmp.Diff(wantOut, readLines(t, c.Out)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	wantLate := []string{`{"side":"left","key":"a","time":60000,"value":{"k":"a","t":60000}}`}
	if diff := cmp.Diff(wantLate, readLines(t, c.Late)); diff != "" {
		t.Errorf("late elements (-want +got):\n%s", diff)
	}
	if err := sum.Check(); err != nil {
		t.Errorf("Check() = %v", err)
	}
}

// TestReplayMaxSkew replays two files through an inner interval join,
// Between(0, 10s), with no watermark lag and a one-minute skew bound. The
// left line x has a time in microseconds: it is replayed at once and
// moves nothing, so left b, after it in its file, pairs with right b
// rather than being judged late behind it.
func TestReplayMaxSkew(t *testing.T) {
	c := replayConfig(t, `{"k":"a","t":100000}
{"k":"x","t":100000000000}
{"k":"b","t":110000}
`, `{"k":"a","t":105000}
{"k":"b","t":115000}
`)
	c.Upper, c.MaxSkew = 10*time.Second, time.Minute
	sum, err := jsonjoin.Run(context.Background(), c, jsonjoin.DefaultRunner)
	if err != nil {
		t.Fatal(err)
	}
	wantOut := []string{
		`{"kind":"pair","key":"a","left":{"k":"a","t":100000},"right":{"k":"a","t":105000},"left_time":100000,"right_time":105000,"time":105000}`,
		`{"kind":"pair","key":"b","left":{"k":"b","t":110000},"right":{"k":"b","t":115000},"left_time":110000,"right_time":115000,"time":115000}`,
	}
	if diff := cmp.Diff(wantOut, readLines(t, c.Out)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if n := sum.Counts["left_reader_late"] + sum.Counts["right_reader_late"]; n != 0 {
		t.Errorf("%d lines judged late, want none", n)
	}
}

// replayConfig writes left and right, JSON lines keyed by "k" and timed
// by "t", to a new directory, and returns the config of an inner interval
// join that replays them, with Between(0, 0) and no watermark lag for the
// test to change, writing out.jsonl and late.jsonl there.
func replayConfig(t *testing.T, left, right string) jsonjoin.Config {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"left.jsonl": left, "right.jsonl": right} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fields := jsonl.Fields{Key: "k", Time: "t"}
	return jsonjoin.Config{
		Op:     jsonjoin.Interval,
		Left:   jsonjoin.Input{Pattern: filepath.Join(dir, "left.jsonl"), Fields: fields},
		Right:  jsonjoin.Input{Pattern: filepath.Join(dir, "right.jsonl"), Fields: fields},
		Replay: true,
		Out:    filepath.Join(dir, "out.jsonl"),
		Late:   filepath.Join(dir, "late.jsonl"),
	}
}

// readLines returns the lines of a file the join wrote, which are sorted.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
