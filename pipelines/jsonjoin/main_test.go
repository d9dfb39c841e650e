package jsonjoin_test

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

// TestMain runs every pipeline in the package's tests on Prism, in process.
func TestMain(m *testing.M) { ptest.MainWithDefault(m, "prism") }
