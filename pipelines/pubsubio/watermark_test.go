package pubsubio_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
	"github.com/google/go-cmp/cmp"
)

// Messages that producers hold back through a pause in delivery, then
// publish, are on time: by default a subscription's watermark moves only
// with the event times it reads, so a pause of any length (here 15 s, past
// the 10 s after which an idle subscription's watermark used to follow the
// clock) makes nothing late. Orders and payments published after the
// pause, within the watermark lag of the newest time read before it, pair
// in an interval join, and the join judges none of them late.
func TestReadMessagesHeldBackThroughPauseAreNotLate(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	orders := f.topic(t, "orders")
	payments := f.topic(t, "payments")
	ordersSub := f.subscription(t, orders, "orders-join")
	paymentsSub := f.subscription(t, payments, "payments-join")
	const t0 = 1714554000000
	publish := func(topic string, e event, d time.Duration) {
		f.publish(topic, e.json(), at(strconv.FormatInt(t0+d.Milliseconds(), 10)))
	}
	// Before the pause: the order of key a, and the newest event time of
	// each side, t0+10s. With a lag of 5 s the watermark is t0+5s.
	publish(orders, event{K: "a", ID: "o-a"}, 0)
	publish(orders, event{K: "z", ID: "o-z"}, 10*time.Second)
	publish(payments, event{K: "y", ID: "p-y"}, 10*time.Second)

	p, s := beam.NewPipelineWithRoot()
	lag := pubsubio.WatermarkLag(5 * time.Second)
	o, _ := pubsubio.Read(s, ordersSub, pubsubio.Name("orders"), lag)
	pay, _ := pubsubio.Read(s, paymentsSub, pubsubio.Name("payments"), lag)
	joinOrdersPayments(s, key, beam.ParDo(s, keyBySide, o), beam.ParDo(s, keyBySide, pay))
	run := start(t, p)
	waitFor(t, "the messages before the pause read and acknowledged", func() bool {
		return f.allAcked(orders) && f.allAcked(payments)
	})
	time.Sleep(15 * time.Second)
	// After the pause: a payment of key a and an order and a payment of
	// key h, all after the watermark.
	publish(payments, event{K: "a", ID: "p-a"}, 7*time.Second)
	publish(orders, event{K: "h", ID: "o-h"}, 6*time.Second)
	publish(payments, event{K: "h", ID: "p-h"}, 8*time.Second)
	waitFor(t, "the held-back messages paired or judged late", func() bool {
		got := registry.linesOf(key)
		has := func(l string) bool { return slices.Contains(got, l) }
		return (has(pairLine("a", "o-a", "p-a")) || has(lateLine("a", "p-a"))) &&
			(has(pairLine("h", "o-h", "p-h")) || has(lateLine("h", "o-h")) || has(lateLine("h", "p-h")))
	})
	run.stop(t)
	want := []string{pairLine("a", "o-a", "p-a"), pairLine("h", "o-h", "p-h")}
	if diff := cmp.Diff(want, registry.linesOf(key)); diff != "" {
		t.Errorf("the join's pairs and late elements (-want +got):\n%s", diff)
	}
}
