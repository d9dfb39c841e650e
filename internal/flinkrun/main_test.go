package flinkrun_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/internal/flinkrun"
	"github.com/beamjoin/beamjoin/internal/prismrun"
)

func init() {
	register.Function1x2(pairWithOne)
	register.Function2x1(formatCount)
}

func pairWithOne(w string) (string, int) { return w, 1 }

func formatCount(w string, n int) string { return fmt.Sprintf("%s %d", w, n) }

// TestMain makes the test binary a Beam worker too (ptest.Main calls
// beam.Init), which the PROCESS environment starts again.
func TestMain(m *testing.M) {
	code := ptest.MainRetWithDefault(m, prismrun.Runner)
	flinkrun.StopShared()
	os.Exit(code)
}
