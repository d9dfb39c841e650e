package join

// ForceIntervalLayout makes the interval joins built until restore is
// called use the bag layout (bucketed false) or the bucketed one, moving a
// key into buckets above bucketAbove elements and a bucketed key's bag
// entries into buckets above logLimit. Tests run the interval suite under
// each layout; benchmarks compare them.
func ForceIntervalLayout(bucketed bool, bucketAbove, logLimit int) (restore func()) {
	old := testLayout
	testLayout.set, testLayout.bucketed, testLayout.bucketAbove, testLayout.logLimit = true, bucketed, bucketAbove, logLimit
	return func() { testLayout = old }
}

// DisableIntervalCache turns the interval join's per-bundle cache of key
// states off for the joins built until restore is called.
func DisableIntervalCache() (restore func()) {
	old := testLayout.noCache
	testLayout.noCache = true
	return func() { testLayout.noCache = old }
}
