package jsonjoin_test

// BenchmarkBatchInterval measures what `beamjoin interval` costs on files
// read whole (issue 14): 2 x 100,000 JSON lines, 10,000 keys, 6 hours of
// event time, joined by join.Bounded (the command's batch path) and by the
// streaming path (the command's batch path before it), each in a process
// of its own so that its peak RSS is its own, and by SQLite when sqlite3 is
// installed. Each run reports s/run (and the joins peak-RSS-MB, their
// process's VmHWM); the two paths' outputs
// must be identical. The input is made by writeBatchInput, the same every
// time. `make bench` runs it; cmd/benchtable prints the ratios.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/internal/prismrun"
	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// batchShape is the benchmark's input: lines per side, keys, and the span
// of event time the lines are spread over.
var batchShape = struct {
	lines, keys int
	span        time.Duration
}{100_000, 10_000, 6 * time.Hour}

// writeBatchInput writes left.jsonl (orders) and right.jsonl (payments)
// into dir: lines per side, each with a key among keys ("order_id") and a
// time ("ts", epoch ms) spread uniformly over span, from a fixed seed.
func writeBatchInput(dir string, lines, keys int, span time.Duration) error {
	rng := rand.New(rand.NewPCG(14, 100_000))
	const epoch = 1_700_000_000_000
	for _, side := range []string{"left", "right"} {
		var b bytes.Buffer
		for i := range lines {
			key := fmt.Sprintf("o%05d", rng.IntN(keys))
			ts := epoch + rng.Int64N(span.Milliseconds())
			if side == "left" {
				fmt.Fprintf(&b, `{"order_id":%q,"ts":%d,"amount":%d,"customer":"c%04d"}`+"\n", key, ts, 1+rng.IntN(500), rng.IntN(5000))
			} else {
				fmt.Fprintf(&b, `{"order_id":%q,"ts":%d,"paid":%d,"payment":"p%06d"}`+"\n", key, ts, 1+rng.IntN(500), i)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, side+".jsonl"), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// batchConfig is the benchmark's join, as `beamjoin interval --left
// left.jsonl --right right.jsonl --key order_id --time ts --lower 0
// --upper 15m --type left --emit final --out OUT` would run it.
func batchConfig(dir, out string) jsonjoin.Config {
	fields := jsonl.Fields{Key: "order_id", Time: "ts"}
	return jsonjoin.Config{
		Op:    jsonjoin.Interval,
		Left:  jsonjoin.Input{Pattern: filepath.Join(dir, "left.jsonl"), Fields: fields},
		Right: jsonjoin.Input{Pattern: filepath.Join(dir, "right.jsonl"), Fields: fields},
		Lower: 0, Upper: 15 * time.Minute, Type: join.LeftOuter, Emit: join.EmitFinal,
		Out: out,
	}
}

// The child process: a benchmark runs this test binary again with
// benchChildEnv set to "DIR PATH", and TestBenchChild runs the join on PATH
// there, writing DIR/out-PATH.jsonl, then prints the process's peak RSS.
// The interval join's paths: "bounded", "streaming" for the streaming path
// on files read whole, "replay" for a replay with a 5-minute watermark
// lag. The window join's (window_bench_test.go): "window-grouped", the
// CoGroupByKey path, and "window-late", the late-counting path, both on
// files read whole.
const benchChildEnv = "BEAMJOIN_BENCH_CHILD"

func TestBenchChild(t *testing.T) {
	arg := os.Getenv(benchChildEnv)
	if arg == "" {
		t.Skip("run by BenchmarkBatchInterval, BenchmarkReplayInterval and BenchmarkBatchWindow only")
	}
	dir, path, _ := strings.Cut(arg, " ")
	out := filepath.Join(dir, "out-"+path+".jsonl")
	c := batchConfig(dir, out)
	// Go's collector runs as the beamjoin command runs it: sooner than
	// Go's default for files read whole (the bounded path, both window
	// paths), at the default for a replay, and at the default for the
	// streaming path, as the command ran it when issue 14 was filed. GOGC,
	// if set, overrides.
	switch path {
	case "bounded":
		prismrun.SetGCPercent()
	case "replay":
		c.Replay, c.WatermarkLag = true, 5*time.Minute
	case "streaming":
		c = jsonjoin.StreamingBatch(c)
	case "window-grouped":
		prismrun.SetGCPercent()
		c = windowBenchConfig(dir, out)
	case "window-late":
		prismrun.SetGCPercent()
		c = jsonjoin.StreamingBatch(windowBenchConfig(dir, out))
	}
	if _, err := jsonjoin.Run(context.Background(), c, prismrun.Runner); err != nil {
		t.Fatal(err)
	}
	// The process's peak RSS, for the benchmark: the wait status's is no
	// use, since a child started with CLONE_VM (as os/exec does) counts
	// its parent's peak before exec as its own.
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			fmt.Println(l)
		}
	}
}

// runChild runs the join on path in a process of its own (see
// TestBenchChild) and returns its wall time in seconds and peak
// RSS in MB.
func runChild(b *testing.B, dir, path string) (wall, rssMB float64) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), benchChildEnv+"="+dir+" "+path)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s path: %v\n%s", path, err, out)
	}
	wall = time.Since(start).Seconds()
	var kb int
	if i := bytes.Index(out, []byte("VmHWM:")); i < 0 {
		b.Fatalf("%s path: no VmHWM in the child's output:\n%s", path, out)
	} else if _, err := fmt.Sscan(string(out[i+len("VmHWM:"):]), &kb); err != nil {
		b.Fatalf("%s path: reading VmHWM: %v", path, err)
	}
	return wall, float64(kb) / 1024
}

func BenchmarkBatchInterval(b *testing.B) {
	dir := b.TempDir()
	if err := writeBatchInput(dir, batchShape.lines, batchShape.keys, batchShape.span); err != nil {
		b.Fatal(err)
	}
	name := fmt.Sprintf("lines=2x%d/keys=%d", batchShape.lines, batchShape.keys)
	for _, path := range []string{"bounded", "streaming"} {
		b.Run("path="+path+"/"+name, func(b *testing.B) {
			for range b.N {
				wall, rss := runChild(b, dir, path)
				b.ReportMetric(wall, "s/run")
				b.ReportMetric(rss, "peak-RSS-MB")
			}
		})
	}
	bounded, err := os.ReadFile(filepath.Join(dir, "out-bounded.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	streaming, err := os.ReadFile(filepath.Join(dir, "out-streaming.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.Equal(bounded, streaming) {
		b.Fatalf("the bounded path wrote %d bytes, the streaming path %d: the outputs differ", len(bounded), len(streaming))
	}

	// A peer: SQLite, in memory, loading the same files, with the same
	// join (each pair, and each order with no payment in 0-15 min).
	if _, err := exec.LookPath("sqlite3"); err != nil {
		return
	}
	b.Run("path=sqlite3/"+name, func(b *testing.B) {
		for range b.N {
			cmd := exec.Command("sqlite3", ":memory:", ".mode ascii", `.separator "\037" "\n"`,
				"CREATE TABLE l(j TEXT); CREATE TABLE r(j TEXT);",
				".import "+filepath.Join(dir, "left.jsonl")+" l", ".import "+filepath.Join(dir, "right.jsonl")+" r",
				".mode list",
				`CREATE TABLE lk AS SELECT rowid AS id, json_extract(j,'$.order_id') AS k, json_extract(j,'$.ts') AS t FROM l;
				 CREATE TABLE rk AS SELECT rowid AS id, json_extract(j,'$.order_id') AS k, json_extract(j,'$.ts') AS t FROM r;
				 CREATE INDEX rki ON rk(k, t);
				 SELECT count(*) FROM lk LEFT JOIN rk ON rk.k = lk.k AND rk.t BETWEEN lk.t AND lk.t + 900000;`)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			if err != nil {
				b.Fatalf("sqlite3: %v\n%s", err, out)
			}
			wall := time.Since(start)
			if got, want := strings.TrimSpace(string(out)), fmt.Sprint(bytes.Count(bounded, []byte("\n"))); got != want {
				b.Fatalf("sqlite3 counted %s records, beamjoin wrote %s", got, want)
			}
			b.ReportMetric(wall.Seconds(), "s/run")
		}
	})
}
