package join

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// Namespace is the Beam metrics namespace of every beamjoin counter.
const Namespace = "beamjoin"

// counters are the interval join's metrics; see Interval for their meaning.
var counters = func() (c struct {
	in, unmatchedOut   [2]beam.Counter
	fate               [2][match.Late + 1]beam.Counter
	pairs, retractions beam.Counter
	buffered           beam.Counter
	keysWithState      beam.Counter
	cacheHits          beam.Counter
	cacheMisses        beam.Counter
	staleFirings       beam.Counter
	leftDuplicate      beam.Counter
	notBuffered        beam.Counter
	bufferedPerKey     beam.Distribution
	boundedGroupBytes  beam.Distribution
}) {
	for _, side := range []Side{Left, Right} {
		s, name := side.core(), side.String()
		c.in[s] = beam.NewCounter(Namespace, name+"_in")
		c.unmatchedOut[s] = beam.NewCounter(Namespace, name+"_unmatched_out")
		for f := match.Matched; f <= match.Late; f++ {
			c.fate[s][f] = beam.NewCounter(Namespace, name+"_"+f.String())
		}
	}
	c.pairs = beam.NewCounter(Namespace, "pairs_out")
	c.retractions = beam.NewCounter(Namespace, "retractions_out")
	c.buffered = beam.NewCounter(Namespace, "buffered")
	c.keysWithState = beam.NewCounter(Namespace, "keys_with_state")
	c.cacheHits = beam.NewCounter(Namespace, "cache_hits")
	c.cacheMisses = beam.NewCounter(Namespace, "cache_misses")
	c.staleFirings = beam.NewCounter(Namespace, "stale_firings")
	c.leftDuplicate = beam.NewCounter(Namespace, "left_duplicate")
	c.notBuffered = beam.NewCounter(Namespace, "right_not_buffered")
	c.bufferedPerKey = beam.NewDistribution(Namespace, "buffered_per_key")
	c.boundedGroupBytes = beam.NewDistribution(Namespace, "bounded_group_bytes")
	return c
}()
