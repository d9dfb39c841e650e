package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// example is a command line shown to users, and where.
type example struct {
	where string
	args  []string // without the command's name
}

// helpExamples are the example commands of the help texts: the lines, with
// their continuations, that start with "beamjoin " and name sample files
// (the usage lines name none).
func helpExamples(t *testing.T) []example {
	var exs []example
	for _, topic := range [][]string{{"--help"}, {"help", "interval"}, {"help", "window"}, {"help", "cogroup"}} {
		r := mustRun(t, "", topic...)
		for _, cmd := range commands(r.stdout) {
			if rest, ok := strings.CutPrefix(cmd, "beamjoin "); ok && strings.Contains(cmd, "testdata/") {
				exs = append(exs, example{"beamjoin " + strings.Join(topic, " "), splitWords(t, rest)})
			}
		}
	}
	return exs
}

// docExamples are the commands of docs/cli.md's sh blocks that run the
// command, and the one of `make run`.
func docExamples(t *testing.T) []example {
	var exs []example
	doc, err := os.ReadFile("../../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	for _, b := range blocks {
		for _, cmd := range commands(b[1]) {
			if rest, ok := strings.CutPrefix(cmd, "go run ./cmd/beamjoin "); ok {
				exs = append(exs, example{"docs/cli.md", splitWords(t, rest)})
			}
		}
	}
	makefile, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	recipe := regexp.MustCompile(`(?m)^run:\n((?:\t.*\n)+)`).FindStringSubmatch(string(makefile))
	if recipe == nil {
		t.Fatal("Makefile: no run target")
	}
	for _, cmd := range commands(recipe[1]) {
		if rest, ok := strings.CutPrefix(cmd, "$(GO) run ./cmd/beamjoin "); ok {
			exs = append(exs, example{"make run", splitWords(t, rest)})
		}
	}
	return exs
}

// commands joins the lines of text that end in a backslash with the next,
// and returns the lines, trimmed.
func commands(text string) []string {
	var cmds []string
	var cur strings.Builder
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if more, ok := strings.CutSuffix(l, `\`); ok {
			cur.WriteString(more)
			continue
		}
		cur.WriteString(l)
		cmds = append(cmds, cur.String())
		cur.Reset()
	}
	return cmds
}

// splitWords splits a command line as a shell does, for the quoting the
// examples use: single quotes, and nothing else.
func splitWords(t *testing.T, s string) []string {
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for _, c := range s {
		switch {
		case c == '\'':
			quoted, inWord = !quoted, true
		case (c == ' ' || c == '\t') && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '"' || c == '\\' || c == '$':
			t.Fatalf("example %q: quoting the test does not handle", s)
		default:
			w.WriteRune(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// TestE2EExamples runs every example of the help texts, docs/cli.md and
// `make run`, as shown, in a directory whose testdata is the repository's,
// and checks that each succeeds and writes results.
func TestE2EExamples(t *testing.T) {
	t.Parallel()
	exs := append(helpExamples(t), docExamples(t)...)
	seen := map[string]bool{}
	counts := map[string]int{}
	for _, ex := range exs {
		counts[strings.Fields(ex.where)[0]]++
		key := strings.Join(ex.args, " ")
		if seen[key] {
			continue
		}
		seen[key] = true
		t.Run(strings.Join(ex.args[:1], "")+"_"+fmt.Sprint(len(seen)), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.Symlink(abs(t, "."), filepath.Join(dir, "testdata")); err != nil {
				t.Fatal(err)
			}
			r := run(t, dir, ex.args...)
			if r.code != 0 {
				t.Fatalf("%s: beamjoin %s: exit status %d\n%s", ex.where, key, r.code, r.stderr)
			}
			out := r.stdout
			if i := slices.Index(ex.args, "--out"); i >= 0 && ex.args[i+1] != "-" {
				out = r.file(t, ex.args[i+1])
			}
			if len(lines(out)) == 0 {
				t.Errorf("%s: beamjoin %s: no results\n%s", ex.where, key, r.stderr)
			}
		})
	}
	// The test must not pass for want of examples.
	if want := map[string]int{"beamjoin": 8, "docs/cli.md": 3, "make": 1}; !cmp.Equal(counts, want) {
		t.Errorf("examples found: %v, want %v", counts, want)
	}
}

// TestE2ENoValidLine runs the example whose key field is in no line (the
// data has ad.id, not ad_id): the command fails, saying so.
func TestE2ENoValidLine(t *testing.T) {
	t.Parallel()
	root, _ := filepath.Abs("../../..")
	r := run(t, root, "interval", "--left", "testdata/clicks.jsonl", "--right", "testdata/impressions.jsonl",
		"--key", "ad_id", "--time", "ts", "--lower", "-10m", "--upper", "0", "--out", filepath.Join(t.TempDir(), "out.jsonl"))
	if r.code != 1 {
		t.Fatalf("exit status %d, want 1\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		`beamjoin: no line of the left input is valid: field "ad_id": missing in 43 of 43 lines, e.g. testdata/clicks.jsonl:1: {"click_id":"c-001","ad":{"id":"ad-2","campaign":"spring"},"user":"u-08","ts":"2024-06-01T17:30:00.000Z"}`,
		`beamjoin: no line of the right input is valid: field "ad_id": missing in 160 of 160 lines, e.g. testdata/impressions.jsonl:1: `,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("standard error does not say\n%s\nit says\n%s", want, r.stderr)
		}
	}
	if c := counters(t, r.stderr); c["left_read"] != 43 || c["left_invalid"] != 43 || c["right_read"] != 160 || c["right_invalid"] != 160 {
		t.Errorf("summary: %v", c)
	}
}

// progressLine is a progress report.
var progressLine = regexp.MustCompile(`^beamjoin: [0-9.]+m?s: left \d+ lines read( \(event time [^)]+\))?, right \d+ lines read( \(event time [^)]+\))?; \d+ records out$`)

// TestE2EProgress checks that a run reports its progress on standard error
// (here every 10 ms from the start), that --quiet turns it off, and that
// at the default log level Prism logs nothing at info level.
func TestE2EProgress(t *testing.T) {
	t.Parallel()
	args := append([]string{"interval"}, small(t, "--lower", "0", "--upper", "5m")...)
	for _, tc := range []struct {
		name     string
		flags    []string
		progress bool
	}{
		{"progress", []string{"--progress", "10ms"}, true},
		{"quiet", []string{"--progress", "10ms", "--quiet"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mustRun(t, "", append(args, tc.flags...)...)
			var reports, other []string
			for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
				if progressLine.MatchString(l) {
					reports = append(reports, l)
				} else {
					other = append(other, l)
				}
			}
			if tc.progress != (len(reports) > 0) {
				t.Errorf("%d progress reports, want some: %v", len(reports), tc.progress)
			}
			// What is not progress is the summary: a table of three lines
			// and a line of records written.
			if len(other) != 4 || !strings.HasPrefix(other[0], "side ") || strings.Contains(r.stderr, "level=INFO") {
				t.Errorf("standard error, besides progress:\n%s", strings.Join(other, "\n"))
			}
			checkGolden(t, "interval_inner.jsonl", lines(r.stdout))
		})
	}
}

// TestE2EDryRun translates a join for Dataflow without running it: the
// translated job goes to standard output, one line about it to standard
// error, and no summary, since nothing ran.
func TestE2EDryRun(t *testing.T) {
	t.Parallel()
	r := mustRun(t, "", append([]string{"interval"}, small(t, "--lower", "0", "--upper", "5m",
		"--runner=dataflow", "--dry_run", "--project=p", "--region=us-central1",
		"--staging_location=gs://b/staging", "--temp_location=gs://b/temp", "--out=gs://b/out.jsonl")...)...)
	var job struct {
		Name, Type string
	}
	if err := json.Unmarshal([]byte(r.stdout), &job); err != nil || job.Type != "JOB_TYPE_BATCH" || job.Name == "" {
		t.Errorf("standard output is not the translated job (%v): %.300s", err, r.stdout)
	}
	said := regexp.MustCompile(`(?m)^beamjoin: dry run: the pipeline \(\d+ transforms\) was translated into a dataflow batch job, on standard output; nothing was submitted or run$`)
	if !said.MatchString(r.stderr) || strings.Contains(r.stderr, "side ") {
		t.Errorf("standard error:\n%s", r.stderr)
	}
}

// TestE2EReplayReproducible runs docs/cli.md's --watermark-lag example three
// times: the results and the late elements must be the same each time.
// pipelines/jsonl replays both inputs with one reader, in a fixed order,
// with one watermark, and the reader judges late the lines that the join
// would otherwise judge by timing (issue 9, item 2): the four payments
// that come more than the lag behind the latest time read.
func TestE2EReplayReproducible(t *testing.T) {
	t.Parallel()
	var ex *example
	for _, e := range docExamples(t) {
		if slices.Contains(e.args, "--watermark-lag") {
			ex = &e
		}
	}
	if ex == nil {
		t.Fatal("docs/cli.md has no --watermark-lag example")
	}
	var first []string
	for i := range 3 {
		dir := t.TempDir()
		if err := os.Symlink(abs(t, "."), filepath.Join(dir, "testdata")); err != nil {
			t.Fatal(err)
		}
		r := mustRun(t, dir, ex.args...)
		got := append(lines(r.file(t, "results.jsonl")), lines(r.file(t, "late.jsonl"))...)
		if i == 0 {
			first = got
			continue
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Fatalf("run %d differs from run 1 (-run 1 +run %d):\n%s", i+1, i+1, diff)
		}
	}
}
