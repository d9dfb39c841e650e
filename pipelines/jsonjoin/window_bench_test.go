package jsonjoin_test

// BenchmarkBatchWindow measures what `beamjoin window` costs on files read
// whole: BenchmarkBatchInterval's 2 x 100,000 JSON lines (10,000 keys, 6
// hours of event time) in 7-minute tumbling windows, on the path the
// command takes (window-grouped: Beam's CoGroupByKey and a nested loop)
// and on the late-counting path it took before (window-late: one stateful
// DoFn per key in the global window), each in a process of its own (see
// TestBenchChild), in the same run. Each reports s/run and peak-RSS-MB;
// the two paths' records must be the same. `make bench` runs it;
// cmd/benchtable prints the ratio.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
)

// windowBenchConfig is the benchmark's window join, as `beamjoin window
// --left left.jsonl --right right.jsonl --key order_id --time ts --size 7m
// --out OUT` would run it.
func windowBenchConfig(dir, out string) jsonjoin.Config {
	fields := jsonl.Fields{Key: "order_id", Time: "ts"}
	return jsonjoin.Config{
		Op:    jsonjoin.Window,
		Left:  jsonjoin.Input{Pattern: filepath.Join(dir, "left.jsonl"), Fields: fields},
		Right: jsonjoin.Input{Pattern: filepath.Join(dir, "right.jsonl"), Fields: fields},
		Size:  7 * time.Minute,
		Out:   out,
	}
}

func BenchmarkBatchWindow(b *testing.B) {
	dir := b.TempDir()
	if err := writeBatchInput(dir, batchShape.lines, batchShape.keys, batchShape.span); err != nil {
		b.Fatal(err)
	}
	name := fmt.Sprintf("lines=2x%d/keys=%d/size=7m", batchShape.lines, batchShape.keys)
	paths := []string{"window-grouped", "window-late"}
	for _, path := range paths {
		b.Run("path="+path+"/"+name, func(b *testing.B) {
			for range b.N {
				wall, rss := runChild(b, dir, path)
				b.ReportMetric(wall, "s/run")
				b.ReportMetric(rss, "peak-RSS-MB")
			}
		})
	}
	var outs [2][]byte
	for i, path := range paths {
		out, err := os.ReadFile(filepath.Join(dir, "out-"+path+".jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		outs[i] = sortedLines(out)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		b.Fatalf("the grouped path wrote %d records, the late-counting path %d: the records differ",
			bytes.Count(outs[0], []byte("\n")), bytes.Count(outs[1], []byte("\n")))
	}
	if bytes.Count(outs[0], []byte("\n")) == 0 {
		b.Fatal("the window join wrote no records: the benchmark measures nothing")
	}
}

// sortedLines returns data's lines sorted: the paths write the same
// records in different orders.
func sortedLines(data []byte) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	slices.SortFunc(lines, bytes.Compare)
	return bytes.Join(lines, nil)
}
