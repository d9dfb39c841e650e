package windowing

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
)

// TestFirstCopy checks which copies of a sliding-windowed element the
// interval join keeps (windows of 60 s every 20 s): the one in the earliest
// window that holds its timestamp, a per-window aggregate timestamped at its
// window's end, and anything in a window that does not hold its timestamp.
func TestFirstCopy(t *testing.T) {
	f := firstCopyFn{Size: 60_000, Period: 20_000}
	iw := func(start int64) window.IntervalWindow {
		return window.IntervalWindow{Start: beam.EventTime(start), End: beam.EventTime(start + 60_000)}
	}
	tests := []struct {
		name string
		w    window.IntervalWindow
		et   beam.EventTime
		keep bool
	}{
		// An element at 50 s is in [0,60), [20,80) and [40,100).
		{"earliest_window", iw(0), 50_000, true},
		{"second_window", iw(20_000), 50_000, false},
		{"last_window", iw(40_000), 50_000, false},
		// An element at 0 s is in [-40,20), [-20,40) and [0,60).
		{"start_in_its_last_window", iw(0), 0, false},
		{"start_in_its_earliest_window", iw(-40_000), 0, true},
		// A GroupByKey's output in [20,80) is stamped 79.999 s, and [20,80)
		// is the earliest window that holds it.
		{"aggregate_at_window_end", iw(20_000), 79_999, true},
		{"outside_its_window", iw(40_000), 10_000, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := !f.laterCopy(tc.w, tc.et); got != tc.keep {
				t.Errorf("keep %v at %d = %v, want %v", tc.w, tc.et, got, tc.keep)
			}
		})
	}
}
