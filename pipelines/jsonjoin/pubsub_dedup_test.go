package jsonjoin_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
	"github.com/google/go-cmp/cmp"
)

// publishRecords publishes lines to topic in one request, each with its
// event time ts and the record ID `beamjoin publish` gives it
// (pubsubio.RecordIDs, new for each call: a second call on the same lines
// is a second run of publish on the same file).
func publishRecords(t *testing.T, client *pubsub.Client, topic string, lines []string, ts []int64) {
	t.Helper()
	ids := pubsubio.NewRecordIDs()
	req := &pubsubpb.PublishRequest{Topic: topic}
	for i, l := range lines {
		req.Messages = append(req.Messages, &pubsubpb.PubsubMessage{Data: []byte(l), Attributes: map[string]string{
			pubsubio.DefaultTimeAttribute: pubsubio.FormatTime(ts[i]),
			pubsubio.DefaultIDAttribute:   ids.Next([]byte(l)),
		}})
	}
	if _, err := client.TopicAdminClient.Publish(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

// Orders and payments published twice with the record IDs of `beamjoin
// publish` (the same file published again) make each pair once: the join
// reads each side de-duplicated by that ID. Two equal orders in one run
// keep distinct IDs and make a pair each. A sentinel pair, published once
// every message of the two runs was acknowledged, comes out after the
// copies would have.
func TestPubSubRecordPublishedTwiceJoinsOnce(t *testing.T) {
	srv, client := fakePubSub(t, "orders", "payments", "results")
	ctx := context.Background()
	fields := jsonl.Fields{Key: "k", Time: "attribute:" + pubsubio.DefaultTimeAttribute}
	c := jsonjoin.Config{
		Op:    jsonjoin.Interval,
		Left:  jsonjoin.Input{Pattern: "pubsub:projects/test/subscriptions/orders", Fields: fields},
		Right: jsonjoin.Input{Pattern: "pubsub:projects/test/subscriptions/payments", Fields: fields},
		Lower: 0, Upper: 10 * time.Second, WatermarkLag: time.Minute,
		Out: "pubsub:projects/test/topics/results",
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		_, err := jsonjoin.Run(runCtx, c, "prism")
		done <- err
	}()

	const base = 1714554000000
	orders := []string{`{"k":"a","id":"o-a"}`, `{"k":"b","id":"o-b"}`, `{"k":"b","id":"o-b"}`}
	payments := []string{`{"k":"a","id":"p-a"}`, `{"k":"b","id":"p-b"}`}
	for range 2 {
		publishRecords(t, client, "projects/test/topics/orders", orders, []int64{base, base + 1000, base + 1000})
		publishRecords(t, client, "projects/test/topics/payments", payments, []int64{base + 2000, base + 3000})
	}
	var got []string
	wait := func(what string, cond func() bool) {
		t.Helper()
		giveUp := time.Now().Add(streamWait)
		for !cond() {
			select {
			case err := <-done:
				t.Fatalf("the join ended while waiting for %s: %v", what, err)
			default:
			}
			if time.Now().After(giveUp) {
				t.Fatalf("gave up after %v waiting for %s; out:\n%s", streamWait, what, strings.Join(got, "\n"))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	allAcked := func() bool {
		for _, m := range srv.Messages() {
			if !strings.HasSuffix(m.Topic, "/results") && m.Acks == 0 {
				return false
			}
		}
		return true
	}
	wait("every published message acknowledged", allAcked)
	publishRecords(t, client, "projects/test/topics/orders", []string{`{"k":"s","id":"o-s"}`}, []int64{base + 5000})
	publishRecords(t, client, "projects/test/topics/payments", []string{`{"k":"s","id":"p-s"}`}, []int64{base + 6000})
	wait("the sentinel pair", func() bool {
		for _, d := range pullAll(t, client, "projects/test/subscriptions/results") {
			got = append(got, parseRecord(t, d))
		}
		return slices.Contains(got, record("pair", "s", "o-s", "p-s"))
	})
	stop()
	if err := <-done; err != nil && err != jsonjoin.ErrStopped {
		t.Fatalf("the join ended with %v, want ErrStopped", err)
	}
	for _, d := range pullAll(t, client, "projects/test/subscriptions/results") {
		got = append(got, parseRecord(t, d))
	}
	slices.Sort(got)
	want := []string{
		record("pair", "a", "o-a", "p-a"),
		record("pair", "b", "o-b", "p-b"),
		record("pair", "b", "o-b", "p-b"),
		record("pair", "s", "o-s", "p-s"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}
