package jsonjoin_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

// TestMultiConfigValidate checks that Validate refuses a multi-way join
// that cannot be built, naming the Config field at fault, and the
// multi-way join's settings in a join of two.
func TestMultiConfigValidate(t *testing.T) {
	in := jsonjoin.Input{Pattern: "x.jsonl", Fields: jsonl.Fields{Key: "k", Time: "t"}}
	base := jsonjoin.Config{Op: jsonjoin.Multi, Inputs: []jsonjoin.Input{in, in, in},
		Bounds: []jsonjoin.Bounds{{0, time.Minute}, {-time.Minute, time.Hour}}}
	with := func(f func(*jsonjoin.Config)) jsonjoin.Config {
		c := base
		c.Inputs, c.Bounds = append([]jsonjoin.Input(nil), base.Inputs...), append([]jsonjoin.Bounds(nil), base.Bounds...)
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name  string
		c     jsonjoin.Config
		field string // the FieldError's, "" for another error
		err   string // "" for none
	}{
		{"three_inputs", base, "", ""},
		{"optional_and_final", with(func(c *jsonjoin.Config) { c.Optional, c.Emit = []int{2, 3}, join.EmitFinal }), "", ""},
		{"allowed_lateness", with(func(c *jsonjoin.Config) { c.AllowedLateness = time.Minute }), "", ""},
		{"two_inputs", with(func(c *jsonjoin.Config) { c.Inputs, c.Bounds = c.Inputs[:2], c.Bounds[:1] }), "Inputs",
			"beamjoin: 2 inputs: a multi-way join takes three or more, the anchor first (two are an interval join's)"},
		{"no_inputs", jsonjoin.Config{Op: jsonjoin.Multi}, "Inputs",
			"beamjoin: 0 inputs: a multi-way join takes three or more, the anchor first (two are an interval join's)"},
		{"too_many_inputs", with(func(c *jsonjoin.Config) {
			for len(c.Inputs) <= join.MaxMultiInputs {
				c.Inputs, c.Bounds = append(c.Inputs, in), append(c.Bounds, jsonjoin.Bounds{Upper: time.Minute})
			}
		}), "Inputs", "beamjoin: 65 inputs: a multi-way join takes at most 64"},
		{"one_bounds_too_few", with(func(c *jsonjoin.Config) { c.Bounds = c.Bounds[:1] }), "Bounds",
			"beamjoin: 1 bounds for 3 inputs: give one for each input after the first, in input order"},
		{"one_bounds_too_many", with(func(c *jsonjoin.Config) { c.Bounds = append(c.Bounds, jsonjoin.Bounds{}) }), "Bounds",
			"beamjoin: 3 bounds for 3 inputs: give one for each input after the first, in input order"},
		{"optional_anchor", with(func(c *jsonjoin.Config) { c.Optional = []int{1} }), "Optional[0]",
			"beamjoin: optional input 1: give the number of an input after the first, 2 to 3 (input 1 is the anchor)"},
		{"optional_out_of_range", with(func(c *jsonjoin.Config) { c.Optional = []int{3, 4} }), "Optional[1]",
			"beamjoin: optional input 4: give the number of an input after the first, 2 to 3 (input 1 is the anchor)"},
		{"bounds_that_match_nothing", with(func(c *jsonjoin.Config) { c.Bounds[1] = jsonjoin.Bounds{Lower: time.Hour, Upper: time.Minute} }), "Bounds[1]",
			"beamjoin: bounds 1h0m0s,1m0s of input 3: lower bound 1h0m0s is greater than upper bound 1m0s"},
		{"window_size", with(func(c *jsonjoin.Config) { c.Size = time.Hour }), "Size", "beamjoin: multi takes no window"},
		{"session_gap", with(func(c *jsonjoin.Config) { c.Gap = time.Minute }), "Gap", "beamjoin: multi takes no window"},
		{"interval_bounds", with(func(c *jsonjoin.Config) { c.Upper = time.Minute }), "Lower",
			"beamjoin: multi takes no interval bounds: each input after the first has its own, in Bounds"},
		{"join_type", with(func(c *jsonjoin.Config) { c.Type = join.LeftOuter }), "Type",
			"beamjoin: multi takes no join type: Optional names the inputs a row may lack"},
		{"buffer_cap", with(func(c *jsonjoin.Config) { c.MaxBufferedPerKey = 3 }), "MaxBufferedPerKey", "beamjoin: multi takes no buffer cap"},
		{"left_and_right", with(func(c *jsonjoin.Config) { c.Left = in }), "Left",
			"beamjoin: multi takes its inputs as Inputs, the anchor first, not as Left and Right"},
		{"max_age", with(func(c *jsonjoin.Config) { c.LimitAge = true }), "MaxAge", "beamjoin: multi takes no max age: it is the as-of join's"},
		{"no_key_of_input_2", with(func(c *jsonjoin.Config) { c.Inputs[1].Fields.Key = "" }), "Inputs[1].Fields.Key", ""},
		{"no_input_3", with(func(c *jsonjoin.Config) { c.Inputs[2].Pattern = "" }), "Inputs[2].Pattern", "beamjoin: no input 3"},
		{"bad_subscription", with(func(c *jsonjoin.Config) { c.Inputs[1].Pattern = jsonjoin.PubSub + "projects/p/topics/t" }), "Inputs[1].Pattern",
			`beamjoin: input 2 "pubsub:projects/p/topics/t": a Pub/Sub input is a subscription, pubsub:projects/PROJECT/subscriptions/SUBSCRIPTION`},
		{"inputs_of_an_interval_join", jsonjoin.Config{Op: jsonjoin.Interval, Left: in, Right: in, Upper: time.Minute, Inputs: []jsonjoin.Input{in}}, "Inputs",
			"beamjoin: interval takes two inputs, Left and Right: Inputs are the multi-way join's"},
		{"optional_of_a_window_join", jsonjoin.Config{Op: jsonjoin.Window, Left: in, Right: in, Size: time.Hour, Optional: []int{2}}, "Optional",
			"beamjoin: window takes no optional inputs: they are the multi-way join's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			var fe *jsonjoin.FieldError
			switch {
			case tc.field == "" && tc.err == "":
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
			case !errors.As(err, &fe) || fe.Field != tc.field:
				t.Fatalf("Validate() = %v, want a FieldError of %s", err, tc.field)
			case tc.err != "" && err.Error() != tc.err:
				t.Fatalf("Validate() =\n%s\nwant\n%s", err, tc.err)
			}
		})
	}
}

// TestRunMulti runs a three-way join of small inputs, the second input
// required within [0, 2 s] of the anchor and the third optional within
// [-1 s, 1 s], on files read whole (the bounded path) and replayed with a
// 1-minute watermark lag (state and timers), and checks that both write
// exactly the rows worked out by hand: a1 with each of b1 and b2 (b2
// at the upper bound), each with c1; a4 with b4 (at the lower bound) and
// no c (c3 is 2 s after it). a2 and a3 have no b in their bounds, so no
// row, and c2, in a2's bounds, is in none. The summary counts every line
// per input, the dead letter of the anchor, each element's fate and the
// rows.
func TestRunMulti(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.jsonl": `{"id":"a1","k":"u1","t":1000}` + "\n" + `{"id":"a3","k":"u2","t":1000}` + "\n" + `{"id":"a4","k":"u3","t":2000}` + "\n" +
			`{"id":"a2","k":"u1","t":5000}` + "\n" + `{"id":"a5","k":"u1"}` + "\n",
		"b.jsonl": `{"id":"b1","k":"u1","t":1500}` + "\n" + `{"id":"b4","k":"u3","t":2000}` + "\n" + `{"id":"b2","k":"u1","t":3000}` + "\n" +
			`{"id":"b3","k":"u2","t":4000}` + "\n",
		"c.jsonl": `{"id":"c1","k":"u1","t":500}` + "\n" + `{"id":"c3","k":"u3","t":4000}` + "\n" + `{"id":"c2","k":"u1","t":6000}` + "\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// In the order the command writes them: sorted.
	want := []string{
		`{"key":"u1","records":[{"id":"a1","k":"u1","t":1000},{"id":"b1","k":"u1","t":1500},{"id":"c1","k":"u1","t":500}],"times":[1000,1500,500]}`,
		`{"key":"u1","records":[{"id":"a1","k":"u1","t":1000},{"id":"b2","k":"u1","t":3000},{"id":"c1","k":"u1","t":500}],"times":[1000,3000,500]}`,
		`{"key":"u3","records":[{"id":"a4","k":"u3","t":2000},{"id":"b4","k":"u3","t":2000},null],"times":[2000,2000,null]}`,
	}
	wantCounts := map[string]int64{
		"input1_read": 5, "input1_in": 4, "input1_invalid": 1, "input1_matched": 2, "input1_expired": 2,
		"input2_read": 4, "input2_in": 4, "input2_matched": 3, "input2_expired": 1,
		"input3_read": 3, "input3_in": 3, "input3_matched": 1, "input3_expired": 2,
		"rows_out": 3,
	}
	wantSummary := "" +
		"side    read  in  matched  unmatched  expired  late  invalid\n" +
		"input1  5     4   2        0          2        0     1\n" +
		"input2  4     4   3        0          1        0     0\n" +
		"input3  3     3   1        0          2        0     0\n" +
		"rows_out 3  retractions_out 0\n"
	fields := jsonl.Fields{Key: "k", Time: "t"}
	for _, path := range []string{"bounded", "replay"} {
		t.Run(path, func(t *testing.T) {
			out := t.TempDir()
			var mu sync.Mutex
			var last jsonjoin.Progress
			c := jsonjoin.Config{
				Op: jsonjoin.Multi,
				Inputs: []jsonjoin.Input{
					{Pattern: filepath.Join(dir, "a.jsonl"), Fields: fields},
					{Pattern: filepath.Join(dir, "b.jsonl"), Fields: fields},
					{Pattern: filepath.Join(dir, "c.jsonl"), Fields: fields},
				},
				Bounds:        []jsonjoin.Bounds{{0, 2 * time.Second}, {-time.Second, time.Second}},
				Optional:      []int{3},
				Emit:          join.EmitFinal,
				Out:           filepath.Join(out, "rows.jsonl"),
				Late:          filepath.Join(out, "late.jsonl"),
				DeadLetter:    filepath.Join(out, "dead.jsonl"),
				Progress:      func(p jsonjoin.Progress) { mu.Lock(); last = p; mu.Unlock() },
				ProgressEvery: 10 * time.Millisecond,
			}
			if path == "replay" {
				c.Replay, c.WatermarkLag = true, time.Minute
			}
			sum, err := jsonjoin.Run(context.Background(), c, jsonjoin.DefaultRunner)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, readLines(t, c.Out)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			wantDead := []string{`{"file":"` + filepath.Join(dir, "a.jsonl") + `","line":5,"error":"field \"t\": missing","raw":"{\"id\":\"a5\",\"k\":\"u1\"}"}`}
			if diff := cmp.Diff(wantDead, readLines(t, c.DeadLetter)); diff != "" {
				t.Errorf("dead letters (-want +got):\n%s", diff)
			}
			if late, err := os.ReadFile(c.Late); err != nil || len(late) > 0 {
				t.Errorf("late elements: %q, %v; want an empty file", late, err)
			}
			if diff := cmp.Diff(wantCounts, sum.Counts); diff != "" {
				t.Errorf("summary counts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"input1", "input2", "input3"}, sum.Sides); diff != "" || !sum.Fates || !sum.FromRecords {
				t.Errorf("summary sides (-want +got):\n%s; fates %v, from records %v, want both", diff, sum.Fates, sum.FromRecords)
			}
			if diff := cmp.Diff(wantSummary, sum.String()); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if err := sum.Check(); err != nil {
				t.Errorf("Check() = %v", err)
			}
			if got, want := sum.InvalidReasons(), `input1: 1 field "t": missing`; got != want {
				t.Errorf("InvalidReasons() = %q, want %q", got, want)
			}
			mu.Lock()
			defer mu.Unlock()
			if got, want := last.String(), "; 3 records out"; !last.Done || !strings.HasSuffix(got, want) ||
				!strings.Contains(got, ": input1 5 lines read (event time 1970-01-01T00:00:05Z), input2 4 lines read (event time 1970-01-01T00:00:04Z), input3 3 lines read (event time 1970-01-01T00:00:06Z)") {
				t.Errorf("last progress report: %s (done %v)", got, last.Done)
			}
		})
	}
}

// TestMultiSummaryCheck checks that Check accounts for the elements of
// each input of a multi-way join: one fate each, and a late record for
// each late fate.
func TestMultiSummaryCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "accounting.jsonl")
	lines := []string{
		`{"count":"input1_in","n":3}`, `{"count":"input1_matched","n":2}`, `{"count":"input1_fates_counted","n":1}`,
		`{"count":"input2_in","n":2}`, `{"count":"input2_matched","n":1}`, `{"count":"input2_late","n":1}`, `{"count":"input2_fates_counted","n":1}`,
		`{"count":"input3_invalid","reason":"bad JSON","n":1,"example":{"File":"c.jsonl","Line":1,"Error":"bad JSON: unexpected end of JSON input","Raw":"{"}}`,
		`{"count":"input3_fates_counted","n":1}`,
		`{"count":"rows_out","n":2}`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := jsonjoin.Input{Pattern: "x.jsonl", Fields: jsonl.Fields{Key: "k", Time: "t"}}
	sum, err := jsonjoin.ReadSummary(context.Background(), jsonjoin.Config{Op: jsonjoin.Multi, Inputs: []jsonjoin.Input{in, in, in}, Accounting: path})
	if err != nil {
		t.Fatal(err)
	}
	want := "beamjoin: input1: 3 records went to the join and 2 came out of it (matched 2, unmatched 0, expired 0, late 0): 1 are unaccounted for\n" +
		"beamjoin: input2: the join judged 1 elements late and wrote 0 late records\n" +
		"beamjoin: no line of input3 is valid: bad JSON in 1 of 1 lines, e.g. c.jsonl:1: {"
	if got := errText(sum.Check()); got != want {
		t.Errorf("Check() =\n%s\nwant\n%s", got, want)
	}
}
