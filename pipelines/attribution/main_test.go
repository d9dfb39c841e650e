package attribution_test

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

// TestMain runs every pipeline in the package's tests on Prism, in process,
// with Prism's dynamic bundle splitting off: splitting a bundle that holds
// timers loses or repeats timer work in Prism v2.77 (apache/beam#35771).
func TestMain(m *testing.M) {
	*jobopts.Experiments = "prism_disable_sdf_split"
	ptest.MainWithDefault(m, "prism")
}
