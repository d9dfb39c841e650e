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
	beam.RegisterType(reflect.TypeOf((*clock)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*cursor)(nil)).Elem())
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
// once the bundle that emitted it is committed. Read panics if the
// subscription name or an option is invalid; TryRead returns the error.
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
	fn := &readFn{
		Subscription: subscription,
		Project:      project,
		Name:         c.name,
		Decoder:      decoder{TimeAttribute: c.timeAttribute, TimeField: c.timeField},
		LagMillis:    c.lag.Milliseconds(),
		IdleMillis:   c.idleAfter.Milliseconds(),
	}
	messages, deadLetters = beam.ParDo2(s, fn, beam.Impulse(s))
	if c.dedupWindow > 0 {
		messages = deduplicate(s, c.name, c.idAttribute, c.dedupWindow, messages)
	}
	return messages, deadLetters, nil
}

// readFn reads one subscription. Its restriction, a cursor, is the
// subscription and the messages the previous bundle emitted; it never
// splits but to checkpoint. Each call of ProcessElement is one bundle: it
// acknowledges the messages its cursor names, pulls until the bundle is
// full or the subscription is idle, emits what it pulled under a lease,
// then checkpoints (ResumeProcessingIn): the runner commits the bundle,
// learns the new watermark, and hands the residual cursor, naming this
// bundle's messages, to the next bundle.
//
// The runner runs a residual only after the bundle that made it is
// committed, outputs and residual together: so a message is acknowledged
// only after the bundle that emitted it is committed. Bundle finalization
// is meant for this, but in the Go SDK v2.77 a DoFn instance's
// finalization callbacks run for its first bundle only (exec.Plan.Finalize
// gives the plan a new finalizer while its DoFns keep the old one), and
// Prism then logs an error for every later bundle. A residual is never
// skipped that way.
type readFn struct {
	Subscription string
	Project      string
	Name         string
	Decoder      decoder
	LagMillis    int64
	IdleMillis   int64

	subs                       *vkit.SubscriptionAdminClient
	read, invalid, publishTime beam.Counter
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
	return nil
}

func (f *readFn) CreateInitialRestriction(_ []byte) cursor {
	return cursor{Subscription: f.Subscription, ID: newCursorID()}
}

// SplitRestriction keeps the subscription whole: one reader pulls from it.
func (f *readFn) SplitRestriction(_ []byte, rest cursor) []cursor { return []cursor{rest} }

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
	return &clockEstimator{clock: c, Lag: f.LagMillis, IdleAfter: f.IdleMillis}
}

func (f *readFn) WatermarkEstimatorState(e *clockEstimator) clock { return e.clock }

func (f *readFn) ProcessElement(ctx context.Context, we *clockEstimator, rt *sdf.LockRTracker, _ []byte,
	emit func(beam.EventTime, Message), dead func(beam.EventTime, DeadLetter)) (sdf.ProcessContinuation, error) {
	cur := rt.GetRestriction().(cursor)
	f.acknowledge(ctx, cur)
	handBackEarlierAttempts(cur.ID)
	var l *lease
	start := time.Now()
	n := 0
	for {
		if !rt.TryClaim(f.Subscription) {
			return sdf.StopProcessing(), nil // checkpointed or drained
		}
		msgs, err := f.pull(ctx)
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
			if n > 0 {
				return sdf.ResumeProcessingIn(0), nil
			}
			we.idle(time.Now().UnixMilli())
			return sdf.ResumeProcessingIn(idlePoll), nil
		}
		if l == nil {
			l = newLease(f.subs, f.Subscription, cur.ID)
			rt.Mu.Lock()
			rt.Rt.(*cursorTracker).lease = l
			rt.Mu.Unlock()
		}
		ids := make([]string, len(msgs))
		for i, m := range msgs {
			ids[i] = m.GetAckId()
		}
		l.add(ctx, ids)
		f.read.Inc(ctx, int64(len(msgs)))
		now := time.Now().UnixMilli()
		for _, m := range msgs {
			f.emit(ctx, we, now, m.GetMessage(), emit, dead)
		}
		n += len(msgs)
		if n >= maxBundleMessages || time.Since(start) >= maxBundleTime {
			return sdf.ResumeProcessingIn(0), nil
		}
	}
}

// acknowledge acknowledges the messages of the bundle that made cur: that
// bundle is committed, or the runner would not have handed cur on. When
// its lease is in this process, the lease does it (and stops extending);
// a lease of this process that is gone was settled already (by an earlier
// attempt of this bundle, or handed back when its commit took too long);
// otherwise the ack IDs cur carries are acknowledged here.
func (f *readFn) acknowledge(ctx context.Context, cur cursor) {
	if cur.Lease == "" {
		return
	}
	if l, ok := leaseOf(cur.Lease); ok {
		l.commit()
		return
	}
	if ofThisProcess(cur.Lease) {
		return
	}
	acknowledgeAll(ctx, f.subs, f.Subscription, cur.Emitted)
}

// emit sends one pulled message to the messages or the dead letters.
func (f *readFn) emit(ctx context.Context, we *clockEstimator, now int64, m *pubsubpb.PubsubMessage,
	emit func(beam.EventTime, Message), dead func(beam.EventTime, DeadLetter)) {
	published := m.GetPublishTime().AsTime().UnixMilli()
	attrs := m.GetAttributes()
	if len(attrs) == 0 {
		attrs = nil
	}
	ts, fellBack, err := f.Decoder.eventTime(m.GetData(), attrs, published)
	if err != nil {
		f.invalid.Inc(ctx, 1)
		we.ReadAt = now // the subscription is not idle
		// At the watermark or after: a dead letter is never late.
		dead(mtime.Time(max(published, we.Watermark)), DeadLetter{
			Subscription: f.Subscription, MessageID: m.GetMessageId(), PublishTime: published,
			Error: err.Error(), Data: string(m.GetData()), Attributes: attrs,
		})
		return
	}
	if fellBack {
		f.publishTime.Inc(ctx, 1)
	}
	we.read(ts, now)
	emit(mtime.Time(ts), Message{ID: m.GetMessageId(), Data: m.GetData(), Attributes: attrs, PublishTime: published})
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

// cursor is the restriction of a read: the subscription, and the messages
// emitted by the bundle whose checkpoint made this cursor, to acknowledge.
type cursor struct {
	// Subscription is the subscription's name; empty once the read is
	// done (a checkpoint's primary, or a drained read).
	Subscription string
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

// cursorTracker tracks a read. The subscription is claimed before every
// pull; a checkpoint (a split at fraction 0) leaves the primary done and
// gives the residual the subscription and the messages of the bundle's
// lease. It never splits otherwise: one reader pulls from a subscription.
type cursorTracker struct {
	rest  cursor
	lease *lease // of the bundle, once it has pulled a message
	done  bool
}

func (t *cursorTracker) TryClaim(pos any) bool {
	return !t.done && t.rest.Subscription != "" && pos.(string) == t.rest.Subscription
}

func (t *cursorTracker) GetError() error { return nil }

func (t *cursorTracker) TrySplit(fraction float64) (primary, residual any, err error) {
	if fraction > 0 || t.done || t.rest.Subscription == "" {
		return t.rest, nil, nil
	}
	res := cursor{Subscription: t.rest.Subscription, ID: newCursorID()}
	if t.lease != nil {
		res.Lease, res.Emitted = t.lease.key, t.lease.snapshot()
	}
	t.rest, t.done = cursor{}, true
	return t.rest, res, nil
}

// GetProgress reports the read as all done and nothing left, so that a
// runner does not try to split it for parallelism.
func (t *cursorTracker) GetProgress() (done, remaining float64) { return 1, 0 }

func (t *cursorTracker) IsDone() bool { return t.done || t.rest.Subscription == "" }

func (t *cursorTracker) GetRestriction() any { return t.rest }

func (t *cursorTracker) IsBounded() bool { return false }
