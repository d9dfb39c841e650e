// This file holds the lease on the messages of one bundle: their ack
// deadlines are extended until the bundle is known to be committed, then
// they are acknowledged; if it never is, they are handed back for
// redelivery.

package pubsubio

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"time"

	vkit "cloud.google.com/go/pubsub/v2/apiv1"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
)

// Lease timings. Variables, not constants, so that a test can run them on
// a faster clock.
var (
	// firstExtension is how long after its first pull a lease first extends
	// its messages' deadlines: less than the shortest ack deadline a
	// subscription can have (10 s), so a slow bundle's messages never
	// expire; most bundles are committed long before, and send none.
	firstExtension = 5 * time.Second
	// leaseDeadline is the ack deadline each extension asks for, and
	// extendEvery how often the extensions come after the first.
	leaseDeadline = 60 * time.Second
	extendEvery   = 30 * time.Second
)

const (
	// commitWithin is how long a bundle has to be known committed. Past
	// it the lease gives up, and hands its messages back.
	commitWithin = 5 * time.Minute
	// settleTimeout bounds the acknowledgement or hand-back RPCs.
	settleTimeout = time.Minute
	// ackIDsPerRequest bounds the ack IDs in one Acknowledge or
	// ModifyAckDeadline request (the service limits a request's size).
	ackIDsPerRequest = 1000
)

// outcome is how a lease ends.
type outcome int

const (
	acknowledge outcome = iota + 1 // the bundle was committed
	handBack                       // it was not, in time or at all
)

// lease keeps the messages pulled by one bundle. Its keeper goroutine,
// started by the first add, extends their ack deadlines until the lease is
// settled, then acknowledges them or hands them back (a zero ack deadline,
// so they are redelivered at once). It is settled by commit, when the
// bundle that continues the read from this one's checkpoint starts (so
// this one is committed); by a later run of the cursor its bundle ran
// (the runner retries a failed bundle from the same cursor); by the
// worker's context ending (the worker is going away: a job that failed or
// was cancelled); or by commitWithin passing (a bundle that failed while
// the worker lives on, and was not retried here).
type lease struct {
	key          string // in leases
	from         string // the ID of the cursor whose bundle pulled the messages
	subs         *vkit.SubscriptionAdminClient
	subscription string

	mu      sync.Mutex
	msgs    []leased
	started bool
	done    bool // the keeper has taken msgs; later adds are not kept

	once     sync.Once
	settled  chan struct{}
	outcome  outcome
	finished chan struct{} // closed once the keeper has settled the messages with the service
}

// leased is a message a lease keeps.
type leased struct {
	AckID string
	ID    string // message ID
	Time  int64  // event time; noTime for a dead letter, which is never late
}

// leases are the worker's unsettled leases by key, so that the bundle that
// continues a read can commit its predecessor's.
var leases = struct {
	sync.Mutex
	m    map[string]*lease
	next uint64
}{m: map[string]*lease{}}

// processID tells this process's lease keys from another's.
var processID = func() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	return hex.EncodeToString(b[:])
}()

// newLease makes the lease of a bundle that runs the cursor of ID from.
func newLease(subs *vkit.SubscriptionAdminClient, subscription, from string) *lease {
	leases.Lock()
	defer leases.Unlock()
	leases.next++
	l := &lease{key: processID + "/" + strconv.FormatUint(leases.next, 10), from: from,
		subs: subs, subscription: subscription, settled: make(chan struct{}), finished: make(chan struct{})}
	leases.m[l.key] = l
	return l
}

// ofThisProcess reports whether key is the key of a lease made in this
// process.
func ofThisProcess(key string) bool { return strings.HasPrefix(key, processID+"/") }

// newCursorID returns a new cursor ID, unique across processes.
func newCursorID() string {
	leases.Lock()
	defer leases.Unlock()
	leases.next++
	return processID + "/c" + strconv.FormatUint(leases.next, 10)
}

// handBackEarlierAttempts hands back the messages of every lease in this
// process made by an earlier run of the cursor of ID from: that run failed,
// or the runner would not run the cursor again. It returns once they are
// handed back (or settleTimeout passed), so that the bundle that runs the
// cursor again pulls them at once rather than after commitWithin, and it
// returns the messages that were not dead letters, to await: g watches
// for them from before they are handed back, so that a reader that gets
// one at once is seen to. The leases of a failed attempt in another
// process are handed back when its worker goes away, or after
// commitWithin.
func handBackEarlierAttempts(g *readGroup, from string) []leased {
	if from == "" {
		return nil
	}
	leases.Lock()
	var earlier []*lease
	for _, l := range leases.m {
		if l.from == from {
			earlier = append(earlier, l)
		}
	}
	leases.Unlock()
	var out []leased
	var ids []string
	for _, l := range earlier {
		l.mu.Lock()
		for _, m := range l.msgs {
			if m.Time != noTime {
				out = append(out, m)
				ids = append(ids, m.ID)
			}
		}
		l.mu.Unlock()
	}
	g.await(ids)
	for _, l := range earlier {
		l.settle(handBack)
		select {
		case <-l.finished:
		case <-time.After(settleTimeout):
		}
	}
	return out
}

// leaseOf returns the unsettled lease of key in this process, if any.
func leaseOf(key string) (*lease, bool) {
	leases.Lock()
	defer leases.Unlock()
	l, ok := leases.m[key]
	return l, ok
}

// add keeps newly pulled messages. ctx is the worker's context, which the
// Go harness passes to every bundle and ends when the worker stops: then
// the lease hands its messages back.
func (l *lease) add(ctx context.Context, msgs []leased) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return // settled already: these expire with the subscription's deadline
	}
	l.msgs = append(l.msgs, msgs...)
	if !l.started {
		l.started = true
		go l.keep(ctx)
	}
}

// commit says the bundle's outputs are committed, so its messages are
// acknowledged. The RPC is left to the keeper, so that the caller does not
// wait on it; a message whose acknowledgement is lost is only redelivered.
func (l *lease) commit() { l.settle(acknowledge) }

func (l *lease) settle(o outcome) {
	l.once.Do(func() {
		l.outcome = o
		close(l.settled)
	})
}

// keep extends the deadlines until the lease is settled, then settles the
// messages with the service.
func (l *lease) keep(ctx context.Context) {
	extend := time.NewTimer(firstExtension)
	defer extend.Stop()
	expire := time.NewTimer(commitWithin)
	defer expire.Stop()
	for {
		select {
		case <-l.settled:
			l.finish(ctx)
			close(l.finished)
			return
		case <-ctx.Done():
			l.settle(handBack)
		case <-expire.C:
			l.settle(handBack)
		case <-extend.C:
			l.modify(ctx, l.snapshot(), int32(leaseDeadline/time.Second))
			extend.Reset(extendEvery)
		}
	}
}

// snapshot returns the ack IDs of the messages kept.
func (l *lease) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ackIDs(l.msgs)
}

// messageIDs returns the message IDs of the messages kept.
func (l *lease) messageIDs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]string, len(l.msgs))
	for i, m := range l.msgs {
		ids[i] = m.ID
	}
	return ids
}

func ackIDs(msgs []leased) []string {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.AckID
	}
	return ids
}

// finish acknowledges or hands back every message kept.
func (l *lease) finish(ctx context.Context) {
	leases.Lock()
	delete(leases.m, l.key)
	leases.Unlock()
	l.mu.Lock()
	ids := ackIDs(l.msgs)
	l.done = true
	l.mu.Unlock()
	if l.outcome == acknowledge {
		acknowledgeAll(ctx, l.subs, l.subscription, ids)
		return
	}
	l.modify(ctx, ids, 0)
}

// acknowledgeAll acknowledges the messages of ids.
func acknowledgeAll(ctx context.Context, subs *vkit.SubscriptionAdminClient, subscription string, ids []string) {
	rpc, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	for len(ids) > 0 {
		n := min(len(ids), ackIDsPerRequest)
		err := subs.Acknowledge(rpc, &pubsubpb.AcknowledgeRequest{Subscription: subscription, AckIds: ids[:n]})
		if err != nil {
			log.Warnf(ctx, "beamjoin: pubsubio: acknowledging %d messages of %s: %v (they will be redelivered)", n, subscription, err)
		}
		ids = ids[n:]
	}
}

// modify sets the ack deadline of ids to seconds; zero hands them back.
func (l *lease) modify(ctx context.Context, ids []string, seconds int32) {
	setDeadlines(ctx, l.subs, l.subscription, ids, seconds)
}

// setDeadlines sets the ack deadline of the messages of ids to seconds;
// zero hands them back, to be redelivered at once.
func setDeadlines(ctx context.Context, subs *vkit.SubscriptionAdminClient, subscription string, ids []string, seconds int32) {
	rpc, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	for len(ids) > 0 {
		n := min(len(ids), ackIDsPerRequest)
		err := subs.ModifyAckDeadline(rpc, &pubsubpb.ModifyAckDeadlineRequest{
			Subscription: subscription, AckIds: ids[:n], AckDeadlineSeconds: seconds})
		if err != nil {
			log.Warnf(ctx, "beamjoin: pubsubio: setting the ack deadline of %d messages of %s to %ds: %v", n, subscription, seconds, err)
		}
		ids = ids[n:]
	}
}
