package jsonjoin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/google/go-cmp/cmp"
)

// readSummary reads an accounting file of the given lines.
func readSummary(t *testing.T, op jsonjoin.Op, lines ...string) jsonjoin.Summary {
	t.Helper()
	path := filepath.Join(t.TempDir(), "accounting.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := jsonjoin.ReadSummary(context.Background(), jsonjoin.Config{Op: op, Accounting: path})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func TestReadSummary(t *testing.T) {
	sum := readSummary(t, jsonjoin.Interval,
		`{"count":"left_in","n":3}`,
		`{"count":"left_invalid","reason":"bad JSON","n":1,"example":{"File":"o.jsonl","Line":4,"Error":"bad JSON: unexpected end of JSON input","Raw":"{"}}`,
		`{"count":"right_invalid","reason":"blank line","n":1,"example":{"File":"p.jsonl","Line":9,"Error":"blank line","Raw":""}}`,
		`{"count":"right_invalid","reason":"field \"ts\": missing","n":2,"example":{"File":"p.jsonl","Line":2,"Error":"field \"ts\": missing","Raw":"{}"}}`,
		`{"count":"pairs_out","n":2}`,
		`{"count":"right_fates_counted","n":1}`,
	)
	want := jsonjoin.Summary{Op: jsonjoin.Interval, Ran: true, FromRecords: true, Fates: true,
		Counts: map[string]int64{"left_in": 3, "left_invalid": 1, "left_read": 4, "right_invalid": 3, "right_read": 3, "pairs_out": 2},
		DeadLetters: []jsonjoin.DeadLetters{
			{Side: "left", Reason: "bad JSON", N: 1, Example: jsonl.DeadLetter{File: "o.jsonl", Line: 4, Error: "bad JSON: unexpected end of JSON input", Raw: "{"}},
			{Side: "right", Reason: `field "ts": missing`, N: 2, Example: jsonl.DeadLetter{File: "p.jsonl", Line: 2, Error: `field "ts": missing`, Raw: "{}"}},
			{Side: "right", Reason: "blank line", N: 1, Example: jsonl.DeadLetter{File: "p.jsonl", Line: 9, Error: "blank line"}},
		},
	}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("ReadSummary (-want +got):\n%s", diff)
	}
	if got, want := sum.InvalidReasons(), `left: 1 bad JSON; right: 2 field "ts": missing, 1 blank line`; got != want {
		t.Errorf("InvalidReasons() = %q, want %q", got, want)
	}
}

func TestSummaryString(t *testing.T) {
	counts := map[string]int64{
		"left_read": 4, "left_in": 3, "left_matched": 2, "left_unmatched": 1, "left_invalid": 1,
		"right_read": 2, "right_in": 2, "right_matched": 1, "right_late": 1, "pairs_out": 2, "left_unmatched_out": 1, "right_late_out": 1,
	}
	for _, tc := range []struct {
		name string
		s    jsonjoin.Summary
		want string
	}{
		{"interval_with_fates", jsonjoin.Summary{Op: jsonjoin.Interval, Fates: true, Counts: counts},
			"side   read  in  matched  unmatched  expired  evicted  late  invalid\n" +
				"left   4     3   2        1          0        0        0     1\n" +
				"right  2     2   1        0          0        0        1     0\n" +
				"pairs_out 2  retractions_out 0  left_unmatched_out 1  right_unmatched_out 0  left_late_out 0  right_late_out 1\n"},
		{"interval_without_fates", jsonjoin.Summary{Op: jsonjoin.Interval, Counts: counts},
			"side   read  in  invalid\n" +
				"left   4     3   1\n" +
				"right  2     2   0\n" +
				"pairs_out 2  retractions_out 0  left_unmatched_out 1  right_unmatched_out 0  left_late_out 0  right_late_out 1\n"},
		{"cogroup", jsonjoin.Summary{Op: jsonjoin.CoGroup, Counts: map[string]int64{"left_read": 1, "left_in": 1, "groups_out": 1}},
			"side   read  in  invalid\n" +
				"left   1     1   0\n" +
				"right  0     0   0\n" +
				"groups_out 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.String(); got != tc.want {
				t.Errorf("String() =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestSummaryCheck checks the accounting check on fabricated summaries:
// every input accounted for passes; a record with no fate, a late fate with
// no late record, and an input of which no line is valid fail, each saying
// what is missing.
func TestSummaryCheck(t *testing.T) {
	fates := func(edit func(map[string]int64)) jsonjoin.Summary {
		n := map[string]int64{"left_read": 4, "left_invalid": 1, "left_in": 3, "left_matched": 2, "left_late": 1, "left_late_out": 1,
			"right_read": 1, "right_in": 1, "right_expired": 1}
		if edit != nil {
			edit(n)
		}
		return jsonjoin.Summary{Op: jsonjoin.Interval, Ran: true, FromRecords: true, Fates: true, Counts: n}
	}
	noValid := jsonjoin.Summary{Op: jsonjoin.Window, Ran: true, FromRecords: true,
		Counts: map[string]int64{"left_read": 43, "left_invalid": 43, "right_read": 5, "right_in": 5},
		DeadLetters: []jsonjoin.DeadLetters{
			{Side: "left", Reason: `field "ad_id": missing`, N: 40, Example: jsonl.DeadLetter{File: "clicks.jsonl", Line: 1, Raw: `{"ad":{"id":"ad-2"},"ts":1}`}},
			{Side: "left", Reason: "bad JSON", N: 3, Example: jsonl.DeadLetter{File: "clicks.jsonl", Line: 7, Raw: `{`}},
		}}
	for _, tc := range []struct {
		name string
		s    jsonjoin.Summary
		want string
	}{
		{"accounted_for", fates(nil), ""},
		{"without_fates_nothing_to_check", jsonjoin.Summary{Op: jsonjoin.Interval, Counts: map[string]int64{"left_read": 2, "left_in": 2}}, ""},
		{"an_element_without_fate", fates(func(n map[string]int64) { n["right_in"] = 2; n["right_read"] = 2 }),
			"beamjoin: right: 2 records went to the join and 1 came out of it (matched 0, unmatched 0, expired 1, evicted 0, late 0): 1 are unaccounted for"},
		{"a_late_element_not_written", fates(func(n map[string]int64) { n["left_late_out"] = 0 }),
			"beamjoin: left: the join judged 1 elements late and wrote 0 late records"},
		{"no_valid_line", noValid,
			`beamjoin: no line of the left input is valid: field "ad_id": missing in 40 of 43 lines, e.g. clicks.jsonl:1: {"ad":{"id":"ad-2"},"ts":1}; bad JSON in 3`},
		{"an_empty_input_is_not_an_error", jsonjoin.Summary{Op: jsonjoin.CoGroup, Counts: map[string]int64{"right_read": 1, "right_in": 1}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Check()
			if got := errText(err); got != tc.want {
				t.Errorf("Check() =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
