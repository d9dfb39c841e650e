package pubsubio_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
	"github.com/google/go-cmp/cmp"
)

// Three readers share one subscription. Orders and payments published in
// waves while they run are pulled by two or more of them, and every
// message is delivered once and acknowledged once; through an interval
// join every order pairs with its payment exactly once, whichever readers
// pulled the two.
func TestReadersShareSubscriptionExactlyOnce(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "events")
	sub := f.subscription(t, topic, "events-join")
	var mu sync.Mutex
	pulledBy := map[int]int{}
	defer pubsubio.SetPulledHook(func(reader int, ids []string) {
		mu.Lock()
		defer mu.Unlock()
		pulledBy[reader] += len(ids)
	})()

	p, s := beam.NewPipelineWithRoot()
	msgs, bad := pubsubio.Read(s, sub, pubsubio.Readers(3), pubsubio.IdleAfter(time.Hour))
	orders, payments := beam.ParDo2(s, &sideFn{}, msgs)
	joinOrdersPayments(s, key, orders, payments)
	drain(s, bad)
	run := start(t, p)
	const t0 = 1714554000000
	var want []string
	for wave := range 6 {
		var data []string
		var ms []int64
		for i := range 10 {
			k := fmt.Sprintf("k-%d-%d", wave, i)
			data = append(data, event{Side: "order", K: k, ID: "o-" + k}.json(), event{Side: "payment", K: k, ID: "p-" + k}.json())
			ts := int64(t0 + 1000*wave + 10*i)
			ms = append(ms, ts, ts+500)
			want = append(want, pairLine(k, "o-"+k, "p-"+k))
		}
		f.publishAll(t, topic, data, ms)
		waitFor(t, fmt.Sprintf("wave %d joined and acknowledged", wave), func() bool {
			return registry.count(key) >= len(want) && f.allAcked(topic)
		})
	}
	run.stop(t)
	if diff := cmp.Diff(sortedCopy(want), registry.linesOf(key)); diff != "" {
		t.Errorf("the join's pairs and late elements (-want +got):\n%s", diff)
	}
	sent, _ := f.acks.counts()
	for _, m := range f.messagesOf(topic) {
		if m.Deliveries != 1 || m.Acks != 1 || sent[m.ID] != 1 {
			t.Errorf("message %s (%s): %d deliveries, %d acks, %d ack IDs sent; want 1 of each", m.ID, m.Data, m.Deliveries, m.Acks, sent[m.ID])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(pulledBy) < 2 {
		t.Errorf("messages pulled by reader: %v; want two readers or more to have pulled", pulledBy)
	}
	t.Logf("messages pulled by reader: %v", pulledBy)
}

// Two readers of one read in one worker, run bundle by bundle as a
// runner runs them. The first reads every message, the second none; once
// the first's bundle is committed, the second's watermark follows the
// first's rather than holding the read where it started. Then the second
// reads the next message, and the first, which finds none, follows it.
// (On Prism this cannot be seen: it keeps one watermark estimate per
// stage, the last bundle's.)
func TestReadersOfAWorkerShareTheWatermark(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "clicks")
	sub := f.subscription(t, topic, "clicks-count")
	const t0 = 1714554000000
	r, err := pubsubio.NewReadRunner(sub, pubsubio.Readers(2), pubsubio.IdleAfter(time.Hour), pubsubio.WatermarkLag(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var got []string
	bundle := func(what string, cur pubsubio.Cursor) pubsubio.Cursor {
		t.Helper()
		lines, _, next, err := r.Bundle(ctx, cur)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		wm := "none"
		if w := next.Watermark(); w > t0-60_000 {
			wm = fmt.Sprint(w - t0)
		}
		got = append(got, fmt.Sprintf("%s: %d messages, watermark %s", what, len(lines), wm))
		return next
	}
	readers := r.Split(r.Initial())
	if len(readers) != 2 {
		t.Fatalf("the read split into %d readers, want 2", len(readers))
	}
	f.publishAll(t, topic, []string{`{"click":1}`, `{"click":2}`}, []int64{t0 + 5000, t0 + 6000})
	a := bundle("reader 0", readers[0])
	b := bundle("reader 1, reader 0's bundle not yet committed", readers[1])
	a = bundle("reader 0, its bundle committed", a)
	b = bundle("reader 1", b)
	f.publishAll(t, topic, []string{`{"click":3}`}, []int64{t0 + 9000})
	b = bundle("reader 1 reads", b)
	bundle("reader 1, its bundle committed", b)
	bundle("reader 0", a)
	want := []string{
		"reader 0: 2 messages, watermark 5000",
		"reader 1, reader 0's bundle not yet committed: 0 messages, watermark none",
		"reader 0, its bundle committed: 0 messages, watermark 5000",
		"reader 1: 0 messages, watermark 5000",
		"reader 1 reads: 1 messages, watermark 8000",
		"reader 1, its bundle committed: 0 messages, watermark 8000",
		"reader 0: 0 messages, watermark 8000",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bundles and the watermarks they reported, from t0 (-want +got):\n%s", diff)
	}
}
