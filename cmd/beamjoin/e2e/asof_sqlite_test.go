package e2e

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var asofLines = flag.Int("asof-lines", 1000, "TestE2EAsOfAgainstSQLite: lines per side")

// TestE2EAsOfAgainstSQLite runs `beamjoin asof --type left --max-age 30m`
// on generated orders and currency rates (asofInput: 50 currencies, six
// hours, ties among rates of one currency and time) three ways: files read
// whole (the bounded path), the same with the rates file reversed (the tie
// rule must not depend on line order), and replayed with --watermark-lag
// 10m (state and timers; lines are at most 5 minutes out of time order, so
// none is late). All three must write the same records, and those must be
// SQLite's as-of join of the same lines: for each order, the rate of its
// currency with the greatest time in [t - 30m, t], ties broken by the
// greater line (the lines of a tie have equal length, so that is the join's
// greater encoded value). -asof-lines sets the lines per side (1,000 by
// default; make bench runs 100,000).
func TestE2EAsOfAgainstSQLite(t *testing.T) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("sqlite3 is not installed (apt-get install -y sqlite3)")
	}
	t.Parallel()
	dir := t.TempDir()
	orders, rates := asofInput(*asofLines)
	writeLines(t, filepath.Join(dir, "orders.jsonl"), orders)
	writeLines(t, filepath.Join(dir, "rates.jsonl"), rates)
	reversedRates := slices.Clone(rates)
	slices.Reverse(reversedRates)
	writeLines(t, filepath.Join(dir, "rates-reversed.jsonl"), reversedRates)

	bin := beamjoinBinary(t)
	run := func(out, right string, extra ...string) []string {
		args := append([]string{"asof", "--left", "orders.jsonl", "--right", right, "--key", "currency", "--time", "ts",
			"--type", "left", "--max-age", "30m", "--out", out, "--quiet"}, extra...)
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.WaitDelay = 2 * time.Second
		start := time.Now()
		msg, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("beamjoin %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
		t.Logf("beamjoin %s: %.1f s\n%s", strings.Join(extra, " "), time.Since(start).Seconds(), msg)
		return asofRecords(t, filepath.Join(dir, out))
	}
	bounded := run("bounded.jsonl", "rates.jsonl")
	reversed := run("reversed.jsonl", "rates-reversed.jsonl")
	replayed := run("replayed.jsonl", "rates.jsonl", "--watermark-lag", "10m", "--late", "late.jsonl")
	if late := readLines(t, filepath.Join(dir, "late.jsonl")); len(late) > 0 {
		t.Errorf("the replay judged %d lines late, e.g. %s; want none (no line is 10 minutes behind)", len(late), late[0])
	}
	start := time.Now()
	want := sqliteAsOf(t, dir, orders, rates)
	t.Logf("SQLite: %.1f s; %d records, %d unmatched", time.Since(start).Seconds(), len(want),
		len(slices.DeleteFunc(slices.Clone(want), func(l string) bool { return !strings.HasPrefix(l, "unmatched") })))
	for _, got := range []struct {
		name string
		recs []string
	}{{"bounded", bounded}, {"bounded, rates reversed", reversed}, {"replayed", replayed}} {
		if missing, extra := difference(want, got.recs), difference(got.recs, want); len(missing)+len(extra) > 0 {
			t.Errorf("%s: beamjoin's records differ from SQLite's: %d missing, e.g. %q; %d extra, e.g. %q",
				got.name, len(missing), first(missing), len(extra), first(extra))
		}
	}
}

// asofInput makes n orders and n rates over six hours: a rate of one of
// 50 currencies every n/6h on average, one in 20 at the same time as the
// currency's previous rate (a tie); an order at a random time. Each file is
// in time order, each line moved by up to 5 minutes. Rate lines of one
// currency all have the same length.
func asofInput(n int) (orders, rates []string) {
	rng := rand.New(rand.NewPCG(31, 7))
	const epoch, span, jitter = 1_700_000_000_000, 6 * 3600_000, 5 * 60_000
	var ls, rs []arrivingLine
	last := map[int]int64{}
	for i := range n {
		c := rng.IntN(50)
		ts := epoch + rng.Int64N(span)
		if prev, ok := last[c]; ok && rng.IntN(20) == 0 {
			ts = prev
		}
		last[c] = ts
		text := fmt.Sprintf(`{"currency":"c%02d","ts":%d,"rid":"r%06d","per_usd":%d}`, c, ts, i, 100_000+rng.IntN(900_000))
		rs = append(rs, arrivingLine{text, ts + rng.Int64N(jitter)})
	}
	for i := range n {
		ts := epoch + rng.Int64N(span)
		text := fmt.Sprintf(`{"currency":"c%02d","ts":%d,"lid":"l%06d"}`, rng.IntN(50), ts, i)
		ls = append(ls, arrivingLine{text, ts + rng.Int64N(jitter)})
	}
	return inArrivalOrder(ls), inArrivalOrder(rs)
}

// asofLine holds what the test reads of a generated line.
type asofLine struct {
	Currency string `json:"currency"`
	TS       int64  `json:"ts"`
	LID      string `json:"lid"`
	RID      string `json:"rid"`
}

// asofRecords reads the command's records as "pair LID RID" and
// "unmatched LID -", sorted.
func asofRecords(t *testing.T, path string) []string {
	t.Helper()
	var got []string
	for _, l := range readLines(t, path) {
		var r struct {
			Kind        string
			Left, Right *asofLine
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%s: %v: %s", path, err, l)
		}
		rid := "-"
		if r.Right != nil {
			rid = r.Right.RID
		}
		got = append(got, r.Kind+" "+r.Left.LID+" "+rid)
	}
	slices.Sort(got)
	return got
}

// sqliteAsOf is the left outer as-of join with a 30-minute max age, by
// SQLite, as asofRecords reads the command's.
func sqliteAsOf(t *testing.T, dir string, orders, rates []string) []string {
	t.Helper()
	var sql strings.Builder
	sql.WriteString("CREATE TABLE l(id TEXT, k TEXT, ts INTEGER); CREATE TABLE r(id TEXT, k TEXT, ts INTEGER, raw TEXT);\nBEGIN;\n")
	for _, text := range orders {
		var l asofLine
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sql, "INSERT INTO l VALUES('%s','%s',%d);\n", l.LID, l.Currency, l.TS)
	}
	for _, text := range rates {
		var r asofLine
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sql, "INSERT INTO r VALUES('%s','%s',%d,'%s');\n", r.RID, r.Currency, r.TS, text)
	}
	sql.WriteString(`COMMIT;
CREATE INDEX rk ON r(k, ts);
SELECT CASE WHEN m IS NULL THEN 'unmatched ' || id || ' -' ELSE 'pair ' || id || ' ' || m END FROM (
  SELECT l.id AS id, (SELECT r.id FROM r WHERE r.k = l.k AND r.ts <= l.ts AND r.ts >= l.ts - 1800000
                      ORDER BY r.ts DESC, r.raw DESC LIMIT 1) AS m FROM l);
`)
	return runSQLite(t, dir, sql.String())
}
