package prismrun_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

// TestQuietInTests runs a pipeline, and checks that Prism's info log is on
// only under -v: a test run without it shows failures, not Prism's
// progress.
func TestQuietInTests(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	passert.Count(s, beam.Create(s, 1, 2, 3), "three", 3)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	if got := slog.Default().Enabled(context.Background(), slog.LevelInfo); got != testing.Verbose() {
		t.Errorf("info log enabled: %v; want %v (testing.Verbose())", got, testing.Verbose())
	}
}
