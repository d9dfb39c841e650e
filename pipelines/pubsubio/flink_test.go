package pubsubio_test

// This file holds the Pub/Sub read's test on Flink (make flink-test),
// against pstest: when the read acknowledges a message, relative to what
// Flink has committed downstream.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/internal/flinkrun"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
)

func init() {
	register.Function1x1(slowID)
}

// slowID stands for a slow stage after the read: a join, a sink.
func slowID(m pubsubio.Message) string {
	time.Sleep(20 * time.Millisecond)
	return m.ID
}

// TestFlinkPubSubAckedBeforeWritten reproduces the Pub/Sub read's limit on
// Flink (docs/pubsub.md): the read acknowledges a bundle's messages when
// the bundle that continues the read starts, and on Beam 2.62's Flink
// runner no checkpoint can cover a splittable DoFn's read, so a job that
// ends before its messages reach the sink loses the ones acknowledged. The
// job reads 200 messages into a stage that takes 20 ms each and is
// cancelled once half are acknowledged; the messages acknowledged and not
// written are lost (a new job does not get them). The test fails if none
// is: then the limit is gone, and pubsub.md must say so.
func TestFlinkPubSubAckedBeforeWritten(t *testing.T) {
	js := flinkrun.Shared(t)
	f := newFake(t, testKey(t))
	topic := f.topic(t, "events")
	sub := f.subscription(t, topic, "events-read")
	const n = 200
	var data []string
	var ms []int64
	for i := range n {
		data = append(data, event{Side: "order", K: fmt.Sprint(i % 7), ID: fmt.Sprintf("o-%d", i)}.json())
		ms = append(ms, 1714554000000+int64(i)*1000)
	}
	ids := f.publishAll(t, topic, data, ms)

	dir := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	msgs, bad := pubsubio.Read(s, sub)
	flinkrun.WriteLines(s, dir, beam.ParDo(s, slowID, beam.Reshuffle(s, msgs)))
	drain(s, bad)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := flinkrun.Execute(ctx, p, flinkrun.Options{Endpoint: js.Endpoint})
		done <- err
	}()
	acked := func() map[string]bool {
		out := map[string]bool{}
		for _, id := range ids {
			if f.srv.Message(id).Acks > 0 {
				out[id] = true
			}
		}
		return out
	}
	waitFor(t, "half the messages acknowledged", func() bool { return len(acked()) >= n/2 })
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the job ended by itself; it reads until it is cancelled")
	}
	ackedIDs := acked()
	written, err := flinkrun.ReadLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, id := range written {
		out[id] = true
	}
	var lost int
	for id := range ackedIDs {
		if !out[id] {
			lost++
		}
	}
	t.Logf("cancelled with %d of %d messages acknowledged and %d written: %d acknowledged, never written, lost", len(ackedIDs), n, len(out), lost)
	if lost == 0 {
		t.Errorf("no acknowledged message was lost when the job ended early: the limit docs/pubsub.md states for Flink is gone")
	}
	for id := range out {
		if !ackedIDs[id] {
			t.Errorf("message %s was written but not acknowledged", id)
		}
	}
}
