package jsonjoin_test

// BenchmarkReplayInterval measures a replay (issue 14): `beamjoin interval
// --watermark-lag 5m` on BenchmarkBatchInterval's 2 x 100,000 lines, sorted
// by event time in each file as a log would be, against the same join of
// the same files read whole, on the bounded path (the command's batch path
// today) and on the streaming path (its batch path before join.Bounded),
// each in a process of its own, in the same run. Each reports s/run,
// lines/s (both inputs' lines over the run's time) and peak-RSS-MB.
// Nothing of the replay is late (a payment comes 0 to 15 minutes after its
// order, and each file is in time order), so its output must be the batch
// path's.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/beamjoin/beamjoin/pipelines/jsonl"
)

// sortByTime rewrites the JSON-lines file path with its lines in the order
// of their "ts" field (ties in file order).
func sortByTime(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	f := jsonl.Fields{Key: "ts", Time: "ts"}
	ts := map[string]int64{}
	for _, l := range lines {
		t, err := f.ParseTime([]byte(l))
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		ts[l] = t
	}
	slices.SortStableFunc(lines, func(a, b string) int { return int(ts[a] - ts[b]) })
	return os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644)
}

func BenchmarkReplayInterval(b *testing.B) {
	dir := b.TempDir()
	if err := writeBatchInput(dir, batchShape.lines, batchShape.keys, batchShape.span); err != nil {
		b.Fatal(err)
	}
	for _, side := range []string{"left", "right"} {
		if err := sortByTime(filepath.Join(dir, side+".jsonl")); err != nil {
			b.Fatal(err)
		}
	}
	name := fmt.Sprintf("lines=2x%d/keys=%d/span=%v", batchShape.lines, batchShape.keys, batchShape.span)
	outs := map[string][]byte{}
	for _, path := range []string{"bounded", "replay", "streaming"} {
		b.Run("path="+path+"/"+name, func(b *testing.B) {
			for range b.N {
				wall, rss := runChild(b, dir, path)
				b.ReportMetric(wall, "s/run")
				b.ReportMetric(float64(2*batchShape.lines)/wall, "lines/s")
				b.ReportMetric(rss, "peak-RSS-MB")
			}
			data, err := os.ReadFile(filepath.Join(dir, "out-"+path+".jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			outs[path] = data
			if base, ok := outs["bounded"]; ok && path != "bounded" && !bytes.Equal(base, data) {
				b.Errorf("%s wrote %d lines, the bounded path %d: the outputs differ", path, bytes.Count(data, []byte("\n")), bytes.Count(base, []byte("\n")))
			}
		})
	}
}
