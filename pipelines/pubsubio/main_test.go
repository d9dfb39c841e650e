package pubsubio_test

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

// TestMain runs every pipeline in the package's tests on Prism, in process,
// with Prism's dynamic bundle splitting off, as the join tests do
// (apache/beam#35771).
func TestMain(m *testing.M) {
	*jobopts.Experiments = "prism_disable_sdf_split"
	ptest.MainWithDefault(m, "prism")
}
