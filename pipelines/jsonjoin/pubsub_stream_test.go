package jsonjoin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/beamjoin/beamjoin/internal/prismrun"
	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
)

// streamWait bounds every wait on the stream: generous, for a busy 2-core
// machine.
const streamWait = 3 * time.Minute

// streamElement is one message of TestPubSubEmitFinalWhileRunning.
type streamElement struct {
	left bool
	key  string
	id   string
	ts   int64 // epoch milliseconds
}

func (e streamElement) json() string {
	return fmt.Sprintf(`{"k":%q,"id":%q,"ts":%d}`, e.key, e.id, e.ts)
}

// record is what the test keeps of a result record: "kind key left right",
// with the ids of its sides ("-" for an absent one).
func record(kind, key, left, right string) string {
	return kind + " " + key + " " + left + " " + right
}

// streamWave returns the elements of wave w, at event times [w*10 s,
// w*10 s + 9 s] after base. Keys "L" and "R" get a left (order) or a right
// (payment) every second and never match: under a full outer join each
// becomes an unmatched record once event time has passed its cleanup. Key
// "M" gets an order every other second and a payment a second after each,
// so every order joins the payments of the next 10 s (up to five) and
// every payment the orders of the 10 s before. Keys "u-W-J" and "v-W" are
// new keys with one unmatched order or payment each.
func streamWave(base int64, w int) []streamElement {
	var out []streamElement
	for j := range 10 {
		ts := base + int64(w*10+j)*1000
		out = append(out,
			streamElement{left: true, key: "L", id: fmt.Sprintf("l-%d-%d", w, j), ts: ts},
			streamElement{key: "R", id: fmt.Sprintf("r-%d-%d", w, j), ts: ts})
		if j%2 == 0 {
			out = append(out, streamElement{left: true, key: "M", id: fmt.Sprintf("mo-%d-%d", w, j), ts: ts})
		} else {
			out = append(out, streamElement{key: "M", id: fmt.Sprintf("mp-%d-%d", w, j), ts: ts})
		}
	}
	for j := range 2 {
		out = append(out, streamElement{left: true, key: fmt.Sprintf("u-%d-%d", w, j), id: fmt.Sprintf("u-%d-%d", w, j), ts: base + int64(w*10+3+j)*1000})
	}
	out = append(out, streamElement{key: fmt.Sprintf("v-%d", w), id: fmt.Sprintf("v-%d", w), ts: base + int64(w*10+6)*1000})
	return out
}

// TestPubSubEmitFinalWhileRunning runs a full outer interval join with
// EmitFinal from two subscriptions of an in-process fake, as `beamjoin
// interval --type full --emit final --idle-after 1h` does, on a stream
// twelve times longer than the join's span (bounds [0, 10 s]), published
// in waves of 10 s of event time. After each wave it reads the results
// topic until every record that the wave's watermark has made due is
// there (the unmatched records of elements whose cleanup time it passed,
// and the pairs it passed), before it publishes the next wave: the records
// come out while the stream runs. An element without a partner leaves the
// join's state exactly when its unmatched record is made, so the elements
// still held stay within the last 17 s of event time (bound, lag and timer
// rounding), the same after every wave while the stream grows. Without the
// join's timers firing as the stream goes, the wait of the first wave
// gives up. Subscriptions go idle only after an hour, so the data alone
// moves the watermark. At the end every due record is there once, any
// other record is a right one, once, and nothing is late.
func TestPubSubEmitFinalWhileRunning(t *testing.T) {
	_, client := fakePubSub(t, "orders", "payments", "results", "late")
	ctx := context.Background()

	const (
		upper = 10 * time.Second
		lag   = 5 * time.Second
		waves = 12 // 120 s of event time: twelve times the span
		// slack covers the rounding of cleanup timers up to the second
		// (join.CleanupEvery's default) and the millisecond past the bound.
		slack = 2 * time.Second
	)
	fields := jsonl.Fields{Key: "k", Time: "ts"}
	c := jsonjoin.Config{
		Op:    jsonjoin.Interval,
		Left:  jsonjoin.Input{Pattern: "pubsub:projects/test/subscriptions/orders", Fields: fields},
		Right: jsonjoin.Input{Pattern: "pubsub:projects/test/subscriptions/payments", Fields: fields},
		Lower: 0, Upper: upper, Type: join.FullOuter, Emit: join.EmitFinal,
		WatermarkLag: lag, IdleAfter: time.Hour,
		Out:  "pubsub:projects/test/topics/results",
		Late: "pubsub:projects/test/topics/late",
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	var sum jsonjoin.Summary
	go func() {
		var err error
		sum, err = jsonjoin.Run(runCtx, c, "prism")
		done <- err
	}()

	got := map[string]int{} // records read from the results topic
	var due []string        // records that must be out: every pair, and the unmatched records the watermark has made due
	collect := func() {
		for _, d := range pullAll(t, client, "projects/test/subscriptions/results") {
			got[parseRecord(t, d)]++
		}
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		giveUp := time.Now().Add(streamWait)
		for collect(); !cond(); collect() {
			select {
			case err := <-done:
				t.Fatalf("the join ended while waiting for %s: %v", what, err)
			default:
			}
			if time.Now().After(giveUp) {
				var missing, have []string
				for _, r := range due {
					if got[r] == 0 {
						missing = append(missing, r)
					}
				}
				for r := range got {
					have = append(have, r)
				}
				sort.Strings(have)
				t.Fatalf("gave up after %v waiting for %s; missing:\n%s\nout:\n%s", streamWait, what, strings.Join(missing, "\n"), strings.Join(have, "\n"))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	const base = 1714554000000
	var published []streamElement
	var held []int // after each wave, elements without a partner that have no record yet
	for w := range waves {
		wave := streamWave(base, w)
		published = append(published, wave...)
		publishWave(t, client, "projects/test/topics/orders", wave, true)
		publishWave(t, client, "projects/test/topics/payments", wave, false)
		// Both subscriptions have read up to the wave's last time; their
		// watermarks, and the join's, trail it by the lag.
		watermark := base + int64(w*10+9)*1000 - lag.Milliseconds()
		// A pair is due once the watermark has passed both its elements:
		// Prism v2.77 gives a stateful stage a key's elements and timers in
		// event-time order, so an element later than the key's next
		// cleanup timer waits for the watermark to reach that timer.
		due, _ = pairsOf(published, upper, watermark)
		unmatched, notDue := 0, 0
		for _, e := range published {
			if e.key == "M" {
				continue
			}
			unmatched++
			keep := int64(0)
			if e.left {
				keep = upper.Milliseconds()
			}
			if e.ts+keep+slack.Milliseconds() < watermark {
				due = append(due, unmatchedRecord(e))
			} else {
				notDue++
			}
		}
		// Once every due record is out, what is held is at most notDue:
		// the elements of the last 17 s (bound, lag and slack) of event
		// time, the same for every wave after the first, while what was
		// published grows by 23 such elements a wave.
		wait(fmt.Sprintf("the records due after wave %d (%d of them; %d of %d elements without a partner not yet due)", w, len(due), notDue, unmatched), func() bool {
			for _, r := range due {
				if got[r] == 0 {
					return false
				}
			}
			return true
		})
		out := 0
		for r, n := range got {
			if strings.HasPrefix(r, "unmatched ") {
				out += n
			}
		}
		held = append(held, unmatched-out)
	}
	stop()
	select {
	case err := <-done:
		if !errors.Is(err, jsonjoin.ErrStopped) {
			t.Errorf("the join ended with %v, want jsonjoin.ErrStopped", err)
		}
	case <-time.After(streamWait):
		t.Fatalf("the join did not stop within %v of its cancellation", streamWait)
	}
	// Every message was read before the last wave's watermark, so the
	// progress counted in this process has them all.
	var lefts, rights int64
	for _, e := range published {
		if e.left {
			lefts++
		} else {
			rights++
		}
	}
	if sum.Stream == nil {
		t.Error("the summary has no progress of the stream")
	} else if got := sum.Stream.Lines; !slices.Equal(got, []int64{lefts, rights}) {
		t.Errorf("the summary's lines read: %v, want [%d %d]", got, lefts, rights)
	}
	collect()
	t.Logf("held after each wave (span 10 s, waves of 10 s): %v", held)

	// Every pair of the published elements, each once; every due
	// unmatched record once; other unmatched records at most once, and
	// only of elements that have no partner.
	want := map[string]int{}
	for _, r := range due {
		want[r] = 1
	}
	_, maybe := pairsOf(published, upper, math.MinInt64)
	for _, e := range published {
		if e.key != "M" {
			maybe = append(maybe, unmatchedRecord(e))
		}
	}
	for _, r := range maybe {
		if got[r] == 1 && want[r] == 0 {
			want[r] = 1 // not yet due when the last wave was checked, but out
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if late := pullAll(t, client, "projects/test/subscriptions/late"); len(late) > 0 {
		t.Errorf("late elements: %v", late)
	}
}

// pairsOf returns the pair records of the elements (a left and a right of
// one key with 0 <= ts(right) - ts(left) <= upper): due, those whose later
// element, the right, is before watermark, and the others.
func pairsOf(elements []streamElement, upper time.Duration, watermark int64) (due, notDue []string) {
	for _, l := range elements {
		for _, r := range elements {
			if l.left && !r.left && l.key == r.key && r.ts-l.ts >= 0 && r.ts-l.ts <= upper.Milliseconds() {
				if r.ts < watermark {
					due = append(due, record("pair", l.key, l.id, r.id))
				} else {
					notDue = append(notDue, record("pair", l.key, l.id, r.id))
				}
			}
		}
	}
	return due, notDue
}

// unmatchedRecord is the record of e when it has no partner.
func unmatchedRecord(e streamElement) string {
	if e.left {
		return record("unmatched", e.key, e.id, "-")
	}
	return record("unmatched", e.key, "-", e.id)
}

// publishWave publishes the orders (left) or the payments of a wave in one
// request: the fake stores them together, so Read emits them in one bundle.
func publishWave(t *testing.T, client *pubsub.Client, topic string, wave []streamElement, left bool) {
	t.Helper()
	req := &pubsubpb.PublishRequest{Topic: topic}
	for _, e := range wave {
		if e.left == left {
			req.Messages = append(req.Messages, &pubsubpb.PubsubMessage{Data: []byte(e.json())})
		}
	}
	if _, err := client.TopicAdminClient.Publish(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

// pullAll pulls and acknowledges what sub holds now.
func pullAll(t *testing.T, client *pubsub.Client, sub string) []string {
	t.Helper()
	ctx := context.Background()
	var data []string
	for {
		//lint:ignore SA1019 the fake honours ReturnImmediately, and a poll needs a pull that returns at once when nothing is there
		resp, err := client.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: sub, MaxMessages: 1000, ReturnImmediately: true})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range resp.GetReceivedMessages() {
			data = append(data, string(m.GetMessage().GetData()))
			ids = append(ids, m.GetAckId())
		}
		if len(ids) == 0 {
			sort.Strings(data)
			return data
		}
		if err := client.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: sub, AckIds: ids}); err != nil {
			t.Fatal(err)
		}
	}
}

// parseRecord reads a result record of the stream as record does.
func parseRecord(t *testing.T, data string) string {
	t.Helper()
	var r struct {
		Kind        string
		Key         string
		Left, Right *struct{ ID string }
	}
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		t.Fatalf("result %s: %v", data, err)
	}
	id := func(s *struct{ ID string }) string {
		if s == nil {
			return "-"
		}
		return s.ID
	}
	return record(r.Kind, r.Key, id(r.Left), id(r.Right))
}

// fakePubSub starts a pstest server for the test, points the client
// library at it, and creates a topic and a subscription of the same name
// for each of ids, and returns the server and the client. It also sets Prism's no-split experiment, as the
// command does, for the join's stateful DoFn.
func fakePubSub(t *testing.T, ids ...string) (*pstest.Server, *pubsub.Client) {
	t.Helper()
	if !slices.Contains(jobopts.GetExperiments(), prismrun.NoSplits) {
		*jobopts.Experiments = strings.Join(append(jobopts.GetExperiments(), prismrun.NoSplits), ",")
	}
	srv := pstest.NewServer()
	t.Cleanup(func() { srv.Close() })
	t.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	ctx := context.Background()
	client, err := pubsub.NewClient(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	for _, id := range ids {
		topic := "projects/test/topics/" + id
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
			Name: "projects/test/subscriptions/" + id, Topic: topic, AckDeadlineSeconds: 60}); err != nil {
			t.Fatal(err)
		}
	}
	return srv, client
}
