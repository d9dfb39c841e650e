// This file holds the tests of a failed bundle that the runner runs again,
// which Prism does not do (a failed bundle fails its job), so the test is
// the runner: it drives Read's DoFn bundle by bundle.

package pubsubio_test

import (
	"context"
	"fmt"
	"testing"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
	"github.com/google/go-cmp/cmp"
)

// A runner that retries a failed bundle runs it again from the same
// cursor, in the same worker, with its outputs thrown away. The retry reads
// the failed attempt's messages again at once (the attempt's lease hands
// them back, rather than holding them until it expires), and only those:
// over a committed bundle, a failed one and its retry, every message is
// emitted by a committed bundle exactly once and acknowledged exactly
// once, after its bundle was committed.
func TestReadRetriedBundleReadsFailedAttemptsMessages(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "orders")
	sub := f.subscription(t, topic, "orders-join")
	wave := func(n int, base int64) (data []string, ms []int64, lines []string) {
		for i := range n {
			d := fmt.Sprintf(`{"order_id":"o-%d-%d"}`, base, i)
			data, ms = append(data, d), append(ms, base+int64(i))
			lines = append(lines, fmt.Sprintf("%d %s", base+int64(i), d))
		}
		return data, ms, lines
	}
	r, err := pubsubio.NewReadRunner(sub)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var committed []string // the lines of the committed bundles
	commit := func(lines, ids []string) {
		committed = append(committed, lines...)
		for _, id := range ids {
			registry.see(key, id) // the pipeline has them: acknowledging them is right
		}
	}

	data, ms, first := wave(3, 1714554000000)
	firstIDs := f.publishAll(t, topic, data, ms)
	lines, ids, c1, err := r.Bundle(ctx, r.Initial())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sortedCopy(first), sortedCopy(lines)); diff != "" {
		t.Fatalf("the first bundle (-want +got):\n%s", diff)
	}
	commit(lines, ids)

	data, ms, second := wave(3, 1714554001000)
	secondIDs := f.publishAll(t, topic, data, ms)
	lines, _, _, err = r.Bundle(ctx, c1) // fails downstream: its outputs and residual are dropped
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sortedCopy(second), sortedCopy(lines)); diff != "" {
		t.Fatalf("the failing attempt of the second bundle (-want +got):\n%s", diff)
	}
	lines, ids, c2, err := r.Bundle(ctx, c1) // the retry
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sortedCopy(second), sortedCopy(lines)); diff != "" {
		t.Errorf("the retried second bundle (-want +got):\n%s", diff)
	}
	commit(lines, ids)
	lines, _, _, err = r.Bundle(ctx, c2) // commits the retry's messages
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 0 {
		t.Errorf("the bundle after the retry emitted %v, want nothing", lines)
	}
	waitFor(t, "every message acknowledged", func() bool { return f.allAcked(topic) })

	if diff := cmp.Diff(sortedCopy(append(first, second...)), sortedCopy(committed)); diff != "" {
		t.Errorf("messages of the committed bundles (-want +got):\n%s", diff)
	}
	sent, early := f.acks.counts()
	deliveries := map[string]int{}
	for _, m := range f.messagesOf(topic) {
		deliveries[m.ID] = m.Deliveries
		if m.Acks != 1 || sent[m.ID] != 1 {
			t.Errorf("message %s (%s): %d acks, %d ack IDs sent; want 1 and 1", m.ID, m.Data, m.Acks, sent[m.ID])
		}
	}
	for _, id := range firstIDs {
		if deliveries[id] != 1 {
			t.Errorf("message %s of the committed first bundle: delivered %d times, want 1", id, deliveries[id])
		}
	}
	for _, id := range secondIDs {
		if deliveries[id] != 2 {
			t.Errorf("message %s of the failed bundle: delivered %d times, want 2 (the failed attempt, the retry)", id, deliveries[id])
		}
	}
	if len(early) > 0 {
		t.Errorf("messages acknowledged before their bundle was committed: %v", early)
	}
}

// A reader that runs a failed bundle again holds its watermark at the
// earliest event time of the messages the failed attempt handed back,
// until they are read again, even while it reads later ones. Here another
// subscriber (another worker) takes them first and keeps them a while:
// the retry's pull finds nothing, the next bundle reads only later
// messages and keeps the watermark at the handed-back ones, and once the
// other subscriber lets them go the bundle that reads them releases it.
func TestReadRetryHoldsWatermarkUntilHandedBackMessagesAreReadAgain(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "orders")
	sub := f.subscription(t, topic, "orders-join")
	const t0 = 1714554000000
	wave := func(base int64) (data []string, ms []int64) {
		for i := range 3 {
			data, ms = append(data, fmt.Sprintf(`{"order_id":"o-%d-%d"}`, base, i)), append(ms, base+int64(i))
		}
		return data, ms
	}
	r, err := pubsubio.NewReadRunner(sub)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var got []string
	bundle := func(what string, cur pubsubio.Cursor, wantLines int) pubsubio.Cursor {
		t.Helper()
		lines, _, next, err := r.Bundle(ctx, cur)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(lines) != wantLines {
			t.Fatalf("%s emitted %v, want %d messages", what, lines, wantLines)
		}
		got = append(got, fmt.Sprintf("%s: watermark %d", what, next.Watermark()-t0))
		return next
	}

	data, ms := wave(t0)
	f.publishAll(t, topic, data, ms)
	c1 := bundle("first bundle", r.Initial(), 3)
	data, ms = wave(t0 + 1000)
	f.publishAll(t, topic, data, ms)
	bundle("failed attempt", c1, 3) // its outputs and residual are dropped
	f.pulls.emptyNext(1)
	c2 := bundle("retry, its pull empty", c1, 0)

	// Another subscriber takes the handed-back messages and keeps them.
	var taken []string
	waitFor(t, "the other subscriber to take the handed-back messages", func() bool {
		resp, err := f.client.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: sub, MaxMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range resp.GetReceivedMessages() {
			taken = append(taken, m.GetAckId())
		}
		return len(taken) == 3
	})
	data, ms = wave(t0 + 2000)
	f.publishAll(t, topic, data, ms)
	c3 := bundle("bundle of later messages", c2, 3)
	if err := f.client.SubscriptionAdminClient.ModifyAckDeadline(ctx,
		&pubsubpb.ModifyAckDeadlineRequest{Subscription: sub, AckIds: taken, AckDeadlineSeconds: 0}); err != nil {
		t.Fatal(err)
	}
	bundle("bundle that reads them again", c3, 3)

	want := []string{
		"first bundle: watermark 2",
		"failed attempt: watermark 1002",
		"retry, its pull empty: watermark 2",
		"bundle of later messages: watermark 1000",
		"bundle that reads them again: watermark 2002",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("watermarks after each bundle, from t0 (-want +got):\n%s", diff)
	}
}
