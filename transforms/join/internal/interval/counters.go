package interval

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
)

// Namespace is the Beam metrics namespace of every beamjoin counter.
const Namespace = "beamjoin"

// counters are the interval join's metrics; see Interval for their
// meaning. Those every engine counts alike are package raw's.
var counters = struct {
	raw.Counters
	buffered          beam.Counter
	keysWithState     beam.Counter
	cacheHits         beam.Counter
	cacheMisses       beam.Counter
	leftDuplicate     beam.Counter
	notBuffered       beam.Counter
	bufferedPerKey    beam.Distribution
	boundedGroupBytes beam.Distribution
	hotKeys           beam.Counter
	hotMillis         beam.Distribution
}{
	Counters:          raw.Count,
	buffered:          beam.NewCounter(raw.Namespace, "buffered"),
	keysWithState:     beam.NewCounter(raw.Namespace, "keys_with_state"),
	cacheHits:         beam.NewCounter(raw.Namespace, "cache_hits"),
	cacheMisses:       beam.NewCounter(raw.Namespace, "cache_misses"),
	leftDuplicate:     beam.NewCounter(raw.Namespace, "left_duplicate"),
	notBuffered:       beam.NewCounter(raw.Namespace, "right_not_buffered"),
	bufferedPerKey:    beam.NewDistribution(raw.Namespace, "buffered_per_key"),
	boundedGroupBytes: beam.NewDistribution(raw.Namespace, "bounded_group_bytes"),
	hotKeys:           beam.NewCounter(raw.Namespace, "hot_keys"),
	hotMillis:         beam.NewDistribution(raw.Namespace, "hot_key_split_ms"),
}
