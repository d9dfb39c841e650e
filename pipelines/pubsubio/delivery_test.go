package pubsubio_test

import (
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
	"github.com/google/go-cmp/cmp"
)

// A bundle that fails after reading orders and payments from one
// subscription is not committed: the join downstream never gets its
// messages, and they are not acknowledged. A pipeline started after it
// reads them again, and over both runs every order pairs with its payment
// exactly once: the first run's committed pairs, then the failed bundle's.
// (Prism fails the job with the bundle; a runner that retries the bundle
// in the same job is the test of TestReadRetriedBundleReadsFailedAttemptsMessages.)
func TestReadFailedBundleIsRedeliveredAndJoinedOnce(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "events")
	sub := f.subscription(t, topic, "events-join")
	const t0 = 1714554000000
	pipeline := func(poison string) *running {
		p, s := beam.NewPipelineWithRoot()
		// Without de-duplication the failing DoFn runs in the read's
		// bundle, where a failure leaves the messages unacknowledged.
		msgs, bad := pubsubio.Read(s, sub, fused)
		if poison != "" {
			beam.ParDo0(s, &failOnFn{Key: key, Poison: poison}, msgs)
		}
		orders, payments := beam.ParDo2(s, &sideFn{}, msgs)
		joinOrdersPayments(s, key, orders, payments)
		drain(s, bad)
		return start(t, p)
	}

	run := pipeline("poison")
	f.publishAll(t, topic, []string{
		event{Side: "order", K: "a", ID: "o-a"}.json(), event{Side: "payment", K: "a", ID: "p-a"}.json(),
	}, []int64{t0, t0 + 1000})
	waitFor(t, "the first pair out and its messages acknowledged", func() bool {
		return registry.count(key) == 1 && f.allAcked(topic)
	})
	// One request: the fake hands them to one pull, so to one bundle.
	failed := f.publishAll(t, topic, []string{
		event{Side: "order", K: "b", ID: "o-b"}.json(), event{Side: "payment", K: "b", ID: "p-b"}.json(),
		event{Side: "order", K: "c", ID: "o-c-poison"}.json(), event{Side: "payment", K: "c", ID: "p-c"}.json(),
	}, []int64{t0 + 2000, t0 + 3000, t0 + 4000, t0 + 5000})
	if err := run.wait(t); err == nil || !strings.Contains(err.Error(), "test: failing on") {
		t.Fatalf("the failing pipeline ended with %v, want its DoFn's error", err)
	}
	for _, id := range failed {
		if m := f.srv.Message(id); m.Acks != 0 {
			t.Errorf("message %s (%s) of the failed bundle: %d acks, want 0", id, m.Data, m.Acks)
		}
	}

	run = pipeline("")
	waitFor(t, "the failed bundle's pairs out and its messages acknowledged", func() bool {
		return registry.count(key) >= 3 && f.allAcked(topic)
	})
	run.stop(t)
	want := []string{pairLine("a", "o-a", "p-a"), pairLine("b", "o-b", "p-b"), pairLine("c", "o-c-poison", "p-c")}
	if diff := cmp.Diff(want, registry.linesOf(key)); diff != "" {
		t.Errorf("the join's pairs and late elements over both runs (-want +got):\n%s", diff)
	}
	for _, id := range failed {
		if m := f.srv.Message(id); m.Deliveries < 2 || m.Acks != 1 {
			t.Errorf("message %s (%s) of the failed bundle: %d deliveries, %d acks; want 2 or more, 1", id, m.Data, m.Deliveries, m.Acks)
		}
	}
}

// A failure between a bundle's commit and its acknowledgement (the service
// never gets the acknowledgement of an order and a payment) loses nothing
// and duplicates nothing: the two are redelivered when their ack deadline
// expires, Read's de-duplication drops the copies, and through an interval
// join the order pairs with the payment once. A sentinel pair published
// after the copies were acknowledged comes out after they would have.
func TestReadAckLostAfterCommitLosesNothingAndJoinsOnce(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "events")
	sub := f.subscription(t, topic, "events-join") // a 10 s ack deadline
	const t0 = 1714554000000
	ids := f.publishAll(t, topic, []string{
		event{Side: "order", K: "a", ID: "o-a"}.json(), event{Side: "payment", K: "a", ID: "p-a"}.json(),
		event{Side: "order", K: "b", ID: "o-b"}.json(), event{Side: "payment", K: "b", ID: "p-b"}.json(),
	}, []int64{t0, t0 + 1000, t0 + 2000, t0 + 3000})
	f.acks.loseNextAck(ids[0], ids[1])

	p, s := beam.NewPipelineWithRoot()
	msgs, bad := pubsubio.Read(s, sub)
	orders, payments := beam.ParDo2(s, &sideFn{}, msgs)
	joinOrdersPayments(s, key, orders, payments)
	drain(s, bad)
	run := start(t, p)
	waitFor(t, "the lost acknowledgements' messages redelivered and acknowledged", func() bool {
		return len(f.acks.lostAcks()) == 2 && f.srv.Message(ids[0]).Deliveries >= 2 &&
			f.srv.Message(ids[1]).Deliveries >= 2 && f.allAcked(topic)
	})
	f.publishAll(t, topic, []string{
		event{Side: "order", K: "s", ID: "o-s"}.json(), event{Side: "payment", K: "s", ID: "p-s"}.json(),
	}, []int64{t0 + 4000, t0 + 5000})
	waitFor(t, "the sentinel pair", func() bool {
		for _, l := range registry.linesOf(key) {
			if l == pairLine("s", "o-s", "p-s") {
				return true
			}
		}
		return false
	})
	run.stop(t)
	want := []string{pairLine("a", "o-a", "p-a"), pairLine("b", "o-b", "p-b"), pairLine("s", "o-s", "p-s")}
	if diff := cmp.Diff(want, registry.linesOf(key)); diff != "" {
		t.Errorf("the join's pairs and late elements (-want +got):\n%s", diff)
	}
}
