package prismrun_test

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/internal/prismrun"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismrun.Runner) }
