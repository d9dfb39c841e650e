package timertag

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
)

// TestReadCleared: a firing whose event time is the output timestamp Arm
// gave its tag (the hold, or the firing time if earlier) is the runner's;
// one at event time 0, as the Go SDK fires a tag cleared in the bundle
// inline, is marked Cleared.
func TestReadCleared(t *testing.T) {
	for _, c := range []struct {
		tag     string
		et      int64
		at      int64
		cleared bool
	}{
		{"5000/9000", 5000, 9000, false},  // held at 5000
		{"5000/9000", 0, 9000, true},      // cleared, fired inline
		{"12000/9000", 9000, 9000, false}, // hold after the firing: Arm holds at the firing time
		{"12000/9000", 0, 9000, true},
		{"", 9000, 9000, false}, // holds nothing: its event time is its firing time
		{"r", 9000, 0, false},   // not a tag Tag writes
	} {
		f := Read(timers.Context{Tag: c.tag}, beam.EventTime(c.et))
		if f.Cleared != c.cleared || f.At != c.at {
			t.Errorf("Read(%q, %d) = %+v, want At %d, Cleared %v", c.tag, c.et, f, c.at, c.cleared)
		}
		// Against a timer the state sets for 9000: only a cleared tag is
		// stale; for one set later, every firing of 9000 is.
		if got := f.Stale(true, 9000); got != c.cleared && c.at == 9000 {
			t.Errorf("Read(%q, %d).Stale(true, 9000) = %v, want %v", c.tag, c.et, got, c.cleared)
		}
		if c.at == 9000 && (!f.Stale(true, 9001) || !f.Stale(false, 9000)) {
			t.Errorf("Read(%q, %d): not stale against a later timer or none", c.tag, c.et)
		}
	}
}
