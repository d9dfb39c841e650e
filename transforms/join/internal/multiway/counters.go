package multiway

import (
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
)

// counters are the multi-way join's metrics: per input (numbered from 1
// in the names) the elements in and each fate; rows and retractions out,
// stale firings, and a distribution of the elements buffered per key.
type counters struct {
	in                []beam.Counter
	fate              [][match.Late + 1]beam.Counter
	rows, retractions beam.Counter
	staleFirings      beam.Counter
	bufferedPerKey    beam.Distribution
}

// CounterName is the name of input i's counter of what (in, or a fate's
// name: matched, unmatched, expired, late).
func CounterName(i int, what string) string { return fmt.Sprintf("multi_input%d_%s", i+1, what) }

func newCounters(n int) *counters {
	c := &counters{in: make([]beam.Counter, n), fate: make([][match.Late + 1]beam.Counter, n)}
	for i := range n {
		c.in[i] = beam.NewCounter(raw.Namespace, CounterName(i, "in"))
		for f := match.Matched; f <= match.Late; f++ {
			c.fate[i][f] = beam.NewCounter(raw.Namespace, CounterName(i, f.String()))
		}
	}
	c.rows = beam.NewCounter(raw.Namespace, "multi_rows_out")
	c.retractions = beam.NewCounter(raw.Namespace, "multi_retractions_out")
	c.staleFirings = beam.NewCounter(raw.Namespace, "multi_stale_firings")
	c.bufferedPerKey = beam.NewDistribution(raw.Namespace, "multi_buffered_per_key")
	return c
}
