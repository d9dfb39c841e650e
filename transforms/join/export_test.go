package join

// ForceLayout makes an interval join use the bag layout (bucketed false) or
// the bucketed one, moving a key into buckets above bucketAbove elements and
// a bucketed key's bag entries into buckets above logLimit. Tests run the
// interval suite under each layout; benchmarks compare them.
func ForceLayout(bucketed bool, bucketAbove, logLimit int) Option {
	return withLayout(layout{bucketed: bucketed, bucketAbove: bucketAbove, logLimit: logLimit})
}

// NoBundleCache turns an interval join's per-bundle cache of key states off.
func NoBundleCache() Option { return withoutBundleCache() }

// NoAppendCleanup makes every cleanup firing of an interval join read and
// rewrite its key's state, as before cleanup records.
func NoAppendCleanup() Option { return withoutAppendCleanup() }

// GatherBytes makes an interval join's bounded path hand on the values it
// gathers by key once they hold more than n bytes (n = 1: every value
// alone), rather than at 16 MiB.
func GatherBytes(n int) Option { return withGatherBytes(n) }
