package jsonl_test

// BenchmarkReplay measures the reader alone: the replay of two files
// against the batch reader of the same files, in the same run. Run it with
// -benchtime=1x: one iteration is one whole pipeline run on Prism, in
// process, and the figures are custom metrics (elem/s, peak-live-MB).
// `make bench` does.

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
)

func init() {
	register.DoFn4x0[beam.EventTime, string, jsonl.Record, func(int)](&countRecordsFn{})
	register.Emitter1[int]()
	register.DoFn1x0[int](&discardFn{})
}

// benchCount counts the records that reached the end of the benchmarked
// pipeline (Prism runs in process).
var benchCount atomic.Int64

// countRecordsFn counts records. Its output, always empty, has a consumer
// in a stage of its own (see count): Prism v2.77 spins a core for the
// whole of every bundle of a stage that has no output, which would halve
// the reader's share of this machine.
type countRecordsFn struct{}

func (countRecordsFn) ProcessElement(_ beam.EventTime, _ string, _ jsonl.Record, _ func(int)) {
	benchCount.Add(1)
}

type discardFn struct{}

func (discardFn) ProcessElement(int) {}

// count counts the records of col in the reader's stage.
func count(s beam.Scope, col beam.PCollection) {
	beam.ParDo0(s, discardFn{}, beam.Reshuffle(s, beam.ParDo(s, countRecordsFn{}, col)))
}

// writeOrders writes the benchmark's input to dir: n orders (left.jsonl)
// and n payments (right.jsonl) over 10,000 keys and six hours of event
// time, a payment 0-20 minutes after its order; each file in arrival order,
// each line up to 2 minutes behind its time, one in a hundred up to 12.
// It is the shape of the 2x100k-line replay of issue 14.
func writeOrders(tb testing.TB, dir string, n int) {
	tb.Helper()
	r := rand.New(rand.NewSource(1))
	const t0, span = int64(1_714_550_400_000), int64(6 * time.Hour / time.Millisecond)
	type event struct {
		t, arrival int64
		line       string
	}
	var orders, payments []event
	arrival := func(t int64) int64 {
		d := t + r.Int63n(120_000)
		if r.Intn(100) == 0 {
			d += r.Int63n(600_000)
		}
		return d
	}
	for i := range n {
		t, key := t0+int64(i)*span/int64(n), r.Intn(10_000)
		pt := t + r.Int63n(20*60_000)
		orders = append(orders, event{t, arrival(t), fmt.Sprintf(`{"order_id":"o-%05d","seq":%d,"amount":%d.%02d,"ts":%d}`, key, i, i%500, i%100, t)})
		payments = append(payments, event{pt, arrival(pt), fmt.Sprintf(`{"payment_id":"p-%06d","order_id":"o-%05d","method":"card","ts":%d}`, i, key, pt)})
	}
	for name, es := range map[string][]event{"left.jsonl": orders, "right.jsonl": payments} {
		sort.SliceStable(es, func(i, j int) bool { return es[i].arrival < es[j].arrival })
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			tb.Fatal(err)
		}
		w := bufio.NewWriter(f)
		for _, e := range es {
			w.WriteString(e.line)
			w.WriteByte('\n')
		}
		if err := w.Flush(); err != nil {
			tb.Fatal(err)
		}
		f.Close()
	}
}

// peakLive samples the live heap (as of the latest GC) until stopped, and
// returns its peak in bytes.
func peakLive() (stop func() uint64) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak.Store(max(peak.Load(), sample[0].Value.Uint64()))
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// BenchmarkReplay reads 2xN lines with the batch reader and with the
// replay (lag 5 minutes, step 3m45s: what the beamjoin command chooses for
// bounds [0, 15m]), counting the records in process.
func BenchmarkReplay(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		dir := b.TempDir()
		writeOrders(b, dir, n)
		for _, mode := range []string{"batch", "replay"} {
			b.Run(fmt.Sprintf("%s/N=%d", mode, 2*n), func(b *testing.B) {
				for range b.N {
					p, s := beam.NewPipelineWithRoot()
					src := func(name string) jsonl.Source {
						return jsonl.Source{Name: name, Pattern: filepath.Join(dir, name+".jsonl"), Fields: jsonl.Fields{Key: "order_id", Time: "ts"},
							Replay: mode == "replay", WatermarkLag: 5 * time.Minute, WatermarkStep: 225 * time.Second}
					}
					records, _ := jsonl.ReadAll(s, src("left"), src("right"))
					for _, r := range records {
						count(s, r)
					}
					beamlog.SetupLogging("warn", "text")
					benchCount.Store(0)
					stop := peakLive()
					start := time.Now()
					err := ptest.Run(p)
					wall := time.Since(start)
					peak := stop()
					if err != nil {
						b.Fatal(err)
					}
					if got := benchCount.Load(); got != int64(2*n) {
						b.Fatalf("%d records, want %d", got, 2*n)
					}
					b.ReportMetric(float64(2*n)/wall.Seconds(), "elem/s")
					b.ReportMetric(float64(peak)/(1<<20), "peak-live-MB")
				}
			})
		}
	}
}
