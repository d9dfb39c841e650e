package e2e

// This file walks the bad-input corpus in testdata/bad/ (issue 11): each
// file is given as the left input of `beamjoin interval`, a full outer join
// with final emission, so that every good line of it must come out in a
// result (paired or unmatched) and every bad line as a dead letter naming
// its file and line. The expectations are written from the reader's
// contract (pipelines/jsonl's package doc and Fields.Parse, SPEC §6), not
// from a run: which lines are bad, and why in a few words.
//
// Besides the files, the table has inputs that are not files of lines: a
// 10 MB line written at test time (not committed), a directory, a missing
// file and a glob that matches nothing. Those end in a one-line usage error.
// No case may crash the command or hang it: each run has a deadline.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// badRunDeadline bounds one run of the command on a corpus file: a run
// that takes longer is a hang. A run takes a few seconds on a busy machine.
const badRunDeadline = 3 * time.Minute

// badCase is one input of the corpus and what must become of it.
type badCase struct {
	name string
	// file is the corpus file under testdata/bad, or for generated inputs
	// a name in the test's directory (made by gen).
	file string
	gen  func(t *testing.T, dir string) string // returns the --left argument
	// bad maps the 1-based numbers of the lines that must be dead letters
	// to a part of their error; every other line is good.
	bad map[int64]string
	// code is the exit status: 0, 1 when no line is valid, 2 for a usage
	// error, whose one line of standard error must contain usage.
	code  int
	usage string
	// bug names an open bug that makes the run differ from the contract:
	// the row still fails if a line is lost, a crash or a hang, and is
	// skipped, saying why, if it differs only as the bug says.
	bug string
}

var badCorpus = []badCase{
	{name: "invalid_utf8", file: "invalid_utf8.jsonl",
		// JSON text is UTF-8 (RFC 8259 §8.1); a key or field with other
		// bytes cannot be read as what was written.
		bad: map[int64]string{2: "UTF-8", 3: "UTF-8"},
		bug: "pipelines/jsonl accepts lines that are not UTF-8: encoding/json reads the bytes as U+FFFD, so distinct keys merge, and the result copies the raw bytes, so the output line is not valid JSON either"},
	{name: "truncated", file: "truncated.jsonl",
		bad: map[int64]string{2: "bad JSON", 4: "bad JSON"}},
	{name: "not_objects", file: "not_objects.jsonl",
		bad: map[int64]string{1: "not a JSON object", 2: "not a JSON object", 4: "not a JSON object"}},
	{name: "key_object", file: "key_object.jsonl",
		bad: map[int64]string{2: `field "id": is an object`}},
	{name: "key_array", file: "key_array.jsonl",
		bad: map[int64]string{1: `field "id": is an array`, 3: `field "id": is an array`}},
	{name: "key_boolean_or_null", file: "key_boolean.jsonl",
		bad: map[int64]string{1: `field "id": is a boolean`, 2: `field "id": is a boolean`, 4: `field "id": is null`}},
	// Numbers are keys by value: 12345678901234567890123 is a key, and so
	// is 1e1000000 (an integer, written out).
	{name: "key_huge_number", file: "key_huge_number.jsonl"},
	// Event time is Beam's: about ±292 million years. Year 10000 in epoch
	// milliseconds is a time; RFC 3339 has four-digit years only.
	{name: "time_after_9999", file: "time_after_9999.jsonl",
		bad: map[int64]string{3: "not an RFC 3339 time", 4: "outside the range of event time"}},
	{name: "time_before_1970", file: "time_before_1970.jsonl",
		bad: map[int64]string{5: "outside the range of event time"}},
	{name: "time_exponent", file: "time_exponent.jsonl",
		bad: map[int64]string{3: "not a whole number of epoch milliseconds", 5: "not a whole number of epoch milliseconds"}},
	{name: "time_fractional", file: "time_fractional.jsonl",
		bad: map[int64]string{2: "not a whole number of epoch milliseconds", 4: "not an RFC 3339 time"}},
	// A CRLF line end is a line end; a line of only "\r" is blank.
	{name: "crlf", file: "crlf.jsonl", bad: map[int64]string{3: "blank line"}},
	// A byte order mark is not JSON (RFC 8259 §8.1: it must not be added).
	{name: "bom", file: "bom.jsonl", bad: map[int64]string{1: "bad JSON"}},
	// An empty file is an input of no lines: nothing to join, nothing lost.
	{name: "empty", file: "empty.jsonl"},
	// Lines, none valid: the command fails, saying why.
	{name: "only_blank_lines", file: "blank_lines.jsonl",
		bad:  map[int64]string{1: "blank line", 2: "blank line", 3: "blank line", 4: "blank line"},
		code: 1, usage: "beamjoin: no line of the left input is valid: blank line in 4 of 4 lines"},
	{name: "line_of_10MB", file: "long.jsonl", gen: genLongLine,
		bad: map[int64]string{2: "over the 1048576-byte limit"}},
	{name: "directory", file: "dir", gen: func(t *testing.T, dir string) string {
		d := filepath.Join(dir, "dir")
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}, code: 2, usage: "is a directory; give its files, e.g. '"},
	{name: "missing_file", file: "missing.jsonl", gen: func(t *testing.T, dir string) string {
		return filepath.Join(dir, "missing.jsonl")
	}, code: 2, usage: "missing.jsonl: matches no file"},
	{name: "glob_matching_nothing", file: "none-*.jsonl", gen: func(t *testing.T, dir string) string {
		return filepath.Join(dir, "none-*.jsonl")
	}, code: 2, usage: "none-*.jsonl: matches no file"},
}

// genLongLine writes a file of a good line, a 10 MB line and a good line.
func genLongLine(t *testing.T, dir string) string {
	path := filepath.Join(dir, "long.jsonl")
	var b bytes.Buffer
	b.WriteString(`{"id":"g1","t":1000}` + "\n")
	b.WriteString(`{"id":"g2","t":1000,"pad":"` + strings.Repeat("x", 10<<20) + `"}` + "\n")
	b.WriteString(`{"id":"g3","t":1000}` + "\n")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// badRight is the right input of every run: a line for each key the
// corpus uses, so that good left lines find partners.
const badRight = `{"id":"g1","t":1000,"side":"R"}
{"id":"g2","t":1000,"side":"R"}
{"id":"g3","t":1000,"side":"R"}
{"id":"g4","t":1000,"side":"R"}
`

// TestE2EBadInput runs the command on each input of the corpus: every line
// comes out once, as a result if it is good or as a dead letter naming its
// file, line and fault if it is not, and the summary counts them; inputs
// that are not files of lines end in one line of usage error. Run alone
// with -run 'TestE2EBadInput/NAME'.
func TestE2EBadInput(t *testing.T) {
	t.Parallel()
	corpus, err := filepath.Glob(filepath.Join(testdata, "bad", "*"))
	if err != nil {
		t.Fatal(err)
	}
	walked := map[string]bool{}
	for _, tc := range badCorpus {
		walked[tc.file] = true
	}
	// Every committed file of the corpus is in the table.
	for _, f := range corpus {
		if !walked[filepath.Base(f)] {
			t.Errorf("testdata/bad/%s is not in the table of TestE2EBadInput", filepath.Base(f))
		}
	}
	if len(corpus) < 12 {
		t.Errorf("testdata/bad holds %d files, want at least 12", len(corpus))
	}
	for _, tc := range badCorpus {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			left := filepath.Join(dir, tc.file)
			if tc.gen != nil {
				left = tc.gen(t, dir)
			} else {
				b, err := os.ReadFile(filepath.Join(testdata, "bad", tc.file))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(left, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "right.jsonl"), []byte(badRight), 0o644); err != nil {
				t.Fatal(err)
			}
			r := runWithin(t, dir, badRunDeadline, "interval", "--left", left, "--right", "right.jsonl",
				"--key", "id", "--time", "t", "--lower", "-1h", "--upper", "1h", "--type", "full", "--emit", "final",
				"--out", "out.jsonl", "--dead-letter", "dead.jsonl", "--quiet")
			if r.code != tc.code {
				t.Fatalf("exit status %d, want %d; standard error:\n%s", r.code, tc.code, r.stderr)
			}
			if tc.code == 2 {
				if ls := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n"); len(ls) != 1 || !strings.Contains(ls[0], tc.usage) {
					t.Errorf("standard error is not one line containing %q:\n%s", tc.usage, r.stderr)
				}
				return
			}
			if tc.code == 1 && !strings.Contains(r.stderr, tc.usage) {
				t.Errorf("standard error does not say %q:\n%s", tc.usage, r.stderr)
			}
			checkBadRun(t, r, left, tc)
		})
	}
}

// checkBadRun checks a run that read the file: each bad line is one dead
// letter, each good line is in the results, and the summary counts both.
func checkBadRun(t *testing.T, r result, left string, tc badCase) {
	t.Helper()
	// Differences from the contract are collected, so that a row with a
	// known bug can be skipped for them; a lost line always fails.
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	defer func() {
		switch {
		case len(problems) == 0:
		case tc.bug != "" && !t.Failed():
			t.Skipf("known bug: %s:\n%s", tc.bug, strings.Join(problems, "\n"))
		default:
			t.Error(strings.Join(problems, "\n"))
		}
	}()
	text, err := os.ReadFile(left)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	if len(text) > 0 {
		lines = bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n"))
	}

	// Dead letters: exactly the bad lines, each once, naming the file and
	// saying what is wrong.
	type dead struct {
		File  string `json:"file"`
		Line  int64  `json:"line"`
		Error string `json:"error"`
	}
	got := map[int64]string{}
	for _, l := range nonEmpty(readIfAny(t, filepath.Join(r.dir, "dead.jsonl"))) {
		var d dead
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatalf("dead letter %q: %v", l, err)
		}
		if d.File != left {
			bad("dead letter of line %d names file %q, want %q", d.Line, d.File, left)
		}
		if _, twice := got[d.Line]; twice {
			bad("line %d is dead-lettered twice", d.Line)
		}
		got[d.Line] = d.Error
	}
	for n, want := range tc.bad {
		if e, ok := got[n]; !ok {
			bad("line %d (%.80q) is not a dead letter; want one saying %q", n, lines[n-1], want)
		} else if !strings.Contains(e, want) {
			bad("line %d: dead letter says %q, want it to say %q", n, e, want)
		}
	}
	for n, e := range got {
		if _, ok := tc.bad[n]; !ok {
			bad("line %d is a dead letter (%s), but it is good: %.120q", n, e, lines[n-1])
		}
	}

	// Results: with a full outer join and final emission every good line is
	// in a pair or an unmatched record; all right lines are good.
	var want []string
	for i, l := range lines {
		if _, isBad := tc.bad[int64(i+1)]; !isBad {
			want = append(want, compactJSON(t, l))
		}
	}
	gotLeft := map[string]bool{}
	rights := 0
	for _, l := range nonEmpty(readIfAny(t, filepath.Join(r.dir, "out.jsonl"))) {
		var rec struct {
			Left, Right json.RawMessage
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("result %q: %v", l, err)
		}
		if rec.Left != nil {
			gotLeft[compactJSON(t, rec.Left)] = true
		}
		if rec.Right != nil {
			rights++
		}
	}
	var missing []string
	for _, w := range want {
		if !gotLeft[w] {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		bad("good lines in no result: %q", missing)
	}
	// Nothing is lost, whatever the verdict on each line: every line is a
	// dead letter or in a result.
	for i, l := range lines {
		if _, isDead := got[int64(i+1)]; !isDead && !gotLeft[compactJSON(t, l)] {
			t.Errorf("line %d (%.80q) is lost: neither a dead letter nor in a result", i+1, l)
		}
	}
	if rights < strings.Count(badRight, "\n") {
		bad("%d results hold a right line, want at least %d (one per right line)", rights, strings.Count(badRight, "\n"))
	}

	// The summary counts every line of the file.
	c := counters(t, r.stderr)
	if c["left_read"] != int64(len(lines)) || c["left_invalid"] != int64(len(tc.bad)) {
		bad("summary: left read %d, invalid %d; want %d, %d", c["left_read"], c["left_invalid"], len(lines), len(tc.bad))
	}
}

// runWithin runs the command like run, but fails the test if it runs
// longer than d: a hang is a failure, not a stuck test binary.
func runWithin(t *testing.T, dir string, d time.Duration, args ...string) result {
	t.Helper()
	bin := beamjoinBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("beamjoin %s: still running after %v (a hang); standard error:\n%s", strings.Join(args, " "), d, stderr.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && !errors.Is(err, exec.ErrWaitDelay) {
		t.Fatal(err)
	}
	if code := cmd.ProcessState.ExitCode(); code < 0 || code > 2 {
		t.Fatalf("beamjoin %s: exit status %d (%v), a crash; standard error:\n%s", strings.Join(args, " "), code, cmd.ProcessState, stderr.String())
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String(), dir: dir}
}

func readIfAny(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func nonEmpty(s string) []string {
	return slices.DeleteFunc(strings.Split(s, "\n"), func(l string) bool { return l == "" })
}

// compactJSON is a JSON value's text without insignificant white space, to
// compare an input line with the copy of it in a result.
func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, bytes.TrimSpace(b)); err != nil {
		return fmt.Sprintf("%q (not JSON: %v)", b, err)
	}
	return out.String()
}
