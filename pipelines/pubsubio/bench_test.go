package pubsubio_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
)

// benchMessages is how many messages each run reads: 20 000, but for
// Receive, which reads 1000 (the fake's StreamingPull sends one message per
// response and per 10 ms tick, about a hundred a second).
var benchMessages int64

// throughput counts what one run has read and the fake has had
// acknowledged, and when each began and ended.
var throughput struct {
	read, acked         atomic.Int64
	firstRead, lastRead atomic.Int64 // unix nanoseconds
	lastAck             atomic.Int64
}

func resetThroughput() {
	throughput.read.Store(0)
	throughput.acked.Store(0)
	throughput.firstRead.Store(0)
	throughput.lastRead.Store(0)
	throughput.lastAck.Store(0)
}

// noteRead counts one message read.
func noteRead() {
	now := time.Now().UnixNano()
	throughput.firstRead.CompareAndSwap(0, now)
	if throughput.read.Add(1) == benchMessages {
		throughput.lastRead.Store(now)
	}
}

// ackCounter counts the ack IDs the fake is sent.
type ackCounter struct{}

func (ackCounter) React(req any) (bool, any, error) {
	if r, ok := req.(*pubsubpb.AcknowledgeRequest); ok {
		if throughput.acked.Add(int64(len(r.AckIds))) >= benchMessages {
			throughput.lastAck.CompareAndSwap(0, time.Now().UnixNano())
		}
	}
	return false, nil, nil
}

// countFn counts the messages of a benchmark run.
type countFn struct{}

func (countFn) ProcessElement(pubsubio.Message) { noteRead() }

func init() { register.DoFn1x0[pubsubio.Message](&countFn{}) }

// BenchmarkRead measures Read alone on the in-process fake: 20 000
// messages, published before the run starts, are read into a DoFn that
// counts them: by one reader (source) and by four (source-readers=4)
// without de-duplication, as the baselines read, and by one reader with
// Read's default de-duplication (source-deduplicated), a stateful stage
// after the read.
// msgs/s runs from the first message read to the last, so it leaves out
// the pipeline's start; acked/s from the first message read to the last
// acknowledgement the fake receives. The baselines read the same messages
// from the same fake without Beam: the client library's Receive,
// acknowledging in its callback, and a loop of the synchronous Pull that
// Read uses, acknowledging each batch.
func BenchmarkRead(b *testing.B) {
	for _, reader := range []struct {
		name string
		n    int64
		read func(b *testing.B, f *fake, sub string)
	}{
		{"source", 20000, readWithPipeline(pubsubio.KeepDuplicates())},
		{"source-readers=4", 20000, readWithPipeline(pubsubio.KeepDuplicates(), pubsubio.Readers(4), pubsubio.IdleAfter(time.Hour))},
		{"source-deduplicated", 20000, readWithPipeline()},
		{"pull-loop", 20000, readWithPullLoop},
		{"receive", 1000, readWithReceive},
	} {
		b.Run(reader.name, func(b *testing.B) {
			benchMessages = reader.n
			var readFor, ackFor time.Duration
			for i := range b.N {
				b.StopTimer()
				f := newBenchFake(b)
				topic := f.topic(b, fmt.Sprintf("t%d", i))
				sub := f.subscription(b, topic, fmt.Sprintf("s%d", i))
				for j := range int(benchMessages) {
					f.publish(topic, fmt.Sprintf(`{"order_id":"o-%d","amount":%d}`, j, j), at("1714554000000"))
				}
				resetThroughput()
				b.StartTimer()
				reader.read(b, f, sub)
				b.StopTimer()
				first := throughput.firstRead.Load()
				readFor += time.Duration(throughput.lastRead.Load() - first)
				ackFor += time.Duration(throughput.lastAck.Load() - first)
			}
			n := float64(int64(b.N) * benchMessages)
			b.ReportMetric(n/readFor.Seconds(), "msgs/s")
			b.ReportMetric(n/ackFor.Seconds(), "acked/s")
		})
	}
}

// newBenchFake is a fake that only counts acknowledgements.
func newBenchFake(b *testing.B) *fake {
	srv := pstest.NewServer(pstest.ServerReactorOption{FuncName: "Acknowledge", Reactor: ackCounter{}})
	b.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	client, err := pubsub.NewClient(context.Background(), project)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		client.Close()
		srv.Close()
	})
	return &fake{srv: srv, client: client}
}

// everything reports whether the run has read and acknowledged every
// message.
func everything() bool {
	return throughput.read.Load() >= benchMessages && throughput.acked.Load() >= benchMessages
}

// readWithPipeline reads with Read and opts.
func readWithPipeline(opts ...pubsubio.Option) func(b *testing.B, _ *fake, sub string) {
	return func(b *testing.B, _ *fake, sub string) {
		p, s := beam.NewPipelineWithRoot()
		msgs, bad := pubsubio.Read(s, sub, opts...)
		beam.ParDo0(s, &countFn{}, msgs)
		drain(s, bad)
		run := start(b, p)
		waitFor(b, "every message read and acknowledged", everything)
		run.stop(b)
	}
}

func readWithReceive(b *testing.B, f *fake, sub string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- f.client.Subscriber(sub).Receive(ctx, func(_ context.Context, m *pubsub.Message) {
			noteRead()
			m.Ack()
		})
	}()
	waitFor(b, "every message read and acknowledged", everything)
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

func readWithPullLoop(b *testing.B, f *fake, sub string) {
	ctx := context.Background()
	for throughput.read.Load() < benchMessages {
		resp, err := f.client.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: sub, MaxMessages: 1000})
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]string, 0, len(resp.GetReceivedMessages()))
		for _, m := range resp.GetReceivedMessages() {
			noteRead()
			ids = append(ids, m.GetAckId())
		}
		if len(ids) > 0 {
			if err := f.client.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: sub, AckIds: ids}); err != nil {
				b.Fatal(err)
			}
		}
	}
	waitFor(b, "every acknowledgement", everything)
}
