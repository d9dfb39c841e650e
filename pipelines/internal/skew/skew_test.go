package skew

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTake feeds records one after another, each taken in (or not) as a
// source does, and checks what the watermark takes from each.
func TestTake(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bound  int64
		latest int64
		times  []int64
		want   []string
	}{
		{"no_bound_takes_everything", 0, 100, []int64{1e15}, []string{"1000000000000000"}},
		{"nothing_ahead_before_the_first_record", 10, None, []int64{1e15}, []string{"1000000000000000"}},
		{"within_the_bound", 10, 100, []int64{110, 90, 120}, []string{"110", "90", "120"}},
		{"one_outlier_is_not_taken", 10, 100, []int64{1e15, 105}, []string{"none (ahead)", "105"}},
		{"a_record_within_breaks_the_run", 10, 100, []int64{500, 500, 500, 500, 101, 500}, []string{
			"none (ahead)", "none (ahead)", "none (ahead)", "none (ahead)", "101", "none (ahead)"}},
		{"a_run_takes_its_earliest", 10, 100, []int64{900, 700, 800, 1000, 750, 705}, []string{
			"none (ahead)", "none (ahead)", "none (ahead)", "none (ahead)", "700 (ahead)", "705"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := State{Earliest: None}
			latest := tc.latest
			var got []string
			for _, ts := range tc.times {
				take, ahead := Take(&s, latest, ts, tc.bound)
				out := fmt.Sprint(take)
				if take == None {
					out = "none"
				} else {
					latest = max(latest, take)
				}
				if ahead {
					out += " (ahead)"
				}
				got = append(got, out)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("taken (-want +got):\n%s", diff)
			}
		})
	}
}
