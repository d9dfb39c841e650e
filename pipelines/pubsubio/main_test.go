package pubsubio_test

import (
	"os"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/internal/flinkrun"
)

// TestMain runs every pipeline in the package's tests on Prism, in process,
// with Prism's dynamic bundle splitting off, as the join tests do
// (apache/beam#35771).
// The TestFlink tests submit theirs to a Flink job server instead
// (flinkrun.Shared), which is stopped when the tests end.
func TestMain(m *testing.M) {
	*jobopts.Experiments = "prism_disable_sdf_split"
	code := ptest.MainRetWithDefault(m, "prism")
	flinkrun.StopShared()
	os.Exit(code)
}
