package pubsubio

import "time"

// SetLeaseTimings sets how long a lease waits before it first extends its
// messages' deadlines, the deadline it asks for, and how often it asks
// again, so that a test can run them against a fake on a faster clock. It
// returns a function that restores them.
func SetLeaseTimings(first, deadline, every time.Duration) (restore func()) {
	f, d, e := firstExtension, leaseDeadline, extendEvery
	firstExtension, leaseDeadline, extendEvery = first, deadline, every
	return func() { firstExtension, leaseDeadline, extendEvery = f, d, e }
}
