package pubsubio_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
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
	msgs, bad := pubsubio.Read(s, sub, pubsubio.Readers(3))
	orders, payments := beam.ParDo2(s, &sideFn{}, msgs)
	joinOrdersPayments(s, key, orders, payments)
	drain(s, bad)
	run := start(p)
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

// With three readers, the watermark moves with the event times read
// although a reader may get no message: the readers of a worker share the
// largest time read, and no IdleAfter is given. An event-time timer at the
// end of the first messages' second fires once a message after it is
// read, whichever reader read it.
func TestReadersWatermarkMovesWithAnyReadersMessages(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "clicks")
	sub := f.subscription(t, topic, "clicks-count")
	const t0 = 1714554000000 // on a second
	var data []string
	var ms []int64
	for _, dt := range []int64{0, 100, 900, 1500} {
		data, ms = append(data, `{"click":1}`), append(ms, t0+dt)
	}
	f.publishAll(t, topic, data, ms)

	p, s := beam.NewPipelineWithRoot()
	msgs, _ := pubsubio.Read(s, sub, pubsubio.Readers(3))
	beam.ParDo0(s, &secondEndFn{Key: key, Fire: timers.InEventTime("fire")}, beam.ParDo(s, keyFn, msgs))
	run := start(p)
	waitFor(t, "the timer at the end of the first second to fire", func() bool { return registry.count(key) > 0 })
	// The second second's timer must not fire: nothing after it was read.
	time.Sleep(2 * time.Second)
	run.stop(t)
	if diff := cmp.Diff([]string{fmt.Sprintf("fired at %d", t0+1000)}, registry.linesOf(key)); diff != "" {
		t.Errorf("timers (-want +got):\n%s", diff)
	}
}
