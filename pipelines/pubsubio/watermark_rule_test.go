package pubsubio

import (
	"fmt"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/google/go-cmp/cmp"
)

// TestWatermarkRule gives a reader's estimator a sequence of events and
// checks the watermark after each: bundles starting, pulls that find a
// message or nothing, what committed bundles of the other readers of its
// worker read, messages handed back and read again, and pauses of the
// wall clock between them.
func TestWatermarkRule(t *testing.T) {
	const minute = 60_000
	none := int64(mtime.MinTimestamp)
	type step struct {
		at     int64  // wall clock, milliseconds
		bundle bool   // a bundle of the reader starts
		read   int64  // a pull ending at at finds a message of this event time (0: none)
		empty  int64  // a pull that lasted this long ends at at, empty (0: none)
		other  int64  // a committed bundle of another reader of the worker read this time (0: none)
		await  int64  // a failed run's message "m" of this event time is handed back (0: none)
		again  string // a committed bundle of a reader of the worker read the message of this ID
		own    string // this reader's bundle reads the message of this ID again
		want   int64  // the watermark after the step
	}
	for _, tc := range []struct {
		name            string
		lag, idle, skew int64
		several         bool // a reader of several (Readers)
		steps           []step
	}{
		{"nothing_read_holds", 0, 1_000, 0, false, []step{
			{at: 1, bundle: true, want: none},
			{at: 60 * minute, empty: 30 * minute, want: none},
		}},
		{"trails_the_largest_time_by_the_lag", 500, 0, 0, false, []step{
			{at: 1, read: 10_000, want: 9_500},
			{at: 2, read: 9_000, want: 9_500},
			{at: 3, read: 12_000, want: 11_500},
		}},
		{"a_pause_moves_nothing_without_idle_after", 0, 0, 0, false, []step{
			{at: 1, read: 10_000, want: 10_000},
			{at: 60 * minute, bundle: true, want: 10_000},
			{at: 60*minute + 1_000, empty: 1_000, want: 10_000},
			{at: 60*minute + 1_001, read: 9_000, want: 10_000},
		}},
		{"idle_after_counts_the_time_in_empty_pulls", 0, 1_000, 0, false, []step{
			{at: 1, read: 10_000, want: 10_000},
			{at: 601, empty: 600, want: 10_000},
			{at: 1_300, empty: 600, want: 11_200},
			{at: 5_300, empty: 4_000, want: 15_200},
			{at: 5_400, read: 10_500, want: 15_200},
		}},
		{"a_pause_of_the_readers_own_is_not_quiet", 0, 1_000, 0, false, []step{
			{at: 1, read: 10_000, want: 10_000},
			{at: 601, empty: 600, want: 10_000},
			{at: 60 * minute, bundle: true, want: 10_000},
			{at: 60*minute + 100, empty: 100, want: 10_000},
			{at: 60*minute + 400, empty: 300, want: 11_000},
		}},
		{"an_idle_reader_follows_the_others_of_its_worker", 1_000, 1_000, 0, false, []step{
			{at: 1, read: 10_000, want: 9_000},
			{at: 801, empty: 800, want: 9_000},
			{at: 802, other: 12_000, want: 9_000},
			{at: 803, bundle: true, want: 11_000},
			{at: 1_403, empty: 600, want: 11_000},
		}},
		{"a_handed_back_message_holds_until_a_committed_read", 0, 0, 0, false, []step{
			{at: 1, read: 10_000, want: 10_000},
			{at: 2, await: 11_000, want: 10_000},
			{at: 3, read: 20_000, want: 11_000},
			{at: 4, other: 30_000, want: 11_000},
			{at: 5, bundle: true, want: 11_000},
			{at: 6, again: "m", want: 11_000},
			{at: 7, bundle: true, want: 30_000},
		}},
		{"a_handed_back_message_read_again_by_the_reader", 0, 0, 0, false, []step{
			{at: 1, read: 10_000, want: 10_000},
			{at: 2, await: 11_000, want: 10_000},
			{at: 3, read: 20_000, want: 11_000},
			{at: 4, own: "m", want: 20_000},
		}},
		{"a_handed_back_message_holds_even_the_idle_advance", 0, 1_000, 0, false, []step{
			{at: 1, read: 10_000, want: 10_000},
			{at: 2, await: 10_500, want: 10_000},
			{at: 5_002, empty: 5_000, want: 10_500},
		}},
		{"a_handed_back_message_never_read_again_holds_for_the_readers_bundle_time", 0, 0, 0, false, []step{
			{at: 1, bundle: true, want: none},
			{at: 2, read: 10_000, want: 10_000},
			{at: 3, await: 10_500, want: 10_000},
			{at: 4, read: 20_000, want: 10_500},
			{at: 60 * minute, bundle: true, want: 10_500},
			{at: 60*minute + redeliveryWait.Milliseconds() - 3, empty: 1, want: 10_500},
			{at: 60*minute + redeliveryWait.Milliseconds() - 2, bundle: true, want: 10_500},
			{at: 60*minute + redeliveryWait.Milliseconds() - 1, empty: 1, want: 10_500},
			{at: 60*minute + redeliveryWait.Milliseconds(), bundle: true, want: 20_000},
		}},
		{"a_silent_reader_of_several_takes_its_first_pull_less_idle_after", 500, 1_000, 0, true, []step{
			{at: 1_000_000, bundle: true, want: none},
			{at: 1_000_600, empty: 600, want: none},
			{at: 1_001_200, empty: 600, want: 1_000_000 - 1_000 - 500 + 1_200},
			{at: 1_001_300, read: 5_000, want: 1_000_000 - 1_000 - 500 + 1_200},
		}},
		{"a_reader_of_several_that_knows_a_time_goes_by_it", 500, 1_000, 0, true, []step{
			{at: 1_000_000, other: 5_000, want: none},
			{at: 1_000_001, bundle: true, want: 4_500},
			{at: 1_001_200, empty: 1_200, want: 5_700},
		}},
		{"an_outlier_moves_nothing", 0, 0, 60_000, false, []step{
			{at: 1, read: 10_000, want: 10_000},
			{at: 2, read: 10_000_000_000, want: 10_000},
			{at: 3, read: 11_000, want: 11_000},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := int64(0)
			defer func(f func() int64) { nowMillis = f }(nowMillis)
			nowMillis = func() int64 { return now }
			g := &readGroup{maxTime: noTime, awaited: map[string]awaitedInGroup{}}
			e := &clockEstimator{c: newClock(), lag: tc.lag, idleAfter: tc.idle, maxSkew: tc.skew, silentBase: tc.several}
			var got, want []string
			for i, s := range tc.steps {
				now = s.at
				switch {
				case s.bundle:
					e.start(g)
				case s.read != 0:
					e.take(s.read)
					e.pulled(s.at, s.at, 1)
				case s.empty != 0:
					e.pulled(s.at-s.empty, s.at, 0)
				case s.other != 0:
					g.share(s.other)
				case s.await != 0:
					g.await([]string{"m"})
					e.await([]leased{{ID: "m", Time: s.await}})
				case s.again != "":
					g.committed([]string{s.again})
				case s.own != "":
					e.readAgain([]string{s.own})
					e.pulled(s.at, s.at, 1)
				}
				got = append(got, fmt.Sprintf("step %d: %d", i, e.watermark()))
				want = append(want, fmt.Sprintf("step %d: %d", i, s.want))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("watermarks (-want +got):\n%s", diff)
			}
		})
	}
}
