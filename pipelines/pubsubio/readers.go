// This file holds what the readers of one Read in a worker know together:
// the largest event time read by their committed bundles, when one last
// read a message, and which handed-back messages have been read again.

package pubsubio

import "sync"

// readGroup is what the readers of one Read, in this worker, have seen.
// Readers in other workers share nothing with it: the runner gives a
// reader's restriction no way to hear of another's.
type readGroup struct {
	mu sync.Mutex
	// maxTime is the largest event time read by a bundle known to be
	// committed: a failed bundle's messages come again, and may then be
	// the earliest to come.
	maxTime int64
	readAt  int64
	// awaited are the message IDs handed back for redelivery that a reader
	// waits for: true once any reader of the group has read one again.
	awaited map[string]bool
}

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
		g = &readGroup{maxTime: noTime, awaited: map[string]bool{}}
		readGroups.m[id] = g
	}
	return g
}

// share records what a reader knows from its committed bundles: the
// largest event time read, and when a message was last read.
func (g *readGroup) share(maxTime, readAt int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.maxTime = max(g.maxTime, maxTime)
	g.readAt = max(g.readAt, readAt)
}

// read records that a reader read the messages ids at wall-clock time now.
func (g *readGroup) read(now int64, ids []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.readAt = max(g.readAt, now)
	if len(g.awaited) == 0 {
		return
	}
	for _, id := range ids {
		if _, ok := g.awaited[id]; ok {
			g.awaited[id] = true
		}
	}
}

// known returns the largest event time the group's committed bundles
// read, and when a reader last read a message.
func (g *readGroup) known() (maxTime, readAt int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.maxTime, g.readAt
}

// await makes the group watch for the messages ids being read again.
func (g *readGroup) await(ids []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, id := range ids {
		if _, ok := g.awaited[id]; !ok {
			g.awaited[id] = false
		}
	}
}

// settle reports whether a reader has read the awaited message id again
// since it was handed back, and stops watching for it when one has or when
// given up is true. A message the group does not know (its worker started
// after the hand-back) is watched for from now on.
func (g *readGroup) settle(id string, givenUp bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	again, ok := g.awaited[id]
	switch {
	case again || givenUp:
		delete(g.awaited, id)
	case !ok:
		g.awaited[id] = false
	}
	return again
}

// follow brings a reader's estimator up to what the group knows at
// wall-clock time now: the largest event time read, when a message was
// last read, and which awaited messages are settled, then moves its
// watermark.
func (e *clockEstimator) follow(g *readGroup, now int64) {
	e.learn(g.known())
	kept := e.Awaited[:0]
	for _, a := range e.Awaited {
		if !g.settle(a.ID, now-a.Since >= redeliveryWait.Milliseconds()) && now-a.Since < redeliveryWait.Milliseconds() {
			kept = append(kept, a)
		}
	}
	e.Awaited = kept
	if len(e.Awaited) == 0 {
		e.Awaited = nil
	}
	e.update(now)
}
