package join

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	gocmp "github.com/google/go-cmp/cmp"
)

// TestGatherFn checks the bounded path's gathering: a bundle's values leave
// it grouped by key, one group per key when they fit in Hold, in more when
// they do not, each value exactly once with its side and event time, each
// group at the event time of its earliest value; a key Go cannot compare
// leaves with its value at once.
func TestGatherFn(t *testing.T) {
	type group struct {
		Key    string
		Values []timed
	}
	run := func(f *gatherFn, keyOf func(i int) beam.X, n int) (groups []group, beforeEnd int) {
		emit := func(et beam.EventTime, k beam.X, ts []timed) {
			low := ts[0].Time
			for _, v := range ts {
				low = min(low, v.Time)
			}
			if et.Milliseconds() != low {
				t.Errorf("a group of key %v at %d, want its earliest value's time %d", k, et.Milliseconds(), low)
			}
			name := fmt.Sprint(k)
			if b, ok := k.([]byte); ok {
				name = string(b)
			}
			groups = append(groups, group{name, slices.Clone(ts)})
		}
		f.StartBundle(emit)
		for i := range n {
			f.ProcessElement(beam.EventTime(1000+(i*37)%100), keyOf(i), encoded{Side: uint8(i % 2), Value: []byte{byte(i)}}, emit)
		}
		beforeEnd = len(groups)
		f.FinishBundle(emit)
		return groups, beforeEnd
	}
	// values returns what the groups hold by key, in the order handed on.
	values := func(groups []group) map[string][]timed {
		m := map[string][]timed{}
		for _, g := range groups {
			m[g.Key] = append(m[g.Key], g.Values...)
		}
		return m
	}
	want := map[string][]timed{}
	for i := range 100 {
		k := fmt.Sprint("k", i%10)
		want[k] = append(want[k], timed{Side: uint8(i % 2), Time: int64(1000 + (i*37)%100), Value: []byte{byte(i)}})
	}
	stringKey := func(i int) beam.X { return fmt.Sprint("k", i%10) }

	// Everything fits: one group per key, handed on when the bundle ends.
	groups, beforeEnd := run(&gatherFn{Hold: 1 << 20}, stringKey, 100)
	if beforeEnd != 0 || len(groups) != 10 {
		t.Errorf("Hold 1 MiB: %d groups before the bundle's end and %d in all, want 0 and 10", beforeEnd, len(groups))
	}
	if diff := gocmp.Diff(want, values(groups)); diff != "" {
		t.Errorf("Hold 1 MiB: values by key (-want +got):\n%s", diff)
	}

	// A value takes 41 bytes here: 10 of them fill a hold of 400 bytes, so
	// the groups leave every 10 values, 10 times, one key each time.
	groups, beforeEnd = run(&gatherFn{Hold: 400}, stringKey, 100)
	if beforeEnd != 100 || len(groups) != 100 {
		t.Errorf("Hold 400: %d groups before the bundle's end and %d in all, want 100 and 100", beforeEnd, len(groups))
	}
	if diff := gocmp.Diff(want, values(groups)); diff != "" {
		t.Errorf("Hold 400: values by key (-want +got):\n%s", diff)
	}

	// A []byte key cannot be a map key: each value leaves alone, at once.
	groups, beforeEnd = run(&gatherFn{Hold: 1 << 20}, func(i int) beam.X { return []byte(fmt.Sprint("k", i%10)) }, 100)
	if beforeEnd != 100 || len(groups) != 100 {
		t.Errorf("[]byte keys: %d groups before the bundle's end and %d in all, want 100 and 100", beforeEnd, len(groups))
	}
	if diff := gocmp.Diff(want, values(groups)); diff != "" {
		t.Errorf("[]byte keys: values by key (-want +got):\n%s", diff)
	}
}
