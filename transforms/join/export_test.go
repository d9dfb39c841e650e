package join

import "github.com/beamjoin/beamjoin/transforms/join/internal/interval"

// HotForgetTag is the tag of the timer that forgets a hot key of the
// default layout (the split part's forgetting, which waits for its
// buckets as the split layout's first stage does).
const HotForgetTag = interval.HotForgetTag

// NoBundleCache turns an interval join's per-bundle cache of key states off.
func NoBundleCache() Option { return withoutBundleCache() }

// NoAppendCleanup makes every cleanup firing of an interval join read and
// rewrite its key's state, as before cleanup records.
func NoAppendCleanup() Option { return withoutAppendCleanup() }

// NoWriteBehind makes every append to an interval join's bag a state call
// of its own, as before write-behind.
func NoWriteBehind() Option { return withoutWriteBehind() }

// GatherBytes makes an interval join's bounded path hand on the values it
// gathers by key once they hold more than n bytes (n = 1: every value
// alone), rather than at 16 MiB.
func GatherBytes(n int) Option { return withGatherBytes(n) }

// BoundedShards makes the bounded paths spread keys over n shards rather
// than boundedShards (n = 1: every key in one).
func BoundedShards(n int) Option { return withBoundedShards(n) }
