package pubsubio_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
	"github.com/google/go-cmp/cmp"
)

// A message whose acknowledgement is lost after its bundle was committed
// comes back with the same message ID, and Read drops it: each message
// comes out once. The redelivery is made at once (the lost ack ID's
// deadline set to zero, as its expiry would after the ack deadline). A
// sentinel published after the redelivery was acknowledged comes out after
// it: by then the redelivered message has been handed on by Read.
func TestReadDropsMessageRedeliveredAfterCommit(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "orders")
	sub := f.subscription(t, topic, "orders-join")
	var want []string
	var ids []string
	for i := range 3 {
		data := fmt.Sprintf(`{"order_id":"o-%d"}`, i)
		ids = append(ids, f.publish(topic, data, at(strconv.Itoa(1714554000000+i))))
		want = append(want, fmt.Sprintf("%d %s", 1714554000000+i, data))
	}
	f.acks.loseNextAck(ids[1])

	p, s := beam.NewPipelineWithRoot()
	msgs, bad := pubsubio.Read(s, sub)
	beam.ParDo0(s, &collectFn{Key: key}, msgs)
	drain(s, bad)
	run := start(t, p)
	waitFor(t, "every message out and the second's acknowledgement lost", func() bool {
		return registry.count(key) == len(want) && len(f.acks.lostAcks()) == 1
	})
	lost := f.acks.lostAcks()
	if err := f.client.SubscriptionAdminClient.ModifyAckDeadline(context.Background(),
		&pubsubpb.ModifyAckDeadlineRequest{Subscription: sub, AckIds: lost, AckDeadlineSeconds: 0}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the redelivered message acknowledged", func() bool {
		return f.srv.Message(ids[1]).Deliveries >= 2 && f.allAcked(topic)
	})
	sentinel := `{"order_id":"sentinel"}`
	f.publish(topic, sentinel, at("1714554001000"))
	want = append(want, "1714554001000 "+sentinel)
	waitFor(t, "the sentinel out", func() bool { return registry.count(key) >= len(want) })
	run.stop(t)
	if diff := cmp.Diff(want, registry.linesOf(key)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

// With IDAttribute, messages published twice with the same ID attribute
// (a publisher that sent a record again) come out once; a message without
// the attribute is de-duplicated by its message ID, and so kept.
func TestReadDeduplicatesByIDAttribute(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "orders")
	sub := f.subscription(t, topic, "orders-join")
	withID := func(ms, id string) map[string]string {
		return map[string]string{pubsubio.DefaultTimeAttribute: ms, pubsubio.DefaultIDAttribute: id}
	}
	f.publish(topic, `{"order_id":"o-1"}`, withID("1714554000000", "orders.jsonl:1"))
	f.publish(topic, `{"order_id":"o-2"}`, withID("1714554000001", "orders.jsonl:2"))
	f.publish(topic, `{"order_id":"o-1"}`, withID("1714554000000", "orders.jsonl:1"))
	f.publish(topic, `{"order_id":"o-3"}`, at("1714554000002"))
	f.publish(topic, `{"order_id":"o-3"}`, at("1714554000002"))
	f.publish(topic, `{"order_id":"o-2"}`, withID("1714554000001", "orders.jsonl:2"))
	want := []string{
		`1714554000000 {"order_id":"o-1"}`,
		`1714554000001 {"order_id":"o-2"}`,
		`1714554000002 {"order_id":"o-3"}`,
		`1714554000002 {"order_id":"o-3"}`,
	}

	p, s := beam.NewPipelineWithRoot()
	msgs, bad := pubsubio.Read(s, sub, pubsubio.IDAttribute(pubsubio.DefaultIDAttribute))
	beam.ParDo0(s, &collectFn{Key: key}, msgs)
	drain(s, bad)
	run := start(t, p)
	waitFor(t, "every message acknowledged and the distinct ones out", func() bool {
		return f.allAcked(topic) && registry.count(key) >= len(want)
	})
	sentinel := `{"order_id":"sentinel"}`
	f.publish(topic, sentinel, withID("1714554001000", "sentinel"))
	want = append(want, "1714554001000 "+sentinel)
	waitFor(t, "the sentinel out", func() bool { return registry.count(key) >= len(want) })
	run.stop(t)
	if diff := cmp.Diff(want, registry.linesOf(key)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}
