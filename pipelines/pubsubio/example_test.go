// The examples run jobs that end with bundles in flight, which the race
// detector reports against the Go SDK's own harness (see start in
// fake_test.go): they run without it only.

//go:build !race

package pubsubio_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
)

// printMessage prints a message's event time and data.
func printMessage(et beam.EventTime, m pubsubio.Message) {
	fmt.Println(et.Milliseconds(), string(m.Data))
}

func init() { register.Function2x0(printMessage) }

// Read a subscription of an in-process fake, as `beamjoin pubsub-fake`
// serves one, until every message is acknowledged.
func ExampleRead() {
	srv := pstest.NewServer()
	defer srv.Close()
	os.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr) // what a shell would export
	defer os.Unsetenv("PUBSUB_EMULATOR_HOST")
	ctx := context.Background()
	client, _ := pubsub.NewClient(ctx, "shop")
	defer client.Close()
	client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/shop/topics/orders"})
	client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: "projects/shop/subscriptions/orders", Topic: "projects/shop/topics/orders"})
	for i, ts := range []string{"1714554000000", "2024-05-01T09:00:01Z"} {
		srv.Publish("projects/shop/topics/orders", fmt.Appendf(nil, `{"order_id":"o-%d"}`, i+1),
			map[string]string{pubsubio.DefaultTimeAttribute: ts})
	}

	p, s := beam.NewPipelineWithRoot()
	orders, _ := pubsubio.Read(s, "projects/shop/subscriptions/orders", pubsubio.WatermarkLag(5*time.Second))
	beam.ParDo0(s, printMessage, orders)

	// A streaming pipeline runs until it is cancelled: stop it once the
	// fake has every acknowledgement.
	run, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		for acked := 0; acked < 2; time.Sleep(10 * time.Millisecond) {
			acked = 0
			for _, m := range srv.Messages() {
				acked += m.Acks
			}
		}
	}()
	beam.Run(run, "prism", p) // returns the cancellation
	// Unordered output:
	// 1714554000000 {"order_id":"o-1"}
	// 1714554001000 {"order_id":"o-2"}
}

// Write records to a topic of an in-process fake, with their event times.
func ExampleWrite() {
	srv := pstest.NewServer()
	defer srv.Close()
	os.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	defer os.Unsetenv("PUBSUB_EMULATOR_HOST")
	ctx := context.Background()
	client, _ := pubsub.NewClient(ctx, "shop")
	defer client.Close()
	client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/shop/topics/unpaid"})

	p, s := beam.NewPipelineWithRoot()
	unpaid := beam.ParDo(s, stampLine, beam.Create(s,
		`1714554277000 {"kind":"unmatched","key":"o-0004"}`))
	pubsubio.Write(s, "projects/shop/topics/unpaid", unpaid)
	if err := ptest.Run(p); err != nil {
		fmt.Println(err)
	}
	for _, m := range srv.Messages() {
		fmt.Println(m.Attributes, string(m.Data))
	}
	// Output:
	// map[event_time:1714554277000] {"kind":"unmatched","key":"o-0004"}
}
