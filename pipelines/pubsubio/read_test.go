package pubsubio_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
	"github.com/google/go-cmp/cmp"
)

// Orders and payments published to two topics come out of two Reads in
// one pipeline, each once with its event time; malformed messages come out
// as dead letters; every message is acknowledged once, after the pipeline
// saw it, and none is redelivered.
func TestReadOrdersAndPayments(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	orders := f.topic(t, "orders")
	payments := f.topic(t, "payments")
	ordersSub := f.subscription(t, orders, "orders-join")
	paymentsSub := f.subscription(t, payments, "payments-join")

	f.publish(orders, `{"order_id":"o-1","amount":10}`, at("1714554000000"))
	f.publish(orders, `{"order_id":"o-2","amount":20}`, at("2024-05-01T09:01:00.250Z"))
	noAttr := f.publish(orders, `{"order_id":"o-3","amount":30}`, nil)
	badAttr := f.publish(orders, `{"order_id":"o-4","amount":40}`, at("yesterday"))
	f.publish(orders, `{"order_id":`, at("1714554000000"))
	f.publish(payments, `{"payment_id":"p-1","order_id":"o-1"}`, at("1714554060000"))
	f.publish(payments, `{"payment_id":"p-2","order_id":"o-2"}`, at("1714554120000"))
	f.publish(payments, `[1,2,3]`, nil)
	f.publish(payments, ``, at("1714554000000"))
	published := func(id string) int64 { return f.srv.Message(id).PublishTime.UnixMilli() }

	p, s := beam.NewPipelineWithRoot()
	o, oBad := pubsubio.Read(s, ordersSub, pubsubio.Name("left"), fused)
	pay, payBad := pubsubio.Read(s, paymentsSub, pubsubio.Name("right"), fused)
	// Each collector is fused with its Read, in the same bundle, so a
	// message's acknowledgement must come after the collector saw it.
	for _, c := range []beam.PCollection{o, pay} {
		beam.ParDo0(s, &collectFn{Key: key}, c)
	}
	for _, c := range []beam.PCollection{oBad, payBad} {
		beam.ParDo0(s, &collectDeadFn{Key: key}, c)
		drain(s, c)
	}
	run := start(t, p)
	waitFor(t, "every message out and acknowledged", func() bool {
		return registry.count(key)+registry.count(key+"/dead") == 9 && f.allAcked(orders) && f.allAcked(payments)
	})
	run.stop(t)

	want := []string{
		`1714554000000 {"order_id":"o-1","amount":10}`,
		`1714554060000 {"payment_id":"p-1","order_id":"o-1"}`,
		`1714554060250 {"order_id":"o-2","amount":20}`,
		`1714554120000 {"payment_id":"p-2","order_id":"o-2"}`,
		fmt.Sprintf(`%d {"order_id":"o-3","amount":30}`, published(noAttr)),
		fmt.Sprintf(`%d {"order_id":"o-4","amount":40}`, published(badAttr)),
	}
	if diff := cmp.Diff(sortedCopy(want), registry.linesOf(key)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	wantDead := []string{
		`: empty message, want a JSON object`,
		`[1,2,3]: not a JSON object`,
		`{"order_id":: bad JSON: unexpected end of JSON input`,
	}
	if diff := cmp.Diff(wantDead, registry.linesOf(key+"/dead")); diff != "" {
		t.Errorf("dead letters (-want +got):\n%s", diff)
	}
	checkAckedOnce(t, f, orders, payments)
}

// checkAckedOnce checks that every message of the topics was delivered
// once and acknowledged once, by one ack ID, after the pipeline saw it.
func checkAckedOnce(t *testing.T, f *fake, topics ...string) {
	t.Helper()
	sent, early := f.acks.counts()
	for _, topic := range topics {
		for _, m := range f.messagesOf(topic) {
			if m.Deliveries != 1 || m.Acks != 1 || sent[m.ID] != 1 {
				t.Errorf("message %s (%s): %d deliveries, %d acks, %d ack IDs sent; want 1 of each", m.ID, m.Data, m.Deliveries, m.Acks, sent[m.ID])
			}
		}
	}
	if len(early) > 0 {
		t.Errorf("messages acknowledged before the pipeline saw them: %v", early)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// fused is the option of the tests of Read's acknowledgements: without
// de-duplication, whose stateful stage comes after the read, a test's
// collector runs fused with the read, in the bundle that pulled the
// message, so an acknowledgement that comes before the collector saw the
// message came before its bundle was committed (ackLog's early check).
var fused = pubsubio.KeepDuplicates()

// at is the attributes of a message whose event time is ms.
func at(ms string) map[string]string { return map[string]string{pubsubio.DefaultTimeAttribute: ms} }

// failFn fails its bundle on any message.
type failFn struct{}

func (failFn) ProcessElement(m pubsubio.Message) error {
	return fmt.Errorf("test: failing on %s", m.Data)
}

func init() { register.DoFn1x1[pubsubio.Message, error](&failFn{}) }

// A pipeline that fails in the bundle that read the messages acknowledges
// none of them; a pipeline started after it reads each of them once and
// acknowledges each once.
func TestReadFailedBundleIsRedelivered(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "orders")
	sub := f.subscription(t, topic, "orders-join")
	var want []string
	for i := range 5 {
		data := fmt.Sprintf(`{"order_id":"o-%d"}`, i)
		f.publish(topic, data, at(strconv.Itoa(1714554000000+i)))
		want = append(want, fmt.Sprintf("%d %s", 1714554000000+i, data))
	}

	p, s := beam.NewPipelineWithRoot()
	msgs, bad := pubsubio.Read(s, sub, fused)
	beam.ParDo0(s, failFn{}, msgs)
	drain(s, bad)
	err := start(t, p).wait(t)
	if err == nil || !strings.Contains(err.Error(), "test: failing on") {
		t.Fatalf("the failing pipeline ended with %v, want its DoFn's error", err)
	}
	if sent, _ := f.acks.counts(); len(sent) != 0 {
		t.Errorf("the failed pipeline acknowledged %v", sent)
	}

	p, s = beam.NewPipelineWithRoot()
	msgs, bad = pubsubio.Read(s, sub, fused)
	beam.ParDo0(s, &collectFn{Key: key}, msgs)
	drain(s, bad)
	run := start(t, p)
	waitFor(t, "every message out and acknowledged", func() bool {
		return registry.count(key) == len(want) && f.allAcked(topic)
	})
	run.stop(t)
	if diff := cmp.Diff(want, registry.linesOf(key)); diff != "" {
		t.Errorf("messages of the restarted pipeline (-want +got):\n%s", diff)
	}
	sent, early := f.acks.counts()
	for _, m := range f.messagesOf(topic) {
		if m.Acks != 1 || sent[m.ID] != 1 || m.Deliveries < 2 {
			t.Errorf("message %s (%s): %d deliveries, %d acks, %d ack IDs sent; want 2 or more, 1, 1", m.ID, m.Data, m.Deliveries, m.Acks, sent[m.ID])
		}
	}
	if len(early) > 0 {
		t.Errorf("messages acknowledged before the pipeline saw them: %v", early)
	}
}

// failOnFn reports each message under Key (seen) and Key+"/first"
// (lines), and fails its bundle on a message whose data contains Poison.
type failOnFn struct {
	Key    string
	Poison string
}

func (f *failOnFn) ProcessElement(et beam.EventTime, m pubsubio.Message) error {
	registry.see(f.Key, m.ID)
	registry.add(f.Key+"/first", fmt.Sprintf("%d %s", et.Milliseconds(), m.Data))
	if strings.Contains(string(m.Data), f.Poison) {
		return fmt.Errorf("test: failing on %s", m.Data)
	}
	return nil
}

func init() { register.DoFn2x1[beam.EventTime, pubsubio.Message, error](&failOnFn{}) }

// A pipeline that has committed and acknowledged some bundles, then fails
// in the middle of a later one, leaves that bundle's messages
// unacknowledged, and only those: a pipeline started after it on the same
// subscription delivers each of them, and not the ones acknowledged
// before. Over both runs every message is acknowledged exactly once.
func TestReadFailureMidStreamIsRedelivered(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "orders")
	sub := f.subscription(t, topic, "orders-join")
	wave := func(n int, base int64, poison int) (data []string, ms []int64, lines []string) {
		for i := range n {
			d := fmt.Sprintf(`{"order_id":"o-%d-%d"}`, base, i)
			if i == poison {
				d = fmt.Sprintf(`{"order_id":"o-%d-%d","poison":true}`, base, i)
			}
			data, ms = append(data, d), append(ms, base+int64(i))
			lines = append(lines, fmt.Sprintf("%d %s", base+int64(i), d))
		}
		return data, ms, lines
	}

	p, s := beam.NewPipelineWithRoot()
	msgs, bad := pubsubio.Read(s, sub, fused)
	beam.ParDo0(s, &failOnFn{Key: key, Poison: "poison"}, msgs)
	drain(s, bad)
	run := start(t, p)
	data, ms, first := wave(4, 1714554000000, -1)
	committed := f.publishAll(t, topic, data, ms)
	waitFor(t, "the first wave out and acknowledged", func() bool {
		return registry.count(key+"/first") == len(first) && f.allAcked(topic)
	})
	// The second wave comes in one pull, so in one bundle, in the fake's
	// order (a map's): the poison fails the bundle after, before or between
	// the others.
	data, ms, second := wave(5, 1714554001000, 2)
	failed := f.publishAll(t, topic, data, ms)
	if err := run.wait(t); err == nil || !strings.Contains(err.Error(), "test: failing on") {
		t.Fatalf("the failing pipeline ended with %v, want its DoFn's error", err)
	}
	saw := map[string]bool{}
	for _, l := range registry.linesOf(key + "/first") {
		saw[l] = true
	}
	for _, l := range append(first, second[2]) {
		if !saw[l] {
			t.Errorf("the failing pipeline did not see %s", l)
		}
	}
	byID := map[string]*pstest.Message{}
	for _, m := range f.messagesOf(topic) {
		byID[m.ID] = m
	}
	for _, id := range failed {
		if m := byID[id]; m.Acks != 0 {
			t.Errorf("message %s (%s) of the failed bundle: %d acks, want 0", id, m.Data, m.Acks)
		}
	}

	p, s = beam.NewPipelineWithRoot()
	msgs, bad = pubsubio.Read(s, sub, fused)
	beam.ParDo0(s, &collectFn{Key: key}, msgs)
	drain(s, bad)
	run = start(t, p)
	waitFor(t, "the failed bundle's messages out and acknowledged", func() bool {
		return registry.count(key) == len(second) && f.allAcked(topic)
	})
	run.stop(t)
	if diff := cmp.Diff(sortedCopy(second), registry.linesOf(key)); diff != "" {
		t.Errorf("messages of the restarted pipeline (-want +got):\n%s", diff)
	}
	sent, early := f.acks.counts()
	for _, id := range committed {
		if m := byID[id]; m.Deliveries != 1 || m.Acks != 1 || sent[id] != 1 {
			t.Errorf("message %s (%s) of a committed bundle: %d deliveries, %d acks, %d ack IDs sent; want 1 of each", id, m.Data, m.Deliveries, m.Acks, sent[id])
		}
	}
	for _, id := range failed {
		if m := byID[id]; m.Deliveries < 2 || m.Acks != 1 || sent[id] != 1 {
			t.Errorf("message %s (%s) of the failed bundle: %d deliveries, %d acks, %d ack IDs sent; want 2 or more, 1, 1", id, m.Data, m.Deliveries, m.Acks, sent[id])
		}
	}
	if len(early) > 0 {
		t.Errorf("messages acknowledged before the pipeline saw them: %v", early)
	}
}

// keyFn keys every message alike, for a timer.
func keyFn(m pubsubio.Message) (string, pubsubio.Message) { return "all", m }

// secondEndFn sets an event-time timer at the end of the second of each
// message, one per second, and reports the time of each timer that fires.
// A fired event-time timer proves the watermark passed its time.
type secondEndFn struct {
	Key  string
	Fire timers.EventTime
}

func (f *secondEndFn) ProcessElement(et beam.EventTime, tp timers.Provider, _ string, _ pubsubio.Message) {
	end := et.ToTime().Truncate(time.Second).Add(time.Second)
	f.Fire.Set(tp, end, timers.WithTag(strconv.FormatInt(end.UnixMilli(), 10)))
}

func (f *secondEndFn) OnTimer(et beam.EventTime, _ timers.Provider, _ string, _ timers.Context) {
	registry.add(f.Key, fmt.Sprintf("fired at %d", et.Milliseconds()))
}

func init() {
	register.Function1x2(keyFn)
	register.DoFn4x0[beam.EventTime, timers.Provider, string, pubsubio.Message](&secondEndFn{})
}

// An event-time timer downstream fires while the subscription is quiet:
// the watermark moves on once the subscription is idle. Without that the
// timer, at the end of the messages' second, would wait for a message
// after it that never comes.
func TestReadWatermarkMovesWhenIdle(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "clicks")
	sub := f.subscription(t, topic, "clicks-count")
	const t0 = 1714554000000 // on a second
	for _, dt := range []int{0, 100, 900} {
		f.publish(topic, `{"click":1}`, at(strconv.Itoa(t0+dt)))
	}

	p, s := beam.NewPipelineWithRoot()
	msgs, _ := pubsubio.Read(s, sub, pubsubio.IdleAfter(200*time.Millisecond))
	beam.ParDo0(s, &secondEndFn{Key: key, Fire: timers.InEventTime("fire")}, beam.ParDo(s, keyFn, msgs))
	run := start(t, p)
	waitFor(t, "the timer to fire", func() bool { return registry.count(key) > 0 })
	run.stop(t)
	if diff := cmp.Diff([]string{fmt.Sprintf("fired at %d", t0+1000)}, registry.linesOf(key)); diff != "" {
		t.Errorf("timers (-want +got):\n%s", diff)
	}
}

// gate holds the bundle of the first message that reaches it until the
// test opens it.
type gate struct {
	once    sync.Once
	held    chan struct{}
	release chan struct{}
}

var gates = struct {
	sync.Mutex
	m map[string]*gate
}{m: map[string]*gate{}}

func gateFor(key string) *gate {
	gates.Lock()
	defer gates.Unlock()
	g, ok := gates.m[key]
	if !ok {
		g = &gate{held: make(chan struct{}), release: make(chan struct{})}
		gates.m[key] = g
	}
	return g
}

// holdFn reports each message under Key, holding its bundle at the gate
// of Key until the test opens it.
type holdFn struct{ Key string }

func (f *holdFn) ProcessElement(et beam.EventTime, m pubsubio.Message) {
	registry.see(f.Key, m.ID)
	g := gateFor(f.Key)
	g.once.Do(func() { close(g.held) })
	<-g.release
	registry.add(f.Key, fmt.Sprintf("%d %s", et.Milliseconds(), m.Data))
}

func init() { register.DoFn2x0[beam.EventTime, pubsubio.Message](&holdFn{}) }

// While a bundle takes longer than the subscription's ack deadline, its
// messages' deadlines are extended: nobody else can pull them, and they
// are delivered once and acknowledged once. The fake's clock runs four
// times as fast as the real one, and the lease's timings are set to match.
func TestReadExtendsDeadlinesOfSlowBundle(t *testing.T) {
	defer pubsubio.SetLeaseTimings(500*time.Millisecond, 60*time.Second, 2*time.Second)()
	key := testKey(t)
	f := newFake(t, key)
	begin := time.Now()
	f.srv.SetTimeNowFunc(func() time.Time { return begin.Add(4 * time.Since(begin)) })
	topic := f.topic(t, "orders")
	sub := f.subscription(t, topic, "orders-join") // a 10 s deadline: 2.5 s of real time
	var want []string
	for i := range 3 {
		data := fmt.Sprintf(`{"order_id":"o-%d"}`, i)
		f.publish(topic, data, at(strconv.Itoa(1714554000000+i)))
		want = append(want, fmt.Sprintf("%d %s", 1714554000000+i, data))
	}

	p, s := beam.NewPipelineWithRoot()
	msgs, bad := pubsubio.Read(s, sub, fused)
	beam.ParDo0(s, &holdFn{Key: key}, msgs)
	drain(s, bad)
	run := start(t, p)
	g := gateFor(key)
	select {
	case <-g.held:
	case <-time.After(deadline):
		t.Fatal("no message reached the gate")
	}
	// 6 s of real time are 24 s of the fake's: over two ack deadlines. A
	// pull that finds nothing waits half a second in the fake.
	for end := time.Now().Add(6 * time.Second); time.Now().Before(end); {
		resp, err := f.client.SubscriptionAdminClient.Pull(context.Background(),
			&pubsubpb.PullRequest{Subscription: sub, MaxMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(resp.GetReceivedMessages()); n > 0 {
			t.Errorf("another subscriber pulled %d messages held by the bundle", n)
			break
		}
	}
	close(g.release)
	waitFor(t, "every message out and acknowledged", func() bool {
		return registry.count(key) == len(want) && f.allAcked(topic)
	})
	run.stop(t)
	if diff := cmp.Diff(want, registry.linesOf(key)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	checkAckedOnce(t, f, topic)
	for _, m := range f.messagesOf(topic) {
		if len(m.Modacks) == 0 {
			t.Errorf("message %s: its deadline was never extended", m.ID)
		}
	}
}

// Messages published in waves while the pipeline runs are each read once
// and acknowledged once: every bundle's messages are acknowledged, not
// only the first bundle's of each DoFn instance.
func TestReadAcksEveryWave(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "orders")
	sub := f.subscription(t, topic, "orders-join")

	p, s := beam.NewPipelineWithRoot()
	msgs, bad := pubsubio.Read(s, sub, fused)
	beam.ParDo0(s, &collectFn{Key: key}, msgs)
	drain(s, bad)
	run := start(t, p)
	var want []string
	for wave := range 4 {
		for i := range 3 {
			ms := 1714554000000 + 1000*wave + i
			data := fmt.Sprintf(`{"order_id":"o-%d-%d"}`, wave, i)
			f.publish(topic, data, at(strconv.Itoa(ms)))
			want = append(want, fmt.Sprintf("%d %s", ms, data))
		}
		waitFor(t, fmt.Sprintf("wave %d out and acknowledged", wave), func() bool {
			return registry.count(key) == len(want) && f.allAcked(topic)
		})
	}
	run.stop(t)
	if diff := cmp.Diff(want, registry.linesOf(key)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	checkAckedOnce(t, f, topic)
}

// With TimeField, event time is a field of the message's JSON object, and
// a message without a good one is a dead letter.
func TestReadTimeField(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "payments")
	sub := f.subscription(t, topic, "payments-join")
	for _, m := range []struct{ data, attr string }{
		{`{"id":"p-1","meta":{"ts":1714554000000}}`, "1"}, // the attribute is not read
		{`{"id":"p-2","meta":{"ts":"2024-05-01T09:00:00.5Z"}}`, ""},
		{`{"id":"p-3","meta":{"ts":1.714554001e12}}`, ""},
		{`{"id":"p-4","meta":{}}`, ""},
		{`{"id":"p-5","meta":{"ts":"1714554000000"}}`, ""},
		{`{"id":"p-6","meta":{"ts":1714554000000.5}}`, ""},
		{`{"id":"p-7","meta":"ts"}`, ""},
		{`{"id":"p-8","meta":{"ts":true}}`, ""},
	} {
		var attrs map[string]string
		if m.attr != "" {
			attrs = at(m.attr)
		}
		f.publish(topic, m.data, attrs)
	}

	p, s := beam.NewPipelineWithRoot()
	msgs, bad := pubsubio.Read(s, sub, pubsubio.TimeField("meta.ts"), fused)
	beam.ParDo0(s, &collectFn{Key: key}, msgs)
	beam.ParDo0(s, &collectDeadFn{Key: key}, bad)
	drain(s, bad)
	run := start(t, p)
	waitFor(t, "every message out and acknowledged", func() bool {
		return registry.count(key)+registry.count(key+"/dead") == 8 && f.allAcked(topic)
	})
	run.stop(t)

	want := []string{
		`1714554000000 {"id":"p-1","meta":{"ts":1714554000000}}`,
		`1714554000500 {"id":"p-2","meta":{"ts":"2024-05-01T09:00:00.5Z"}}`,
		`1714554001000 {"id":"p-3","meta":{"ts":1.714554001e12}}`,
	}
	if diff := cmp.Diff(want, registry.linesOf(key)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	wantDead := []string{
		`{"id":"p-4","meta":{}}: field "meta.ts": missing`,
		`{"id":"p-5","meta":{"ts":"1714554000000"}}: field "meta.ts": "1714554000000" is not an RFC 3339 time (want e.g. "2024-05-01T12:00:00Z" or epoch milliseconds)`,
		`{"id":"p-6","meta":{"ts":1714554000000.5}}: field "meta.ts": 1714554000000.5 is not a whole number of epoch milliseconds`,
		`{"id":"p-7","meta":"ts"}: field "meta.ts": "meta" is not an object`,
		`{"id":"p-8","meta":{"ts":true}}: field "meta.ts": is a boolean, want epoch milliseconds or an RFC 3339 string`,
	}
	if diff := cmp.Diff(wantDead, registry.linesOf(key+"/dead")); diff != "" {
		t.Errorf("dead letters (-want +got):\n%s", diff)
	}
	checkAckedOnce(t, f, topic)
}
