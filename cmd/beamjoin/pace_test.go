package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The pacer sleeps until each line's event time, scaled by the speed, has
// passed since the first line; a line earlier than the clock has reached,
// or one behind an earlier line, goes at once; speed 0 never sleeps.
func TestPacer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		speed float64
		times []int64         // event times of the lines, ms
		work  []time.Duration // wall time spent before each line, beyond the sleeps
		want  []time.Duration // the sleeps
	}{
		{"real_time", 1, []int64{1000, 1500, 1500, 4000}, nil, []time.Duration{500 * time.Millisecond, 2500 * time.Millisecond}},
		{"sixty_times", 60, []int64{0, 60000, 120000}, nil, []time.Duration{time.Second, time.Second}},
		{"out_of_order", 1, []int64{1000, 3000, 2000, 3500}, nil, []time.Duration{2 * time.Second, 500 * time.Millisecond}},
		{"slow_publishing", 2, []int64{0, 1000, 2000, 10000},
			[]time.Duration{0, 2 * time.Second, 0, 0}, []time.Duration{3 * time.Second}},
		{"no_pacing", 0, []int64{0, 100000, 200000}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := time.Unix(1714554000, 0)
			var slept []time.Duration
			p := newPacer(tc.speed, func() time.Time { return clock }, func(d time.Duration) {
				slept = append(slept, d)
				clock = clock.Add(d)
			})
			for i, ts := range tc.times {
				if i < len(tc.work) {
					clock = clock.Add(tc.work[i])
				}
				p.wait(ts)
			}
			if diff := cmp.Diff(tc.want, slept); diff != "" {
				t.Errorf("sleeps (-want +got):\n%s", diff)
			}
		})
	}
}
