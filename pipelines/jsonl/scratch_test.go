package jsonl_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
)

func fmtRec(et beam.EventTime, k string, r jsonl.Record) string {
	return fmt.Sprintf("%d %s %s:%d %s", et.Milliseconds(), k, r.File, r.Line, r.Raw)
}
func fmtDead(d jsonl.DeadLetter) string { return d.JSON() }
func init() {
	register.Function3x1(fmtRec)
	register.Function1x1(fmtDead)
}

func TestScratch(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.jsonl")
	os.WriteFile(in, []byte("{\"k\":1,\"t\":5}\n{\"k\":\"x\",\"t\":\"2024-01-01T00:00:00Z\"}\nbad\n{\"k\":2}\n"), 0644)
	for _, replay := range []bool{false, true} {
		p, s := beam.NewPipelineWithRoot()
		recs, dead := jsonl.Read(s, jsonl.Source{Name: "left", Pattern: filepath.Join(dir, "*.jsonl"), Fields: jsonl.Fields{Key: "k", Time: "t"}, Replay: replay, WatermarkLag: time.Second})
		jsonl.Write(s, filepath.Join(dir, "out"), beam.ParDo(s, fmtRec, recs))
		jsonl.Write(s, filepath.Join(dir, "dead"), beam.ParDo(s, fmtDead, dead))
		start := time.Now()
		if err := ptest.Run(p); err != nil {
			t.Fatal(err)
		}
		o, _ := os.ReadFile(filepath.Join(dir, "out"))
		d, _ := os.ReadFile(filepath.Join(dir, "dead"))
		t.Logf("replay=%v %v\n%s\n%s", replay, time.Since(start), o, d)
	}
}
