package pubsubio

import (
	"fmt"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/google/go-cmp/cmp"
)

// TestWatermarkRule gives a reader's estimator a sequence of events and
// checks the watermark after each: what the reader read, what the other
// readers of its worker read, messages handed back and read again, and
// pauses of the wall clock.
func TestWatermarkRule(t *testing.T) {
	const minute = 60_000
	none := int64(mtime.MinTimestamp)
	type step struct {
		at    int64  // wall-clock milliseconds
		read  int64  // this reader reads a message of this event time (0: none)
		other int64  // another reader of the worker reads one, and its bundle commits (0: none)
		await int64  // a failed run's message "m" of this event time is handed back (0: none)
		again string // a reader reads the handed-back message of this ID again
		want  int64  // the watermark after the step
	}
	for _, tc := range []struct {
		name      string
		lag, idle int64
		steps     []step
	}{
		{"nothing_read_holds", 0, 0, []step{
			{at: 1, want: none},
			{at: 60 * minute, want: none},
		}},
		{"trails_the_largest_time_by_the_lag", 500, 0, []step{
			{at: 1, read: 10_000, want: 9_500},
			{at: 2, read: 9_000, want: 9_500},
			{at: 3, read: 12_000, want: 11_500},
		}},
		{"a_pause_moves_nothing_without_idle_after", 0, 0, []step{
			{at: 1, read: 10_000, want: 10_000},
			{at: 60 * minute, want: 10_000},
			{at: 60*minute + 1, read: 9_000, want: 10_000},
		}},
		{"idle_after_follows_the_clock_from_the_largest_time", 0, 1_000, []step{
			{at: 1, read: 10_000, want: 10_000},
			{at: 999, want: 10_000},
			{at: 1_001, want: 11_000},
			{at: 5_001, want: 15_000},
		}},
		{"an_idle_reader_follows_the_others_of_its_worker", 1_000, 0, []step{
			{at: 1, other: 10_000, want: 9_000},
			{at: 2, other: 12_000, want: 11_000},
		}},
		{"a_handed_back_message_holds_until_read_again", 0, 0, []step{
			{at: 1, read: 10_000, want: 10_000},
			{at: 2, await: 11_000, want: 10_000},
			{at: 3, read: 20_000, want: 11_000},
			{at: 4, other: 30_000, want: 11_000},
			{at: 5, again: "m", want: 30_000},
		}},
		{"a_handed_back_message_holds_even_the_idle_advance", 0, 1_000, []step{
			{at: 1, read: 10_000, want: 10_000},
			{at: 2, await: 10_500, want: 10_000},
			{at: 5_001, want: 10_500},
		}},
		{"a_handed_back_message_never_read_again_holds_for_redelivery_wait", 0, 0, []step{
			{at: 1, read: 10_000, want: 10_000},
			{at: 2, await: 10_500, want: 10_000},
			{at: 3, read: 20_000, want: 10_500},
			{at: 2 + redeliveryWait.Milliseconds() - 1, want: 10_500},
			{at: 2 + redeliveryWait.Milliseconds(), want: 20_000},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &readGroup{maxTime: noTime, awaited: map[string]bool{}}
			e := &clockEstimator{clock: newClock(), Lag: tc.lag, IdleAfter: tc.idle}
			var got, want []string
			for i, s := range tc.steps {
				switch {
				case s.read != 0:
					e.read(s.read, s.at)
					g.read(s.at, []string{fmt.Sprint("r", i)})
				case s.other != 0:
					g.read(s.at, []string{fmt.Sprint("o", i)})
					g.share(s.other, s.at) // its bundle committed
				case s.await != 0:
					g.await([]string{"m"})
					e.await([]awaited{{ID: "m", Time: s.await, Since: s.at}})
				case s.again != "":
					g.read(s.at, []string{s.again})
				}
				e.follow(g, s.at)
				got = append(got, fmt.Sprintf("step %d: %d", i, e.Watermark))
				want = append(want, fmt.Sprintf("step %d: %d", i, s.want))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("watermarks (-want +got):\n%s", diff)
			}
		})
	}
}
