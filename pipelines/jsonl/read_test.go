package jsonl_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/google/go-cmp/cmp"
)

// Batch and replay read the same records and dead letters from a glob of
// files, lines out of time order included.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.jsonl": "{\"id\":\"x\",\"t\":5000}\n{\"id\":\"y\",\"t\":1000}\r\n\n{\"id\":\"z\",\"t\":9000}",
		"b.jsonl": "{\"id\":2,\"t\":\"1970-01-01T00:00:03Z\"}\nnot json\n",
		"c.txt":   "{\"id\":\"ignored\",\"t\":0}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		`1000 "y" a.jsonl:2`, `3000 2 b.jsonl:1`, `5000 "x" a.jsonl:1`, `9000 "z" a.jsonl:4`,
		`a.jsonl:3: blank line`, `b.jsonl:2: bad JSON: invalid character 'o' in literal null (expecting 'u')`,
	}
	for _, replay := range []bool{false, true} {
		t.Run(map[bool]string{false: "batch", true: "replay"}[replay], func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			records, dead := jsonl.Read(s, jsonl.Source{Name: "left", Pattern: filepath.Join(dir, "*.jsonl"),
				Fields: jsonl.Fields{Key: "id", Time: "t"}, Replay: replay, WatermarkLag: time.Second})
			out := filepath.Join(t.TempDir(), "out")
			jsonl.Write(s, out, beam.Flatten(s, beam.ParDo(s, formatRecord, records), beam.ParDo(s, formatDeadLetter, dead)))
			if err := ptest.Run(p); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")); diff != "" {
				t.Errorf("records and dead letters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTryReadErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		src  jsonl.Source
		err  string
	}{
		{"no_match", jsonl.Source{Name: "left", Pattern: filepath.Join(dir, "*.jsonl"), Fields: jsonl.Fields{Key: "k", Time: "t"}},
			`beamjoin: left: "` + filepath.Join(dir, "*.jsonl") + `" matches no file`},
		{"no_key", jsonl.Source{Name: "right", Pattern: "x", Fields: jsonl.Fields{Time: "t"}},
			"beamjoin: right: the key field path is empty"},
		{"negative_lag", jsonl.Source{Name: "left", Pattern: "x", Fields: jsonl.Fields{Key: "k", Time: "t"}, Replay: true, WatermarkLag: -time.Second},
			"beamjoin: left: watermark lag -1s must be a non-negative whole number of milliseconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			_, _, err := jsonl.TryRead(s, tc.src)
			if err == nil || err.Error() != tc.err {
				t.Fatalf("TryRead error = %v, want %q", err, tc.err)
			}
		})
	}
}
