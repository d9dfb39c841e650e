// This file holds what the readers of one Read in a worker know together:
// the largest event time read by their committed bundles, and which
// handed-back messages a committed bundle has read again.

package pubsubio

import "sync"

// readGroup is what the readers of one Read, in this worker, have seen in
// their committed bundles. Readers in other workers share nothing with
// it: the runner gives a reader's restriction no way to hear of another's.
type readGroup struct {
	mu sync.Mutex
	// maxTime is the largest event time taken in by a bundle known to be
	// committed: a failed bundle's messages come again, and may then be
	// the earliest to come.
	maxTime int64
	// awaited are the message IDs handed back for redelivery that a reader
	// waits for, by ID.
	awaited map[string]awaitedInGroup
}

// awaitedInGroup is a handed-back message as the group watches for it.
type awaitedInGroup struct {
	readAgain bool  // a committed bundle of the group read it again
	since     int64 // wall clock at which the group began to watch for it
}

// forgetAwaitedAfter is how long the group keeps a message it watches
// for (by the wall clock): past it, the reader that awaited it has given
// up (redeliveryWait of its bundle time), or was moved to another worker,
// or read it again itself; the entry only takes memory.
const forgetAwaitedAfter = 4 * redeliveryWait

// readGroups are the worker's read groups by the ID of their Read's
// initial cursor, which every reader's cursor carries.
var readGroups = struct {
	sync.Mutex
	m map[string]*readGroup
}{m: map[string]*readGroup{}}

// groupOf returns the read group of id.
func groupOf(id string) *readGroup {
	readGroups.Lock()
	defer readGroups.Unlock()
	g, ok := readGroups.m[id]
	if !ok {
		g = &readGroup{maxTime: noTime, awaited: map[string]awaitedInGroup{}}
		readGroups.m[id] = g
	}
	return g
}

// share records the largest event time a reader's committed bundles took
// in, and returns the largest the group knows.
func (g *readGroup) share(maxTime int64) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.maxTime = max(g.maxTime, maxTime)
	return g.maxTime
}

// committed records that a bundle of a reader of the group, which read the
// messages ids, is committed: a handed-back message among them that a
// reader awaits has been read again for good.
func (g *readGroup) committed(ids []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, id := range ids {
		if a, ok := g.awaited[id]; ok {
			a.readAgain = true
			g.awaited[id] = a
		}
	}
}

// await makes the group watch for the messages ids being read again.
func (g *readGroup) await(ids []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := nowMillis()
	for id, a := range g.awaited {
		if now-a.since > forgetAwaitedAfter.Milliseconds() {
			delete(g.awaited, id)
		}
	}
	for _, id := range ids {
		if _, ok := g.awaited[id]; !ok {
			g.awaited[id] = awaitedInGroup{since: now}
		}
	}
}

// settle reports whether a committed bundle has read the awaited message
// id again since it was handed back, and stops watching for it when one
// has or when givenUp is true. A message the group does not know (its
// worker started after the hand-back) is watched for from now on.
func (g *readGroup) settle(id string, givenUp bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	a, ok := g.awaited[id]
	switch {
	case a.readAgain || givenUp:
		delete(g.awaited, id)
	case !ok:
		g.awaited[id] = awaitedInGroup{since: nowMillis()}
	}
	return a.readAgain
}
