package prismrun

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestSetGCPercent checks that SetGCPercent sets GCPercent when GOGC is not
// set, and leaves the collector's target alone when it is.
func TestSetGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	if got := SetGCPercent(); got != GCPercent {
		t.Errorf("GOGC unset: SetGCPercent() = %d, want %d", got, GCPercent)
	}
	if now := debug.SetGCPercent(70); now != GCPercent {
		t.Errorf("GOGC unset: the target in force is %d, want %d", now, GCPercent)
	}

	// The runtime reads GOGC when the process starts; the target in force
	// (70 here) is what GOGC made it, and must stay.
	t.Setenv("GOGC", "70")
	if got := SetGCPercent(); got != 70 {
		t.Errorf("GOGC=70: SetGCPercent() = %d, want 70", got)
	}
	if now := debug.SetGCPercent(before); now != 70 {
		t.Errorf("GOGC=70: the target in force is %d, want 70 (unchanged)", now)
	}
}
