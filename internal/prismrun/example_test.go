package prismrun_test

import (
	"context"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/beamjoin/beamjoin/internal/prismrun"
)

// Run a pipeline on Prism in process, running it again if Prism fails it
// with its progress race.
func ExampleRun() {
	p, s := beam.NewPipelineWithRoot()
	stats.Sum(s, beam.Create(s, 1, 2, 3))
	_, err := prismrun.Run(context.Background(), prismrun.Runner, p, func(attempt int, err error) {
		fmt.Println("Prism's progress race; attempt", attempt)
	})
	fmt.Println("error:", err)
	// Output: error: <nil>
}
