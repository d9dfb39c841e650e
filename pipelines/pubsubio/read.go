// This file holds Read and its splittable DoFn: pull, emit, checkpoint,
// and acknowledge what a bundle emitted once the next bundle starts.

package pubsubio

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	vkit "cloud.google.com/go/pubsub/v2/apiv1"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*Message)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*DeadLetter)(nil)).Elem())
	// The runner keeps a reader's cursor and clock as opaque bytes, in
	// formats that carry their version (state.go).
	beam.RegisterCoder(reflect.TypeOf((*cursor)(nil)).Elem(), encodeCursor, decodeCursor)
	beam.RegisterCoder(reflect.TypeOf((*clock)(nil)).Elem(), encodeClock, decodeClock)
	register.DoFn6x2[context.Context, *clockEstimator, *sdf.LockRTracker, []byte,
		func(beam.EventTime, Message), func(beam.EventTime, DeadLetter), sdf.ProcessContinuation, error](&readFn{})
	register.Emitter2[beam.EventTime, Message]()
	register.Emitter2[beam.EventTime, DeadLetter]()
}

const (
	// maxBundleMessages and maxBundleTime end a bundle that keeps finding
	// messages, so that its outputs are committed and its messages
	// acknowledged: a bundle's outputs go downstream only when it ends.
	maxBundleMessages = 5000
	maxBundleTime     = 500 * time.Millisecond
	// maxPull is how many messages one pull asks for: the most the
	// service returns at once.
	maxPull = 1000
	// pullWait bounds one pull; a pull that finds nothing in that time
	// means the subscription is idle.
	pullWait = time.Second
	// idlePoll is how long an idle read waits before it pulls again, and
	// retryAfter how long after a failed pull.
	idlePoll   = 100 * time.Millisecond
	retryAfter = time.Second
)

// Read reads subscription ("projects/P/subscriptions/S") as an unbounded
// stream: PCollection<Message> of the messages that are JSON objects, each
// timestamped with its event time, and PCollection<DeadLetter> of the
// others. Every message is in exactly one of the two, and is acknowledged
// once the bundle that emitted it is committed (on Prism and Dataflow; see
// the package doc for Flink). Read panics if the subscription name or an
// option is invalid; TryRead returns the error.
//
//	orders, bad := pubsubio.Read(s, "projects/shop/subscriptions/orders",
//		pubsubio.Name("left"), pubsubio.WatermarkLag(5*time.Second))
func Read(s beam.Scope, subscription string, opts ...Option) (messages, deadLetters beam.PCollection) {
	messages, deadLetters, err := TryRead(s, subscription, opts...)
	if err != nil {
		panic(err)
	}
	return messages, deadLetters
}

// TryRead is Read returning an error instead of panicking.
func TryRead(s beam.Scope, subscription string, opts ...Option) (messages, deadLetters beam.PCollection, err error) {
	project, id, err := parseSubscription(subscription)
	if err != nil {
		return beam.PCollection{}, beam.PCollection{}, err
	}
	c, err := newConfig("Read", opts)
	if err != nil {
		return beam.PCollection{}, beam.PCollection{}, err
	}
	if c.name == "" {
		c.name = id
	}
	s = s.Scope("pubsubio.Read")
	messages, deadLetters = beam.ParDo2(s, newReadFn(subscription, project, c), beam.Impulse(s))
	if c.dedupWindow > 0 {
		messages = deduplicate(s, c.name, c.idAttribute, c.dedupWindow, messages)
	}
	return messages, deadLetters, nil
}

// readFn reads one subscription. Its restriction, a cursor, is one
// reader of the subscription and the messages the reader's previous bundle
// emitted; the initial cursor splits into Readers cursors, and a cursor
// never splits after but to checkpoint. Each call of ProcessElement is one
// bundle of one reader: it acknowledges the messages its cursor names,
// pulls until the bundle is full or the subscription is idle, emits what it
// pulled under a lease, then checkpoints (ResumeProcessingIn): the runner
// commits the bundle, learns the new watermark, and hands the residual
// cursor, naming this bundle's messages, to the next bundle.
//
// The runner runs a residual only after the bundle that made it is
// committed, outputs and residual together: so a message is acknowledged
// only after the bundle that emitted it is committed. Bundle finalization
// is meant for this, but the Go SDK v2.77 cannot run a reused DoFn
// instance's finalization callbacks (see docs/pubsub.md), so it is not
// used.
type readFn struct {
	Subscription  string
	Project       string
	Name          string
	Decoder       decoder
	LagMillis     int64
	IdleMillis    int64
	MaxSkewMillis int64
	Readers       int

	subs                               *vkit.SubscriptionAdminClient
	read, invalid, publishTime, skewed beam.Counter
}

// pulledHook, when set (by a test, before the pipeline runs), is told the
// message IDs each reader pulls.
var pulledHook func(reader int, ids []string)

func newReadFn(subscription, project string, c config) *readFn {
	return &readFn{
		Subscription:  subscription,
		Project:       project,
		Name:          c.name,
		Decoder:       decoder{TimeAttribute: c.timeAttribute, TimeField: c.timeField},
		LagMillis:     c.lag.Milliseconds(),
		IdleMillis:    c.idleAfter.Milliseconds(),
		MaxSkewMillis: c.maxSkew.Milliseconds(),
		Readers:       c.readers,
	}
}

func (f *readFn) Setup() error {
	c, err := clientFor(f.Project)
	if err != nil {
		return err
	}
	f.subs = c.SubscriptionAdminClient
	f.read = beam.NewCounter("beamjoin", f.Name+"_read")
	f.invalid = beam.NewCounter("beamjoin", f.Name+"_invalid")
	f.publishTime = beam.NewCounter("beamjoin", f.Name+"_publish_time")
	f.skewed = beam.NewCounter("beamjoin", f.Name+"_skewed")
	return nil
}

func (f *readFn) CreateInitialRestriction(_ []byte) cursor {
	id := newCursorID()
	return cursor{Subscription: f.Subscription, ID: id, Group: id}
}

// SplitRestriction makes a cursor for each reader; the runner may run them
// on different workers.
func (f *readFn) SplitRestriction(_ []byte, rest cursor) []cursor {
	if f.Readers <= 1 {
		return []cursor{rest}
	}
	out := make([]cursor, f.Readers)
	for i := range out {
		out[i] = cursor{Subscription: rest.Subscription, ID: newCursorID(), Group: rest.Group, Reader: i}
	}
	return out
}

func (f *readFn) RestrictionSize(_ []byte, _ cursor) float64 { return 1 }

func (f *readFn) CreateTracker(rest cursor) *sdf.LockRTracker {
	return sdf.NewLockRTracker(&cursorTracker{rest: rest})
}

// TruncateRestriction stops the read when the pipeline is drained; the
// messages of the last bundle are still acknowledged.
func (f *readFn) TruncateRestriction(rt *sdf.LockRTracker, _ []byte) cursor {
	rest := rt.GetRestriction().(cursor)
	rest.Subscription = ""
	return rest
}

func (f *readFn) InitialWatermarkEstimatorState(_ beam.EventTime, _ cursor, _ []byte) clock {
	return newClock()
}

func (f *readFn) CreateWatermarkEstimator(c clock) *clockEstimator {
	return &clockEstimator{c: c.copy(), mark: nowMillis(), lag: f.LagMillis, idleAfter: f.IdleMillis,
		maxSkew: f.MaxSkewMillis, silentBase: f.Readers > 1 && f.IdleMillis > 0}
}

func (f *readFn) WatermarkEstimatorState(e *clockEstimator) clock { return e.state() }

func (f *readFn) ProcessElement(ctx context.Context, we *clockEstimator, rt *sdf.LockRTracker, _ []byte,
	emit func(beam.EventTime, Message), dead func(beam.EventTime, DeadLetter)) (sdf.ProcessContinuation, error) {
	cur := rt.GetRestriction().(cursor)
	g := groupOf(cur.Group)
	f.acknowledge(ctx, g, cur)
	// A failed attempt's messages are awaited before the estimator moves:
	// it may learn of later times from its worker.
	we.await(handBackEarlierAttempts(g, cur.ID))
	// What the estimator holds is what committed bundles read: the
	// runner gives this bundle its predecessor's committed residual.
	we.start(g)
	var l *lease
	start := time.Now()
	n := 0
	for {
		if !rt.TryClaim(f.Subscription) {
			return sdf.StopProcessing(), nil // checkpointed or drained
		}
		began := nowMillis()
		msgs, err := f.pull(ctx)
		ended := nowMillis()
		switch {
		case errors.Is(err, errTransient):
			if n > 0 {
				return sdf.ResumeProcessingIn(0), nil
			}
			log.Warnf(ctx, "%v; trying again in %v", err, retryAfter)
			return sdf.ResumeProcessingIn(retryAfter), nil
		case err != nil:
			return sdf.StopProcessing(), err
		case len(msgs) == 0:
			rt.Mu.Lock()
			rt.Rt.(*cursorTracker).lastPull = 0
			rt.Mu.Unlock()
			we.pulled(began, ended, 0)
			if n > 0 {
				return sdf.ResumeProcessingIn(0), nil
			}
			return sdf.ResumeProcessingIn(idlePoll), nil
		}
		got := make([]decoded, len(msgs))
		kept := make([]leased, len(msgs))
		ids := make([]string, len(msgs))
		for i, m := range msgs {
			got[i] = f.decode(m.GetMessage())
			kept[i] = leased{AckID: m.GetAckId(), ID: m.GetMessage().GetMessageId(), Time: noTime}
			ids[i] = kept[i].ID
			if got[i].err == nil {
				kept[i].Time = got[i].time
			}
		}
		// The messages are the bundle's only if the runner has not split it
		// while it pulled: a split at fraction 0 handed the residual the
		// lease's ack IDs as they were, and the residual may run in a
		// worker that can acknowledge no others. The check and the lease's
		// new messages are under the tracker's lock, which the split takes.
		rt.Mu.Lock()
		t := rt.Rt.(*cursorTracker)
		if t.done {
			rt.Mu.Unlock()
			setDeadlines(ctx, f.subs, f.Subscription, ackIDs(kept), 0)
			return sdf.StopProcessing(), nil
		}
		if l == nil {
			l = newLease(f.subs, f.Subscription, cur.ID)
			t.lease = l
		}
		l.add(ctx, kept)
		n += len(msgs)
		t.emitted, t.lastPull = n, len(msgs)
		rt.Mu.Unlock()
		f.read.Inc(ctx, int64(len(msgs)))
		if pulledHook != nil {
			pulledHook(cur.Reader, ids)
		}
		for _, d := range got {
			f.emit(ctx, we, d, emit, dead)
		}
		we.readAgain(ids)
		we.pulled(began, ended, len(msgs))
		if n >= maxBundleMessages || time.Since(start) >= maxBundleTime {
			return sdf.ResumeProcessingIn(0), nil
		}
	}
}

// acknowledge acknowledges the messages of the bundle that made cur: that
// bundle is committed, or the runner would not have handed cur on. When
// its lease is in this process, the lease does it (and stops extending),
// and the read group learns which messages that committed bundle read; a
// lease of this process that is gone was settled already (by an earlier
// attempt of this bundle, or handed back when its commit took too long);
// otherwise the ack IDs cur carries are acknowledged here.
func (f *readFn) acknowledge(ctx context.Context, g *readGroup, cur cursor) {
	if cur.Lease == "" {
		return
	}
	if l, ok := leaseOf(cur.Lease); ok {
		g.committed(l.messageIDs())
		l.commit()
		return
	}
	if ofThisProcess(cur.Lease) {
		return
	}
	acknowledgeAll(ctx, f.subs, f.Subscription, cur.Emitted)
}

// decoded is a pulled message and what the decoder made of it.
type decoded struct {
	m         *pubsubpb.PubsubMessage
	published int64
	attrs     map[string]string
	time      int64
	fellBack  bool
	skewed    bool // its event time is too far after its publish time
	err       error
}

// decode reads a pulled message's event time, or why it is a dead letter:
// among the reasons, with MaxSkew, an event time more than MaxSkew after
// the message's publish time, which no event can have.
func (f *readFn) decode(m *pubsubpb.PubsubMessage) decoded {
	d := decoded{m: m, published: m.GetPublishTime().AsTime().UnixMilli(), attrs: m.GetAttributes()}
	if len(d.attrs) == 0 {
		d.attrs = nil
	}
	d.time, d.fellBack, d.err = f.Decoder.eventTime(m.GetData(), d.attrs, d.published)
	if d.err == nil && f.MaxSkewMillis > 0 && d.time-d.published > f.MaxSkewMillis {
		d.skewed = true
		d.err = fmt.Errorf("event time %d is more than MaxSkew (%v) after the message's publish time", d.time, time.Duration(f.MaxSkewMillis)*time.Millisecond)
	}
	return d
}

// emit sends one decoded message to the messages or the dead letters, and
// counts it.
func (f *readFn) emit(ctx context.Context, we *clockEstimator, d decoded,
	emit func(beam.EventTime, Message), dead func(beam.EventTime, DeadLetter)) {
	m := d.m
	if d.skewed {
		f.skewed.Inc(ctx, 1)
	}
	if d.err != nil {
		f.invalid.Inc(ctx, 1)
		// At the watermark or after: a dead letter is never late.
		dead(mtime.Time(max(d.published, we.watermark())), DeadLetter{
			Subscription: f.Subscription, MessageID: m.GetMessageId(), PublishTime: d.published,
			Error: d.err.Error(), Data: string(m.GetData()), Attributes: d.attrs,
		})
		return
	}
	if d.fellBack {
		f.publishTime.Inc(ctx, 1)
	}
	if we.take(d.time) {
		f.skewed.Inc(ctx, 1)
	}
	emit(mtime.Time(d.time), Message{ID: m.GetMessageId(), Data: m.GetData(), Attributes: d.attrs, PublishTime: d.published})
}

// errTransient marks a pull that failed in a way worth trying again.
var errTransient = errors.New("transient")

// noRetry turns off the library's retries of a pull: a pull is tried again
// by the next bundle, and a server that cannot be reached must not look
// like an idle subscription, whose watermark moves on.
var noRetry = gax.WithRetry(func() gax.Retryer { return nil })

// pull returns the next messages, none when the subscription is idle, or
// an error: wrapping errTransient when the pull is worth trying again.
func (f *readFn) pull(ctx context.Context) ([]*pubsubpb.ReceivedMessage, error) {
	pctx, cancel := context.WithTimeout(ctx, pullWait)
	defer cancel()
	resp, err := f.subs.Pull(pctx, &pubsubpb.PullRequest{Subscription: f.Subscription, MaxMessages: maxPull}, noRetry)
	if err == nil {
		return resp.GetReceivedMessages(), nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("beamjoin: pubsubio: pulling from %s: %w", f.Subscription, ctx.Err())
	}
	if errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded {
		return nil, nil // nothing came in pullWait
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.ResourceExhausted, codes.Aborted, codes.Internal, codes.Unknown:
		return nil, fmt.Errorf("beamjoin: pubsubio: pulling from %s: %w: %w", f.Subscription, errTransient, err)
	}
	return nil, fmt.Errorf("beamjoin: pubsubio: pulling from %s: %w", f.Subscription, err)
}

// cursor is the restriction of one reader of a read: the subscription, and
// the messages emitted by the bundle whose checkpoint made this cursor, to
// acknowledge.
type cursor struct {
	// Subscription is the subscription's name; empty once the read is
	// done (a checkpoint's primary, or a drained read).
	Subscription string
	// Group is the ID of the read's initial cursor, the same for all its
	// readers: the readers of a worker share what they know under it.
	Group string
	// Reader numbers the read's readers from 0.
	Reader int
	// ID is made afresh for each initial restriction and each residual. A
	// runner runs a cursor again only when the bundle that ran it before
	// failed (a committed bundle's cursor is done, and its residual goes
	// on), so a lease made from the same ID is a failed attempt's: the
	// bundle that runs the cursor again hands its messages back first.
	ID string
	// Lease is the key of the lease keeping the emitted messages, in the
	// process that pulled them; Emitted are their ack IDs, for a bundle
	// that runs in another process.
	Lease   string
	Emitted []string
}

// cursorTracker tracks a reader. The subscription is claimed before every
// pull; a checkpoint (a split at fraction 0) leaves the primary done and
// gives the residual the subscription and the messages of the bundle's
// lease. It never splits otherwise: a reader is one pull loop.
type cursorTracker struct {
	rest     cursor
	lease    *lease // of the bundle, once it has pulled a message
	done     bool
	emitted  int // messages the bundle emitted
	lastPull int // messages the bundle's last pull found
}

func (t *cursorTracker) TryClaim(pos any) bool {
	return !t.done && t.rest.Subscription != "" && pos.(string) == t.rest.Subscription
}

func (t *cursorTracker) GetError() error { return nil }

func (t *cursorTracker) TrySplit(fraction float64) (primary, residual any, err error) {
	if fraction > 0 || t.done || t.rest.Subscription == "" {
		return t.rest, nil, nil
	}
	res := cursor{Subscription: t.rest.Subscription, ID: newCursorID(), Group: t.rest.Group, Reader: t.rest.Reader}
	if t.lease != nil {
		res.Lease, res.Emitted = t.lease.key, t.lease.snapshot()
	}
	t.rest, t.done = cursor{}, true
	return t.rest, res, nil
}

// GetProgress reports the messages the bundle emitted as done and, as what
// remains, as many as its last pull found, none once a pull came back
// empty. A client of Pub/Sub sees no backlog: a pull that finds messages is
// the only sign that more may be waiting (docs/pubsub.md). The Go SDK
// v2.77 uses the figures only to place a split the runner asks for, which
// a reader refuses.
func (t *cursorTracker) GetProgress() (done, remaining float64) {
	return float64(t.emitted), float64(t.lastPull)
}

func (t *cursorTracker) IsDone() bool { return t.done || t.rest.Subscription == "" }

func (t *cursorTracker) GetRestriction() any { return t.rest }

func (t *cursorTracker) IsBounded() bool { return false }
