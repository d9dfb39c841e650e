package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/beamjoin/beamjoin/internal/flinkrun"
)

// TestMain runs the tests, then removes the command that beamjoinBinary
// built (about 270 MB), which would otherwise stay in the temporary
// directory after every run.
func TestMain(m *testing.M) {
	code := m.Run()
	flinkrun.StopShared()
	if binary != "" {
		os.RemoveAll(filepath.Dir(binary))
	}
	os.Exit(code)
}
