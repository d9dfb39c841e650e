package nexmark

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/internal/prismrun"
)

// TestMain runs every pipeline in the package's tests on Prism, in process
// (see package prismrun).
func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismrun.Runner) }
