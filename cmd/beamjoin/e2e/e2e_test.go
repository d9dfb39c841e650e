// Package e2e holds the beamjoin command's end-to-end tests. They are a
// package of their own so that their -update flag does not clash with the
// flags Beam's runners register in the command.
//
// The tests build the beamjoin binary, run it on the files in
// testdata/ and compare whole outputs, as sorted lines, with the golden
// files in testdata/golden/. Regenerate those with
//
//	go test ./cmd/beamjoin/e2e -update
//
// and review the diff.

package e2e

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const (
	testdata = "../../../testdata"
	golden   = "../../../testdata/golden"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// beamjoinBinary builds the command once per test run.
func beamjoinBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "beamjoin-e2e")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "beamjoin")
		out, err := exec.Command("go", "build", "-o", binary, "..").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// result is what one run of the command left behind.
type result struct {
	code           int
	stdout, stderr string
	dir            string // the working directory, where output files are
}

// run runs beamjoin with args in dir (a fresh temporary directory when
// empty).
func run(t *testing.T, dir string, args ...string) result {
	t.Helper()
	bin := beamjoinBinary(t)
	if dir == "" {
		dir = t.TempDir()
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A worker process that the runner started may outlive the command a
	// moment with its standard error open; do not wait for it.
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && !errors.Is(err, exec.ErrWaitDelay) {
		t.Fatal(err)
	}
	code := cmd.ProcessState.ExitCode()
	return result{code: code, stdout: stdout.String(), stderr: stderr.String(), dir: dir}
}

// mustRun is run that fails the test unless the command succeeds.
func mustRun(t *testing.T, dir string, args ...string) result {
	t.Helper()
	r := run(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("beamjoin %s: exit status %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r
}

// lines splits output into its lines, sorted: outputs are compared as
// multisets, whatever their order.
func lines(s string) []string {
	var ls []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			ls = append(ls, l)
		}
	}
	slices.Sort(ls)
	return ls
}

func (r result) file(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkGolden compares got, as sorted lines, with testdata/golden/name, or
// rewrites that file under -update.
func checkGolden(t *testing.T, name string, got []string) {
	t.Helper()
	path := filepath.Join(golden, name)
	if *update {
		text := strings.Join(got, "\n")
		if len(got) > 0 {
			text += "\n"
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(lines(string(want)), got); diff != "" {
		t.Errorf("output differs from %s (-want +got):\n%s", path, diff)
	}
}

// abs is a testdata file's absolute path, for runs in other directories.
func abs(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(testdata, name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// counters reads the summary the command prints on standard error into
// "left_read"-style names.
func counters(t *testing.T, stderr string) map[string]int64 {
	t.Helper()
	c := map[string]int64{}
	var cols []string
	for _, l := range strings.Split(stderr, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 0 && f[0] == "side":
			cols = f[1:]
		case len(f) > 0 && (f[0] == "left" || f[0] == "right") && len(f) == len(cols)+1:
			for i, v := range f[1:] {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("summary line %q: %v", l, err)
				}
				c[f[0]+"_"+cols[i]] = n
			}
		case len(f) > 0 && strings.HasSuffix(f[0], "_out"):
			for i := 0; i+1 < len(f); i += 2 {
				n, err := strconv.ParseInt(f[i+1], 10, 64)
				if err != nil {
					t.Fatalf("summary line %q: %v", l, err)
				}
				c[f[i]] = n
			}
		}
	}
	if len(c) == 0 {
		t.Fatalf("no counters summary on standard error:\n%s", stderr)
	}
	return c
}

// small are the flags of the small hand-made inputs in testdata/e2e: keys
// at "id", times at "t". See TestE2EInterval for what they hold.
func small(t *testing.T, extra ...string) []string {
	return append([]string{"--left", abs(t, "e2e/left.jsonl"), "--right", abs(t, "e2e/right.jsonl"),
		"--key", "id", "--time", "t"}, extra...)
}

// TestE2EReadyPipelines runs the two ready pipelines on the sample data,
// exactly as docs/cli.md shows them.
func TestE2EReadyPipelines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		// read and invalid lines per side, from the summary
		read, invalid [2]int64
	}{
		{
			name: "reconcile",
			args: []string{"interval", "--left", "testdata/orders.jsonl", "--right", "testdata/payments.jsonl",
				"--key", "order_id", "--time", "ts", "--lower", "0", "--upper", "15m", "--type", "left", "--emit", "final"},
			read: [2]int64{201, 222}, invalid: [2]int64{1, 2},
		},
		{
			name: "attribution",
			args: []string{"interval", "--left", "testdata/clicks.jsonl", "--right", "testdata/impressions.jsonl",
				"--key", "ad.id", "--time", "ts", "--lower", "-10m", "--upper", "0", "--type", "left", "--emit", "final"},
			read: [2]int64{43, 160}, invalid: [2]int64{1, 0},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Run from the repository root, as `make run` does, so that dead
			// letters name the files as docs/cli.md shows.
			root, _ := filepath.Abs("../../..")
			out := filepath.Join(t.TempDir(), "out.jsonl")
			dead := filepath.Join(t.TempDir(), "dead.jsonl")
			r := mustRun(t, root, append(tc.args, "--out", out, "--dead-letter", dead)...)
			got, _ := os.ReadFile(out)
			checkGolden(t, tc.name+".jsonl", lines(string(got)))
			got, _ = os.ReadFile(dead)
			checkGolden(t, tc.name+".deadletters.jsonl", lines(string(got)))
			c := counters(t, r.stderr)
			for i, side := range []string{"left", "right"} {
				if c[side+"_read"] != tc.read[i] || c[side+"_invalid"] != tc.invalid[i] {
					t.Errorf("%s: read %d, invalid %d; want %d, %d", side, c[side+"_read"], c[side+"_invalid"], tc.read[i], tc.invalid[i])
				}
			}
		})
	}
}

// TestE2EInterval runs the interval join on the small inputs, whose
// left (L) and right (R) objects, with bounds [0, 5m], are:
//
//	a: L1 at 0 and L2 at 1m; R1 at 30s (pairs with L1), R2 at 1m30s (with both)
//	b: L3 at 2m; R3 exactly 5m later (pairs: bounds are inclusive), R4 1 ms more (no)
//	c: L4, no right
//	1: L5 (number key); R5 with the string key "1" (another key), R6 with 1.0 (the same)
//	e: L6 at 5m (an RFC 3339 time); R7 1 ms before it (no)
//	f: R8, no left
func TestE2EInterval(t *testing.T) {
	t.Parallel()
	bounds := []string{"--lower", "0", "--upper", "5m"}
	for _, tc := range []struct {
		name, golden string
		args         []string
	}{
		{"inner", "interval_inner.jsonl", []string{}},
		{"left_final", "interval_left_final.jsonl", []string{"--type", "left", "--emit", "final"}},
		{"right_final", "interval_right_final.jsonl", []string{"--type", "right", "--emit", "final"}},
		{"full_final", "interval_full_final.jsonl", []string{"--type", "full", "--emit", "final"}},
		{"inner_upper_exclusive", "interval_inner_upper_exclusive.jsonl", []string{"--upper-exclusive"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mustRun(t, "", append([]string{"interval"}, small(t, append(bounds, tc.args...)...)...)...)
			checkGolden(t, tc.golden, lines(r.stdout))
		})
	}

	// Immediate and retract emission depend on which side of a pair
	// arrives first, which a runner does not promise. What they promise is
	// checked instead: an immediate run is the final run plus, for some
	// elements that have pairs, one earlier unmatched record; a retract run
	// nets (each retract cancelling one unmatched record) to the final run.
	t.Run("full_immediate", func(t *testing.T) {
		t.Parallel()
		r := mustRun(t, "", append([]string{"interval"}, small(t, append(bounds, "--type", "full", "--emit", "immediate")...)...)...)
		got := lines(r.stdout)
		var kept []string
		for _, l := range got {
			if !strings.HasPrefix(l, `{"kind":"unmatched"`) || !hasPair(got, l) {
				kept = append(kept, l)
			}
		}
		if n := len(got) - len(kept); n > 5 {
			t.Errorf("%d unmatched records of elements with pairs; at most one for each of the 5 such left and right elements", n)
		}
		checkGolden(t, "interval_full_final.jsonl", kept)
	})
	t.Run("full_retract", func(t *testing.T) {
		t.Parallel()
		r := mustRun(t, "", append([]string{"interval"}, small(t, append(bounds, "--type", "full", "--emit", "retract")...)...)...)
		var net, retracts []string
		for _, l := range lines(r.stdout) {
			if rest, ok := strings.CutPrefix(l, `{"kind":"retract"`); ok {
				retracts = append(retracts, `{"kind":"unmatched"`+rest)
			} else {
				net = append(net, l)
			}
		}
		for _, u := range retracts {
			i := slices.Index(net, u)
			if i < 0 {
				t.Fatalf("a retraction with no unmatched record to retract: %s", u)
			}
			net = slices.Delete(net, i, i+1)
		}
		slices.Sort(net)
		checkGolden(t, "interval_full_final.jsonl", net)
	})
}

// hasPair reports whether the element of an unmatched record is in a pair.
func hasPair(all []string, unmatched string) bool {
	for _, side := range []string{`"left":`, `"right":`} {
		i := strings.Index(unmatched, side+"{")
		if i < 0 {
			continue
		}
		obj := unmatched[i+len(side) : i+len(side)+strings.Index(unmatched[i+len(side):], "}")+1]
		for _, l := range all {
			if strings.HasPrefix(l, `{"kind":"pair"`) && strings.Contains(l, side+obj) {
				return true
			}
		}
	}
	return false
}

// TestE2EOutOfOrder runs the joins on the small inputs with their lines in
// reverse order: batch results do not depend on the order of lines.
func TestE2EOutOfOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"left.jsonl", "right.jsonl"} {
		b, err := os.ReadFile(abs(t, "e2e/"+name))
		if err != nil {
			t.Fatal(err)
		}
		ls := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		slices.Reverse(ls)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(ls, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"--left", "left.jsonl", "--right", "right.jsonl", "--key", "id", "--time", "t"}
	r := mustRun(t, dir, append(append([]string{"interval"}, args...), "--lower", "0", "--upper", "5m", "--type", "full", "--emit", "final")...)
	checkGolden(t, "interval_full_final.jsonl", lines(r.stdout))
	r = mustRun(t, dir, append(append([]string{"window"}, args...), "--size", "2m", "--type", "full")...)
	checkGolden(t, "window_full_fixed.jsonl", lines(r.stdout))
}

// TestE2EWindowAndCoGroup runs the window join and the cogroup on the small
// inputs.
func TestE2EWindowAndCoGroup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"window_full_fixed", []string{"window", "--size", "2m", "--type", "full"}},
		{"window_inner_sliding", []string{"window", "--size", "2m", "--slide", "1m"}},
		{"cogroup_fixed", []string{"cogroup", "--size", "2m"}},
		{"cogroup_sessions", []string{"cogroup", "--gap", "1m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mustRun(t, "", append(tc.args[:1], small(t, tc.args[1:]...)...)...)
			checkGolden(t, tc.name+".jsonl", lines(r.stdout))
		})
	}
}

// TestE2EMalformed feeds the small left input with bad lines mixed in:
// every bad line goes to the dead-letter file, counted, and every good
// line is still joined.
func TestE2EMalformed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good, err := os.ReadFile(abs(t, "e2e/left.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	bad := []string{
		`{"id":"x","t":1000`,       // bad JSON
		`{"t":1000,"v":"no key"}`,  // missing key
		`{"id":"x","v":"no time"}`, // missing time
		`{"id":"x","t":"tuesday"}`, // unparsable time
		`{"id":true,"t":1000}`,     // a key that is not a string or number
		`{"id":"x","t":1000,"pad":"` + strings.Repeat("x", 3<<19) + `"}`, // 1.5 MiB
		`[1,2,3]`, // not an object
		``,        // blank
	}
	var b strings.Builder
	goodLines := strings.Split(strings.TrimSuffix(string(good), "\n"), "\n")
	for i := 0; i < max(len(goodLines), len(bad)); i++ {
		if i < len(goodLines) {
			b.WriteString(goodLines[i] + "\n")
		}
		if i < len(bad) {
			b.WriteString(bad[i] + "\n")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "left.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, dir, "interval", "--left", "left.jsonl", "--right", abs(t, "e2e/right.jsonl"),
		"--key", "id", "--time", "t", "--lower", "0", "--upper", "5m", "--type", "full", "--emit", "final",
		"--dead-letter", "dead.jsonl")
	checkGolden(t, "interval_full_final.jsonl", lines(r.stdout))
	dead := lines(r.file(t, "dead.jsonl"))
	// The huge line's raw text is cut to its first 4 KiB.
	for i, l := range dead {
		dead[i] = regexp.MustCompile(`x{100,}`).ReplaceAllString(l, "x…")
	}
	checkGolden(t, "malformed.deadletters.jsonl", dead)
	c := counters(t, r.stderr)
	if c["left_read"] != int64(len(goodLines)+len(bad)) || c["left_invalid"] != int64(len(bad)) || c["right_invalid"] != 0 {
		t.Errorf("summary: left read %d invalid %d, right invalid %d; want %d, %d, 0",
			c["left_read"], c["left_invalid"], c["right_invalid"], len(goodLines)+len(bad), len(bad))
	}
}

// TestE2EWatermarkLag replays two files as streams: orders (left) k1 at 0,
// k2 at 1m, k3 at 2m; payments (right) one a minute from 0 to 70m for
// other keys, among them k2's at 3m (a pair), k3's at 40m (too late by
// the bounds [0, 30m]: k3 is unpaid) and, written after the 50m line, k1's
// at 5m. When that line is read the watermark is at 50m: the payment is
// 45 minutes behind it, with no allowed lateness, so the reader judges it
// late (k1's order may have been cleaned up since 30m). It goes to the late
// file, marked "judged_by":"reader", and k1 is reported unpaid, where a
// batch run pairs them.
func TestE2EWatermarkLag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const min = 60000
	orders := fmt.Sprintf("{\"id\":\"k1\",\"t\":0}\n{\"id\":\"k2\",\"t\":%d}\n{\"id\":\"k3\",\"t\":%d}\n", 1*min, 2*min)
	var payments strings.Builder
	for m := 0; m <= 70; m++ {
		key := fmt.Sprintf("other-%02d", m)
		switch m {
		case 3:
			key = "k2"
		case 40:
			key = "k3"
		}
		fmt.Fprintf(&payments, "{\"id\":%q,\"t\":%d}\n", key, m*min)
		if m == 50 {
			fmt.Fprintf(&payments, "{\"id\":\"k1\",\"t\":%d,\"note\":\"written 45 minutes late\"}\n", 5*min)
		}
	}
	for name, text := range map[string]string{"orders.jsonl": orders, "payments.jsonl": payments.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"interval", "--left", "orders.jsonl", "--right", "payments.jsonl", "--key", "id", "--time", "t",
		"--lower", "0", "--upper", "30m", "--type", "left", "--emit", "final"}

	r := mustRun(t, dir, append(args, "--watermark-lag", "0", "--late", "late.jsonl")...)
	checkGolden(t, "watermark_lag.jsonl", lines(r.stdout))
	checkGolden(t, "watermark_lag.late.jsonl", lines(r.file(t, "late.jsonl")))
	if c := counters(t, r.stderr); c["right_late_out"] != 1 {
		t.Errorf("summary: right_late_out %d, want 1", c["right_late_out"])
	}

	// A window join replayed the same way drops k1's payment: its window
	// [0, 10m) had closed when it came. (Beam drops late elements of a
	// window silently; only the interval join reports them.)
	r = mustRun(t, dir, "window", "--left", "orders.jsonl", "--right", "payments.jsonl", "--key", "id", "--time", "t",
		"--size", "10m", "--type", "left", "--watermark-lag", "0")
	checkGolden(t, "watermark_lag.window.jsonl", lines(r.stdout))

	// Read whole, in batch, the same files pair k1 with its payment.
	r = mustRun(t, dir, args...)
	if !slices.ContainsFunc(lines(r.stdout), func(l string) bool {
		return strings.HasPrefix(l, `{"kind":"pair","key":"k1"`)
	}) {
		t.Errorf("batch run: no pair for k1:\n%s", r.stdout)
	}
}

// TestE2EUsage checks the help texts and that every usage error exits with
// status 2 and one line naming the flag, and a pipeline failure with 1.
func TestE2EUsage(t *testing.T) {
	t.Parallel()
	in := []string{"--left", abs(t, "e2e/left.jsonl"), "--right", abs(t, "e2e/right.jsonl"), "--key", "id", "--time", "t"}
	interval := func(extra ...string) []string {
		return append(append([]string{"interval"}, in...), extra...)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // a part of it
		stderr string // the whole of it, for errors
	}{
		{"help", []string{"--help"}, 0, "beamjoin interval --left FILE --right FILE --lower DUR --upper DUR [flags]", ""},
		{"help_subcommand", []string{"interval", "--help"}, 0, "--watermark-lag DUR", ""},
		{"help_topic", []string{"help", "window"}, 0, "--gap DUR", ""},
		{"help_lists_runner_flags", []string{"cogroup", "-h"}, 0, "--environment_type", ""},
		{"help_beam", []string{"help", "beam"}, 0, "--temp_location", ""},
		{"no_subcommand", nil, 2, "", "beamjoin: no subcommand: give interval, window, cogroup, asof or multi (run 'beamjoin help')\n"},
		{"unknown_subcommand", []string{"join"}, 2, "", "beamjoin: unknown subcommand \"join\": give interval, window, cogroup, asof or multi (run 'beamjoin help')\n"},
		{"lower_above_upper", interval("--lower", "10m", "--upper", "5m"), 2, "",
			"beamjoin: --lower 10m --upper 5m: lower bound 10m0s is greater than upper bound 5m0s (a right element joins a left one iff lower <= ts(right) - ts(left) <= upper; e.g. --lower 0 --upper 15m)\n"},
		{"empty_interval", interval("--lower", "0", "--upper", "0", "--upper-exclusive"), 2, "",
			"beamjoin: --lower 0 --upper 0 --upper-exclusive: bounds [0s, 0s) match nothing: the interval is empty once its exclusive ends are removed (a right element joins a left one iff lower <= ts(right) - ts(left) <= upper; e.g. --lower 0 --upper 15m)\n"},
		{"missing_bounds", interval("--upper", "5m"), 2, "",
			"beamjoin: --lower and --upper are required: a right element joins a left one iff lower <= ts(right) - ts(left) <= upper (e.g. --lower 0 --upper 15m)\n"},
		{"sub_millisecond", interval("--lower", "0", "--upper", "1.5ms"), 2, "", "beamjoin: --lower 0 --upper 1.5ms: bounds [0s, 1.5ms] must be whole milliseconds, the precision of event time (a right element joins a left one iff lower <= ts(right) - ts(left) <= upper; e.g. --lower 0 --upper 15m)\n"},
		{"bad_duration", interval("--lower", "soon", "--upper", "5m"), 2, "",
			"beamjoin: --lower soon: not a Go duration (e.g. 15m, -5m, 1500ms, 0)\n"},
		{"bad_type", interval("--lower", "0", "--upper", "5m", "--type", "outer"), 2, "", "beamjoin: --type outer: unknown join type \"outer\" (want inner, left, right or full)\n"},
		{"bad_emit", interval("--lower", "0", "--upper", "5m", "--emit", "later"), 2, "", "beamjoin: --emit later: unknown emission mode \"later\" (want immediate, final or retract)\n"},
		{"negative_lateness", interval("--lower", "0", "--upper", "5m", "--allowed-lateness", "-1s"), 2, "", "beamjoin: --allowed-lateness -1s: allowed lateness -1s is negative (e.g. --allowed-lateness 1m)\n"},
		{"negative_lag", interval("--lower", "0", "--upper", "5m", "--watermark-lag", "-1s"), 2, "", "beamjoin: --watermark-lag -1s: must be a non-negative whole number of milliseconds\n"},
		{"idle_after_for_files", interval("--lower", "0", "--upper", "5m", "--idle-after", "30s"), 2, "",
			"beamjoin: --idle-after 30s: only a Pub/Sub input goes idle; files are read to their end\n"},
		{"zero_idle_after", []string{"interval", "--left", "pubsub:projects/p/subscriptions/a", "--right", "pubsub:projects/p/subscriptions/b",
			"--key", "k", "--time", "t", "--lower", "0", "--upper", "5m", "--out", "pubsub:projects/p/topics/o", "--idle-after", "0"}, 2, "",
			"beamjoin: --idle-after 0 is not positive\n"},
		{"sub_millisecond_idle_after", []string{"interval", "--left", "pubsub:projects/p/subscriptions/a", "--right", "pubsub:projects/p/subscriptions/b",
			"--key", "k", "--time", "t", "--lower", "0", "--upper", "5m", "--out", "pubsub:projects/p/topics/o", "--idle-after", "1500us"}, 2, "",
			"beamjoin: --idle-after 1500us: want a positive whole number of milliseconds\n"},
		{"max_skew_for_files", interval("--lower", "0", "--upper", "5m", "--max-skew", "1h"), 2, "",
			"beamjoin: --max-skew 1h: only a replay or a Pub/Sub input has a watermark for it to guard; files read whole move event time only at their end\n"},
		{"zero_max_skew", interval("--lower", "0", "--upper", "5m", "--watermark-lag", "1m", "--max-skew", "0"), 2, "",
			"beamjoin: --max-skew 0 is not positive\n"},
		{"on_interrupt_on_prism", []string{"interval", "--left", "pubsub:projects/p/subscriptions/a", "--right", "pubsub:projects/p/subscriptions/b",
			"--key", "k", "--time", "t", "--lower", "0", "--upper", "5m", "--out", "pubsub:projects/p/topics/o", "--on-interrupt", "cancel"}, 2, "",
			"beamjoin: --on-interrupt cancel: only a Pub/Sub join on Dataflow (--runner=dataflow, without --async) waits for its job; on Prism in process Ctrl-C stops the job, and on other runners it stops only the command\n"},
		{"bad_on_interrupt", interval("--lower", "0", "--upper", "5m", "--on-interrupt", "stop"), 2, "",
			"beamjoin: --on-interrupt stop: want detach, cancel or drain\n"},
		{"negative_speed", []string{"publish", "--topic", "projects/p/topics/t", "--time", "ts", "--speed", "-1", "x.jsonl"}, 2, "",
			"beamjoin: --speed -1: want a positive factor (e.g. 60: a minute of event time a second), or 0 for no pacing\n"},
		{"unknown_flag", interval("--lower", "0", "--upper", "5m", "--bogus"), 2, "",
			"beamjoin: interval: unknown flag --bogus (run 'beamjoin interval --help')\n"},
		{"flag_of_another_subcommand", []string{"window", "--lower", "0"}, 2, "",
			"beamjoin: window: unknown flag --lower (run 'beamjoin window --help')\n"},
		{"flag_without_value", interval("--lower", "0", "--upper"), 2, "",
			"beamjoin: interval: --upper needs a value (run 'beamjoin interval --help')\n"},
		{"no_key", []string{"interval", "--left", "a", "--right", "b", "--time", "t", "--lower", "0", "--upper", "5m"}, 2, "",
			"beamjoin: no key field for the left side: give --key FIELD (both sides) or --left-key FIELD\n"},
		{"bad_key_path", []string{"interval", "--left", "a", "--right", "b", "--key", "user.", "--time", "t", "--lower", "0", "--upper", "5m"}, 2, "",
			"beamjoin: --key user.: the key field path \"user.\" has an empty step\n"},
		{"no_right_time", []string{"interval", "--left", "a", "--right", "b", "--key", "k", "--left-time", "t", "--lower", "0", "--upper", "5m"}, 2, "",
			"beamjoin: no time field for the right side: give --time FIELD (both sides) or --right-time FIELD\n"},
		{"no_inputs", []string{"cogroup", "--size", "1h"}, 2, "",
			"beamjoin: --left and --right are required: the two JSON-lines inputs (e.g. --left orders.jsonl --right 'payments-*.jsonl')\n"},
		{"gap_and_size", append(append([]string{"window"}, in...), "--size", "1h", "--gap", "5m"), 2, "",
			"beamjoin: --gap 5m gives session windows, which take no --size or --slide: give either --gap or --size [--slide]\n"},
		{"no_size", append([]string{"window"}, in...), 2, "",
			"beamjoin: --size is required: fixed windows of --size (sliding with --slide), or session windows with --gap instead (e.g. --size 1h)\n"},
		{"slide_over_size", append(append([]string{"cogroup"}, in...), "--size", "1m", "--slide", "2m"), 2, "",
			"beamjoin: --size 1m --slide 2m: the period 2m0s is greater than the size 1m0s: an element between two windows would be in none (e.g. --size 1h, or --size 1h --slide 10m)\n"},
		{"zero_gap", append(append([]string{"window"}, in...), "--gap", "0"), 2, "", "beamjoin: --gap 0: a window gap must be positive\n"},
		{"negative_gap", append(append([]string{"window"}, in...), "--gap", "-1m"), 2, "",
			"beamjoin: --gap -1m: the gap -1m0s is not positive (e.g. --gap 30m)\n"},
		{"sub_millisecond_size", append(append([]string{"cogroup"}, in...), "--size", "1500us"), 2, "",
			"beamjoin: --size 1500us: the size 1.5ms is finer than a millisecond, the precision of event time (e.g. --size 1h, or --size 1h --slide 10m)\n"},
		{"direct_runner", interval("--lower", "0", "--upper", "5m", "--runner", "direct"), 2, "",
			"beamjoin: --runner direct: the Go SDK's direct runner has no state or timers; use prism (the default), which runs in process\n"},
		{"unknown_runner", interval("--lower", "0", "--upper", "5m", "--runner", "storm"), 2, "",
			"beamjoin: --runner storm: unknown runner; want prism (the default), flink, spark, dataflow or universal\n"},
		{"no_such_file", []string{"interval", "--left", "nothere.jsonl", "--right", "b", "--key", "k", "--time", "t", "--lower", "0", "--upper", "5m"}, 2, "",
			"beamjoin: --left nothere.jsonl: matches no file\n"},
		{"directory_as_input", []string{"interval", "--left", abs(t, "e2e"), "--right", abs(t, "e2e/right.jsonl"), "--key", "k", "--time", "t", "--lower", "0", "--upper", "5m"}, 2, "",
			"beamjoin: --left " + abs(t, "e2e") + ": is a directory; give its files, e.g. '" + abs(t, "e2e") + "/*.jsonl'\n"},
		{"out_under_a_file", interval("--lower", "0", "--upper", "5m", "--out", abs(t, "e2e/left.jsonl")+"/out.jsonl"), 2, "",
			"beamjoin: --out " + abs(t, "e2e/left.jsonl") + "/out.jsonl: " + abs(t, "e2e/left.jsonl") + " is a file, not a directory\n"},
		{"late_in_a_missing_directory", interval("--lower", "0", "--upper", "5m", "--late", "/nonexistent/late.jsonl"), 2, "",
			"beamjoin: --late /nonexistent/late.jsonl: the directory /nonexistent does not exist\n"},
		{"stdout_with_remote_workers", interval("--lower", "0", "--upper", "5m", "--runner", "flink"), 2, "",
			"beamjoin: --out -: the standard output and error of workers that do not run in this process are lost; give a file they can write, such as gs://bucket/out.jsonl, or run them here (--environment_type=LOOPBACK)\n"},
		{"stderr_with_worker_processes", interval("--lower", "0", "--upper", "5m", "--out", "/dev/null", "--dead-letter", "/dev/stderr", "--environment_type", "PROCESS"), 2, "",
			"beamjoin: --dead-letter /dev/stderr: the standard output and error of workers that do not run in this process are lost; give a file they can write, such as gs://bucket/out.jsonl, or run them here (--environment_type=LOOPBACK)\n"},
		{"progress_zero", interval("--lower", "0", "--upper", "5m", "--progress", "0"), 2, "",
			"beamjoin: --progress 0: give a positive duration (e.g. --progress 30s), or --quiet for no progress\n"},
		{"unexpected_argument", interval("--lower", "0", "--upper", "5m", "extra.jsonl"), 2, "",
			"beamjoin: interval: unexpected argument \"extra.jsonl\": inputs are given with --left and --right\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, "", tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit status %d, want %d; stderr:\n%s", r.code, tc.code, r.stderr)
			}
			if !strings.Contains(r.stdout, tc.stdout) {
				t.Errorf("standard output does not contain %q:\n%s", tc.stdout, r.stdout)
			}
			if tc.code != 0 && r.stderr != tc.stderr {
				t.Errorf("standard error:\n got %q\nwant %q", r.stderr, tc.stderr)
			}
		})
	}

	// A pipeline that fails while it runs exits with status 1 and says
	// why in its last line, the cause without Beam's plan of the stage.
	// /proc/self/mem opens (the checks before the run pass) but cannot be
	// read from its start.
	t.Run("pipeline_failure", func(t *testing.T) {
		t.Parallel()
		if _, err := os.Stat("/proc/self/mem"); err != nil {
			t.Skip("no /proc/self/mem: ", err)
		}
		r := run(t, "", "interval", "--left", "/proc/self/mem", "--right", abs(t, "e2e/right.jsonl"), "--key", "id", "--time", "t", "--lower", "0", "--upper", "5m")
		ls := strings.Split(strings.TrimSpace(r.stderr), "\n")
		want := "beamjoin: pipeline failed: /proc/self/mem:1: read /proc/self/mem: input/output error (--log-level debug shows the whole error)"
		if r.code != 1 || ls[len(ls)-1] != want {
			t.Fatalf("exit status %d, want 1; last line of standard error:\n%s\nwant\n%s", r.code, ls[len(ls)-1], want)
		}
		if len(ls) > 12 {
			t.Errorf("standard error has %d lines, want at most 12 (a line per log message):\n%s", len(ls), r.stderr)
		}
	})
}

// TestE2EWorkerProcess runs the command with Prism starting a separate
// process as its SDK worker (the PROCESS environment), through the Go SDK's
// boot loader, which starts the staged beamjoin binary again with
// --worker=true and no subcommand, as Flink and Dataflow do. The results
// must be those of the in-process run.
func TestE2EWorkerProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Go SDK's boot loader")
	}
	t.Parallel()
	bin := beamjoinBinary(t)
	dir := t.TempDir()
	args := append([]string{"interval"}, small(t, "--lower", "0", "--upper", "5m", "--type", "full", "--emit", "final",
		"--out", filepath.Join(dir, "out.jsonl"))...)
	args = append(args, processWorker(t, dir, bin)...)
	r := runRetryingConnect(t, dir, args, func() string { return "" })
	if r.code != 0 {
		t.Fatalf("beamjoin %s: exit status %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	checkGolden(t, "interval_full_final.jsonl", lines(r.file(t, "out.jsonl")))
}

// processWorker builds the Go SDK's boot loader into dir and returns the
// flags that make Prism start bin through it as a separate worker process
// (the PROCESS environment); the workers are stopped when the test ends.
func processWorker(t *testing.T, dir, bin string) []string {
	t.Helper()
	boot := filepath.Join(dir, "boot")
	if out, err := exec.Command("go", "build", "-o", boot, "github.com/apache/beam/sdks/v2/go/container").CombinedOutput(); err != nil {
		t.Fatalf("building the boot loader: %v\n%s", err, out)
	}
	t.Cleanup(func() { stopWorkers(t, dir) })
	// Prism passes the worker id as --id='ID', quotes included (it does not
	// go through a shell); the boot loader wants ID.
	shim := filepath.Join(dir, "boot.sh")
	// The boot loader fetches the worker binary (hundreds of megabytes)
	// into a temporary directory and leaves it: TMPDIR keeps it in dir.
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nTMPDIR=" + filepath.Join(dir, "tmp") + "\nexport TMPDIR\nid=$(echo \"$1\" | tr -d \"'\"); shift\nexec " + boot + " \"$id\" --semi_persist_dir=" + dir + " \"$@\"\n"
	if err := os.WriteFile(shim, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"--environment_type=PROCESS", `--environment_config={"command":"` + shim + `"}`, "--worker_binary=" + bin}
}

// runRetryingConnect runs the command with a worker in a separate process.
// Prism gives such a worker one minute, fixed, to connect
// (prism/internal/execute.go); on a busy machine the boot loader can take
// longer to fetch the staged binary and start it. That failure says nothing
// about beamjoin, so the run is tried up to three times in all. prismLog
// returns Prism's own log where it runs apart from the command, or "".
func runRetryingConnect(t *testing.T, dir string, args []string, prismLog func() string) result {
	t.Helper()
	for attempt := 1; ; attempt++ {
		r := run(t, dir, args...)
		if r.code == 0 || attempt == 3 || !strings.Contains(r.stderr+prismLog(), "didn't get control connection") {
			return r
		}
		t.Logf("attempt %d: the worker process did not connect to Prism within its fixed minute; running again", attempt)
		stopWorkers(t, dir)
	}
}

// stopWorkers ends the worker processes that the boot loader started for a
// test, found by their --semi_persist_dir, and removes their binaries: when
// Prism ends the boot loader at the end of a job, its worker child is left
// running.
func stopWorkers(t *testing.T, semiPersistDir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if !slices.Contains(args, "--semi_persist_dir="+semiPersistDir) || !slices.Contains(args, "--worker=true") {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		if proc, err := os.FindProcess(pid); err == nil {
			proc.Kill()
			proc.Wait()
		}
		if strings.HasPrefix(args[0], os.TempDir()) {
			os.RemoveAll(filepath.Dir(args[0]))
		}
		t.Logf("stopped worker process %d (%s)", pid, args[0])
	}
}
