package pricing_test

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/internal/prismrun"
)

// TestMain runs every pipeline in the package's tests on Prism, in process,
// with Prism's dynamic bundle splitting off (prismrun.NoSplits), and again
// when Prism fails a job with its progress race (see package prismrun).
func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismrun.Runner) }
