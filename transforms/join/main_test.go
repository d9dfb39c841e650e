package join_test

import (
	"os"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/internal/flinkrun"
	"github.com/beamjoin/beamjoin/internal/prismrun"
)

// TestMain runs every pipeline in the package's tests on Prism, in process,
// with Prism's dynamic bundle splitting off (prismrun.NoSplits), and again
// when Prism fails a job with its progress race (see package prismrun). The
// TestFlink tests submit theirs to a Flink job server instead
// (flinkrun.Shared), which is stopped when the tests end.
func TestMain(m *testing.M) {
	code := ptest.MainRetWithDefault(m, prismrun.Runner)
	flinkrun.StopShared()
	os.Exit(code)
}
