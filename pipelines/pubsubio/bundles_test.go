// This file holds the tests that drive Read's DoFn bundle by bundle as
// Dataflow and Flink run it, where Prism cannot be made to: pauses of the
// reader's own bundles, worker restarts, a runner's split at fraction 0
// during a pull, retried bundles, readers in different workers, and event
// times far ahead of the stream. The test is the runner: it commits a
// bundle by running its residual next, and fails one by dropping it.

package pubsubio_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
	"github.com/google/go-cmp/cmp"
)

// t0 is the event time the tests' messages start at: 2024-05-01T09:00Z.
const t0 = 1714554000000

// noWatermark is the watermark of a reader that holds the read at the
// start of time.
const noWatermark = int64(mtime.MinTimestamp)

// wave publishes one message per event time, t0 plus each offset in
// milliseconds, in one request, and returns the lines a bundle that reads
// them emits ("EVENT_TIME DATA").
func wave(t *testing.T, f *fake, topic, name string, offsets ...int64) []string {
	t.Helper()
	var data, lines []string
	var ms []int64
	for i, o := range offsets {
		d := fmt.Sprintf(`{"id":"%s-%d"}`, name, i)
		data, ms = append(data, d), append(ms, t0+o)
		lines = append(lines, fmt.Sprintf("%d %s", t0+o, d))
	}
	f.publishAll(t, topic, data, ms)
	return lines
}

// behind returns the lines whose event time is before watermark wm: the
// ones a runner would judge late if they came after a bundle reported it.
func behind(lines []string, wm int64) []string {
	var out []string
	for _, l := range lines {
		var ts int64
		fmt.Sscan(l, &ts)
		if ts < wm {
			out = append(out, l)
		}
	}
	return out
}

// A pause in the reader's own bundles, in the same worker or across a
// restart into a new one (a worker restarted, rebalanced or updated, or a
// restore from a checkpoint), is not time in which the subscription was
// seen quiet: however long it lasts, the first bundle after it, whose
// pull finds nothing, leaves the watermark where it was, and messages
// published during the pause with event times from before it are on
// time when a later bundle reads them.
func TestReadPauseOfTheReaderIsNotIdleTime(t *testing.T) {
	defer pubsubio.InProcess("")
	for _, tc := range []struct {
		name    string
		restart bool
	}{
		{"pause_in_the_same_worker", false},
		{"restart_in_a_new_worker", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := testKey(t)
			f := newFake(t, key)
			topic := f.topic(t, "orders")
			sub := f.subscription(t, topic, "orders-join")
			const idle, lag = 2 * time.Second, 1000
			r, err := pubsubio.NewReadRunner(sub, pubsubio.IdleAfter(idle), pubsubio.WatermarkLag(lag*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			pubsubio.InProcess(key + "/worker-1")
			wave(t, f, topic, "before", 0, 1000, 2000)
			_, _, c1, err := r.Bundle(ctx, r.Initial())
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(idle + idle/4) // the pause: longer than IdleAfter
			if tc.restart {
				pubsubio.InProcess(key + "/worker-2")
			}
			f.pulls.emptyNext(1)
			_, _, c2, err := r.Bundle(ctx, c1)
			if err != nil {
				t.Fatal(err)
			}
			during := wave(t, f, topic, "during", 1500, 2500, 3000)
			lines, _, c3, err := r.Bundle(ctx, c2)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{
				fmt.Sprintf("watermark before the pause: %d", c1.Watermark()-t0),
				fmt.Sprintf("watermark after the first bundle after it: %d", c2.Watermark()-t0),
				fmt.Sprintf("messages read after it: %d, behind that watermark: %v", len(lines), behind(lines, c2.Watermark())),
				fmt.Sprintf("watermark after reading them: %d", c3.Watermark()-t0),
			}
			want := []string{
				"watermark before the pause: 1000",
				"watermark after the first bundle after it: 1000",
				fmt.Sprintf("messages read after it: %d, behind that watermark: []", len(during)),
				"watermark after reading them: 2000",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tc.restart {
				// The bundle in the new worker acknowledged the messages of
				// the one before the restart, by the ack IDs in its cursor.
				for _, m := range f.messagesOf(topic) {
					if strings.Contains(string(m.Data), "before") && m.Acks != 1 {
						t.Errorf("message %s (%s) read before the restart: %d acks, want 1", m.ID, m.Data, m.Acks)
					}
				}
			}
		})
	}
}

// A runner may split a running bundle at fraction 0 (Dataflow does, to
// bound a bundle's time) while the bundle waits on a pull. The residual
// may run in another worker, which can acknowledge only the messages its
// cursor names: so every message the bundle emitted is named there, or
// was handed back unemitted and is read again. Over the split bundle, the
// residual's bundle in a new worker and the one after it, every message is
// emitted by a committed bundle once and acknowledged once.
func TestReadSplitAtFractionZeroDuringAPull(t *testing.T) {
	defer pubsubio.InProcess("")
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "orders")
	sub := f.subscription(t, topic, "orders-join")
	r, err := pubsubio.NewReadRunner(sub)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pubsubio.InProcess(key + "/worker-1")
	want := wave(t, f, topic, "o", 0, 1, 2)
	arrived, release := f.pulls.holdNext()
	lines, _, res, err := r.BundleSplit(ctx, r.Initial(), arrived, func() { close(release) })
	if err != nil {
		t.Fatal(err)
	}
	committed := lines
	pubsubio.InProcess(key + "/worker-2")
	lines, _, next, err := r.Bundle(ctx, res)
	if err != nil {
		t.Fatal(err)
	}
	committed = append(committed, lines...)
	if _, _, _, err := r.Bundle(ctx, next); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sortedCopy(want), sortedCopy(committed)); diff != "" {
		t.Errorf("messages emitted by committed bundles (-want +got):\n%s", diff)
	}
	for _, m := range f.messagesOf(topic) {
		if m.Acks != 1 {
			t.Errorf("message %s (%s): %d acks, want 1", m.ID, m.Data, m.Acks)
		}
	}
}

// The SDK reads a running bundle's watermark and its estimator's state
// from other goroutines, to answer the runner's progress and split
// requests, while the bundle reads messages. Under the race detector
// (make test runs this package with -race) any unguarded access fails
// the test; without it, the test checks that the bundle reads as usual.
func TestReadWatermarkReadDuringABundle(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "orders")
	sub := f.subscription(t, topic, "orders-join")
	r, err := pubsubio.NewReadRunner(sub, pubsubio.IdleAfter(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	want := wave(t, f, topic, "o", 0, 10, 20)
	lines, _, next, err := r.BundleWatched(ctx, r.Initial())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sortedCopy(want), sortedCopy(lines)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if got := next.Watermark() - t0; got != 20 {
		t.Errorf("watermark = t0%+d, want t0+20", got)
	}
}

// A reader that runs a failed bundle again holds its watermark at the
// messages the failed attempt handed back. Another reader of its worker
// reading one of them again in a bundle that is never committed does not
// release that hold: the message may still be lost with that bundle and
// come again. The hold goes once a bundle that read it is committed.
func TestReadHandedBackHoldIsReleasedByACommittedReadOnly(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "orders")
	sub := f.subscription(t, topic, "orders-join")
	r, err := pubsubio.NewReadRunner(sub, pubsubio.Readers(2), pubsubio.IdleAfter(time.Hour))
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
		wm := "none"
		if next.Watermark() != noWatermark {
			wm = fmt.Sprint(next.Watermark() - t0)
		}
		got = append(got, fmt.Sprintf("%s: watermark %s", what, wm))
		return next
	}
	readers := r.Split(r.Initial())
	a, b := readers[0], readers[1]
	wave(t, f, topic, "first", 0, 1, 2)
	a1 := bundle("reader A", a, 3)
	wave(t, f, topic, "second", 1000, 1001, 1002)
	bundle("reader A, an attempt that fails", a1, 3)
	f.pulls.emptyNext(1)
	a2 := bundle("reader A, the retry, its pull empty", a1, 0)
	bundle("reader B reads them again, in a bundle that fails", b, 3)
	wave(t, f, topic, "third", 2000, 2001, 2002)
	a3 := bundle("reader A reads later ones", a2, 3)
	f.pulls.emptyNext(1)
	a4 := bundle("reader A", a3, 0)
	f.pulls.emptyNext(1)
	b1 := bundle("reader B, the retry, its pull empty", b, 0)
	b2 := bundle("reader B reads them again", b1, 3)
	bundle("reader B, that bundle committed", b2, 0)
	bundle("reader A", a4, 0)
	want := []string{
		"reader A: watermark 2",
		"reader A, an attempt that fails: watermark 1002",
		"reader A, the retry, its pull empty: watermark 2",
		"reader B reads them again, in a bundle that fails: watermark 1002",
		"reader A reads later ones: watermark 1000",
		"reader A: watermark 1000",
		"reader B, the retry, its pull empty: watermark 1000",
		"reader B reads them again: watermark 2002",
		"reader B, that bundle committed: watermark 2002",
		"reader A: watermark 2002",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bundles and the watermarks they reported, from t0 (-want +got):\n%s", diff)
	}
}

// With several readers in different workers, one that never receives a
// message releases its hold once it has pulled for IdleAfter without one:
// the read's watermark, the least of its readers', is then the watermark
// of the reader that reads, rather than the start of time.
func TestReadSilentReaderReleasesItsHold(t *testing.T) {
	defer pubsubio.InProcess("")
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "clicks")
	sub := f.subscription(t, topic, "clicks-count")
	const lag = 1000
	r, err := pubsubio.NewReadRunner(sub, pubsubio.Readers(2), pubsubio.IdleAfter(time.Second), pubsubio.WatermarkLag(lag*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	readers := r.Split(r.Initial())
	wave(t, f, topic, "c", 5000, 6000)
	pubsubio.InProcess(key + "/worker-1")
	lines, _, reading, err := r.Bundle(ctx, readers[0])
	if err != nil || len(lines) != 2 {
		t.Fatalf("the reading reader's bundle: %v, %v", lines, err)
	}
	pubsubio.InProcess(key + "/worker-2")
	silent := readers[1]
	for i := 0; i < 20 && (i == 0 || silent.Watermark() == noWatermark); i++ {
		if lines, _, silent, err = r.Bundle(ctx, silent); err != nil || len(lines) > 0 {
			t.Fatalf("the silent reader's bundle %d: %v, %v", i, lines, err)
		}
	}
	if got, want := min(reading.Watermark(), silent.Watermark())-t0, int64(6000-lag); got != want {
		t.Errorf("the read's watermark = t0%+d, want t0%+d (the reading reader's)", got, want)
	}
}

// With MaxSkew, an event time far ahead of the stream moves nothing for
// good: a time in microseconds (more than the bound after its publish
// time) is a dead letter, and a message of a backfill that falls back to
// its publish time is emitted but leaves the watermark with the
// backfill. A run of such messages (the stream itself moved on) moves it.
func TestReadOutlierEventTimes(t *testing.T) {
	key := testKey(t)
	f := newFake(t, key)
	topic := f.topic(t, "orders")
	sub := f.subscription(t, topic, "orders-join")
	r, err := pubsubio.NewReadRunner(sub, pubsubio.MaxSkew(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	publish := func(data string, attrs map[string]string) {
		req := &pubsubpb.PublishRequest{Topic: topic, Messages: []*pubsubpb.PubsubMessage{{Data: []byte(data), Attributes: attrs}}}
		if _, err := f.client.TopicAdminClient.Publish(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	bundle := func(what string, cur pubsubio.Cursor) pubsubio.Cursor {
		t.Helper()
		lines, dead, next, err := r.BundleWithDead(ctx, cur)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for i, l := range lines {
			if ts, data, _ := strings.Cut(l, " "); !strings.HasPrefix(ts, "17145") {
				lines[i] = "PUBLISH_TIME " + data // a publish time: not known in advance
			}
		}
		slices.Sort(lines)
		got = append(got, fmt.Sprintf("%s: emitted %v, dead %v, watermark %d", what, lines, dead, next.Watermark()-t0))
		return next
	}
	publish(`{"id":"o-1"}`, at(fmt.Sprint(t0)))
	c := bundle("backfill", r.Initial())
	publish(`{"id":"o-2"}`, at(fmt.Sprint(t0*1000))) // microseconds
	c = bundle("a time in microseconds", c)
	publish(`{"id":"o-3"}`, nil) // no time attribute: its publish time
	c = bundle("a message without a time", c)
	publish(`{"id":"o-4"}`, at(fmt.Sprint(t0+5000)))
	c = bundle("the backfill goes on", c)
	for i := range 5 {
		publish(fmt.Sprintf(`{"id":"live-%d"}`, i), nil)
	}
	c = bundle("the stream reaches the present", c)
	if c.Watermark() < time.Now().Add(-time.Hour).UnixMilli() {
		t.Errorf("after five messages of the present the watermark is %v, want the present", time.UnixMilli(c.Watermark()).UTC())
	}
	want := []string{
		`backfill: emitted [1714554000000 {"id":"o-1"}], dead [], watermark 0`,
		fmt.Sprintf(`a time in microseconds: emitted [], dead [{"id":"o-2"}: event time %d is more than MaxSkew (1h0m0s) after the message's publish time], watermark 0`, t0*1000),
		`a message without a time: emitted [PUBLISH_TIME {"id":"o-3"}], dead [], watermark 0`,
		`the backfill goes on: emitted [1714554005000 {"id":"o-4"}], dead [], watermark 5000`,
	}
	if diff := cmp.Diff(want, got[:len(want)]); diff != "" {
		t.Errorf("bundles (-want +got):\n%s", diff)
	}
}
