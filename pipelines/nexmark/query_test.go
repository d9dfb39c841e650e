package nexmark

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/google/go-cmp/cmp"
)

// sqlRows is the rows of query q by SQLite over the event files in dir,
// sorted: sql/load.sql, then sql/q.sql.
func sqlRows(t *testing.T, dir string, q Query) []string {
	t.Helper()
	var script []byte
	for _, name := range []string{"load.sql", string(q) + ".sql"} {
		b, err := os.ReadFile(filepath.Join("sql", name))
		if err != nil {
			t.Fatal(err)
		}
		script = append(script, b...)
	}
	cmd := exec.Command("sqlite3", ":memory:")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(string(script))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3 %s: %v\n%s", q, err, out)
	}
	return sortedLines(string(out))
}

func sortedLines(s string) []string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) == 1 && ls[0] == "" {
		return nil
	}
	slices.Sort(ls)
	return ls
}

// TestQueriesMatchSQLite runs the three queries, beamjoin's and the
// SDK-only versions, on one set of generated events, bounded and
// streaming, and checks that each gives exactly SQLite's rows over the
// files the generator writes for the same events. 20,000 events at 500
// events/s span 40 s of event time: four of Query 8's windows, and about
// twelve auction lifetimes.
func TestQueriesMatchSQLite(t *testing.T) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("sqlite3 is not installed (apt-get install -y sqlite3)")
	}
	c := Config{Seed: 5, Events: 20_000, Rate: 500}
	events, err := Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteJSONL(dir, events); err != nil {
		t.Fatal(err)
	}
	want := map[Query][]string{}
	for _, q := range Queries {
		want[q] = sqlRows(t, dir, q)
		if len(want[q]) < 20 {
			t.Fatalf("SQLite gives %d rows for %s; the test needs more to mean anything", len(want[q]), q)
		}
	}

	for _, stream := range []bool{false, true} {
		mode := map[bool]string{false: "bounded", true: "streaming"}[stream]
		t.Run(mode, func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			var ev Events
			if stream {
				ev = ReadStream(s, c, 1000) // a watermark step every 2 s of event time
			} else {
				ev = Read(s, c)
			}
			out := t.TempDir()
			file := func(q Query, sdkOnly bool) string {
				return filepath.Join(out, map[bool]string{false: "beamjoin", true: "sdk"}[sdkOnly]+"-"+string(q)+".jsonl")
			}
			for _, q := range Queries {
				for _, sdkOnly := range []bool{false, true} {
					rows, err := Rows(s, q, sdkOnly, ev, c)
					if err != nil {
						t.Fatal(err)
					}
					jsonl.Write(s, file(q, sdkOnly), rows)
				}
			}
			if err := ptest.Run(p); err != nil {
				t.Fatal(err)
			}
			for _, q := range Queries {
				for _, sdkOnly := range []bool{false, true} {
					b, err := os.ReadFile(file(q, sdkOnly))
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(want[q], sortedLines(string(b))); diff != "" {
						t.Errorf("%s: rows (-SQLite +pipeline):\n%s", filepath.Base(file(q, sdkOnly)), diff)
					}
				}
			}
		})
	}
}
