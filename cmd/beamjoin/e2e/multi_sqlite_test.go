package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// multiLine is a line of the multi-way join's generated inputs.
type multiLine struct {
	ID   string `json:"id"`
	User string `json:"user"`
	TS   int64  `json:"ts"`
}

// multiInputs generates impressions, clicks and conversions for three
// users: each impression gets clicks and conversions at offsets that
// include both bounds exactly and a millisecond outside them (clicks
// 0..10 s after, conversions 5 s before to 30 s after), impressions and
// clicks at equal times, and a click line repeated.
func multiInputs(seed uint64) (imps, clicks, convs []string) {
	rng := rand.New(rand.NewPCG(seed, 2))
	line := func(id, user string, ts int64) string {
		b, _ := json.Marshal(multiLine{id, user, ts})
		return string(b)
	}
	t0 := int64(1_700_000_000_000)
	for i := range 40 {
		user := fmt.Sprintf("u%d", rng.IntN(3))
		at := t0 + int64(rng.IntN(120))*1000
		imps = append(imps, line(fmt.Sprintf("i%d", i), user, at))
		for j, off := range []int64{0, 10_000, 10_001, -1, 4_000} {
			if rng.IntN(3) == 0 {
				clicks = append(clicks, line(fmt.Sprintf("c%d.%d", i, j), user, at+off))
			}
		}
		for j, off := range []int64{-5_000, 30_000, 30_001, -5_001, 12_000} {
			if rng.IntN(4) == 0 {
				convs = append(convs, line(fmt.Sprintf("v%d.%d", i, j), user, at+off))
			}
		}
	}
	clicks = append(clicks, clicks[0]) // a duplicate line: two elements, two rows each
	return imps, clicks, convs
}

// TestE2EMultiAgainstSQLite runs `beamjoin multi` on three generated
// inputs with both further inputs required, both optional, and mixed, and
// checks that its rows are SQLite's
// imps a [LEFT] JOIN clicks b ON key and bounds [LEFT] JOIN convs c ON key and bounds.
func TestE2EMultiAgainstSQLite(t *testing.T) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("sqlite3 is not installed (apt-get install -y sqlite3)")
	}
	dir := t.TempDir()
	imps, clicks, convs := multiInputs(1)
	writeLines(t, filepath.Join(dir, "imps.jsonl"), imps)
	writeLines(t, filepath.Join(dir, "clicks.jsonl"), clicks)
	writeLines(t, filepath.Join(dir, "convs.jsonl"), convs)
	bin := beamjoinBinary(t)
	for _, tc := range []struct {
		name     string
		optional []string
		joins    [2]string
	}{
		{"required", nil, [2]string{"JOIN", "JOIN"}},
		{"optional", []string{"--optional", "2", "--optional", "3"}, [2]string{"LEFT JOIN", "LEFT JOIN"}},
		{"mixed", []string{"--optional", "3"}, [2]string{"JOIN", "LEFT JOIN"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.name + ".jsonl"
			args := append([]string{"multi", "--input", "imps.jsonl", "--input", "clicks.jsonl", "--input", "convs.jsonl",
				"--key", "user", "--time", "ts", "--bounds", "0,10s", "--bounds", "-5s,30s", "--emit", "final", "--out", out}, tc.optional...)
			cmd := exec.Command(bin, args...)
			cmd.Dir = dir
			cmd.WaitDelay = 2 * time.Second
			msg, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("beamjoin %s: %v\n%s", strings.Join(args, " "), err, msg)
			}
			got := multiRows(t, filepath.Join(dir, out))
			want := sqliteMulti(t, dir, tc.joins, imps, clicks, convs)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("rows (-sqlite +beamjoin):\n%s", d)
			}
			t.Logf("%d rows; %s", len(got), msg)
		})
	}
}

// multiRows reads the command's rows as "a b c" ids, "-" for null,
// checking that each time is its record's.
func multiRows(t *testing.T, path string) []string {
	t.Helper()
	var got []string
	for _, text := range readLines(t, path) {
		var row struct {
			Key     string       `json:"key"`
			Records []*multiLine `json:"records"`
			Times   []*int64     `json:"times"`
		}
		if err := json.Unmarshal([]byte(text), &row); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		var ids []string
		for i, r := range row.Records {
			if r == nil {
				if row.Times[i] != nil {
					t.Errorf("%s: a time for a null record", text)
				}
				ids = append(ids, "-")
				continue
			}
			if row.Times[i] == nil || *row.Times[i] != r.TS || r.User != row.Key {
				t.Errorf("%s: record %d's time or key is not the row's", text, i)
			}
			ids = append(ids, r.ID)
		}
		got = append(got, strings.Join(ids, " "))
	}
	slices.Sort(got)
	return got
}

// sqliteMulti is SQLite's rows of the join, with the given joins for the
// clicks and the conversions.
func sqliteMulti(t *testing.T, dir string, joins [2]string, tables ...[]string) []string {
	t.Helper()
	var sql strings.Builder
	for i, name := range []string{"a", "b", "c"} {
		fmt.Fprintf(&sql, "CREATE TABLE %s(id TEXT, k TEXT, ts INTEGER);\n", name)
		for _, text := range tables[i] {
			var l multiLine
			if err := json.Unmarshal([]byte(text), &l); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&sql, "INSERT INTO %s VALUES('%s','%s',%d);\n", name, l.ID, l.User, l.TS)
		}
	}
	fmt.Fprintf(&sql, `SELECT a.id || ' ' || COALESCE(b.id, '-') || ' ' || COALESCE(c.id, '-') FROM a
  %s b ON b.k = a.k AND b.ts - a.ts BETWEEN 0 AND 10000
  %s c ON c.k = a.k AND c.ts - a.ts BETWEEN -5000 AND 30000;
`, joins[0], joins[1])
	return runSQLite(t, dir, sql.String())
}
