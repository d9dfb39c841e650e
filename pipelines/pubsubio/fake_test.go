// This file holds the tests' Pub/Sub fake, the registry through which
// test DoFns report what they saw, and the helpers that start, wait on and
// stop streaming pipelines.

package pubsubio_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// project is the project of every topic and subscription in the tests.
const project = "test"

// deadline bounds every wait: generous, for a busy 2-core machine.
const deadline = 3 * time.Minute

// fake is a pstest server on loopback, reached by the package's code
// through PUBSUB_EMULATOR_HOST, with a log of the acknowledgements sent
// and a gate that can make pulls come back empty.
type fake struct {
	srv    *pstest.Server
	client *pubsub.Client
	acks   *ackLog
	pulls  *pullGate
}

// newFake starts a fake for one test; key names the test's registry
// entries, which tell the ack log what the pipeline has seen.
func newFake(t testing.TB, key string) *fake {
	t.Helper()
	acks := &ackLog{key: key}
	pulls := &pullGate{}
	srv := pstest.NewServer(pstest.ServerReactorOption{FuncName: "Acknowledge", Reactor: acks},
		pstest.ServerReactorOption{FuncName: "Pull", Reactor: pulls})
	t.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	client, err := pubsub.NewClient(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.Close()
		srv.Close()
	})
	return &fake{srv: srv, client: client, acks: acks, pulls: pulls}
}

// pullGate makes the next pulls find nothing, however many messages wait,
// or holds the next pull until the test lets it go on.
type pullGate struct {
	empty atomic.Int32
	hold  atomic.Pointer[pullHold]
}

// pullHold is a pull held by holdNext.
type pullHold struct{ arrived, release chan struct{} }

// holdNext makes the next pull wait, before the server takes any message
// for it, until release is closed; arrived is closed once it waits. The
// server's lock is held meanwhile: the test must call nothing of the
// server's until it releases the pull.
func (g *pullGate) holdNext() (arrived <-chan struct{}, release chan<- struct{}) {
	h := &pullHold{arrived: make(chan struct{}), release: make(chan struct{})}
	g.hold.Store(h)
	return h.arrived, h.release
}

// emptyNext makes the next n pulls come back empty.
func (g *pullGate) emptyNext(n int32) { g.empty.Store(n) }

func (g *pullGate) React(req any) (bool, any, error) {
	if _, ok := req.(*pubsubpb.PullRequest); !ok {
		return false, nil, nil
	}
	if h := g.hold.Swap(nil); h != nil {
		close(h.arrived)
		<-h.release
		return false, nil, nil
	}
	for {
		n := g.empty.Load()
		if n <= 0 {
			return false, nil, nil
		}
		if g.empty.CompareAndSwap(n, n-1) {
			return true, &pubsubpb.PullResponse{}, nil
		}
	}
}

// topic creates topic id and returns its name.
func (f *fake) topic(t testing.TB, id string) string {
	t.Helper()
	name := "projects/" + project + "/topics/" + id
	if _, err := f.client.TopicAdminClient.CreateTopic(context.Background(), &pubsubpb.Topic{Name: name}); err != nil {
		t.Fatal(err)
	}
	return name
}

// subscription creates subscription id to topic, with a 10 s ack
// deadline, and returns its name.
func (f *fake) subscription(t testing.TB, topic, id string) string {
	t.Helper()
	name := "projects/" + project + "/subscriptions/" + id
	_, err := f.client.SubscriptionAdminClient.CreateSubscription(context.Background(),
		&pubsubpb.Subscription{Name: name, Topic: topic, AckDeadlineSeconds: 10})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// publish publishes a message through the server, returning its ID.
func (f *fake) publish(topic, data string, attrs map[string]string) string {
	return f.srv.Publish(topic, []byte(data), attrs)
}

// publishAll publishes the messages, data with event times ms (epoch
// milliseconds), in one Publish request: the fake stores them under one
// lock, so a pull that comes after gets all of them, and one bundle of
// Read emits them together. It returns their message IDs.
func (f *fake) publishAll(t testing.TB, topic string, data []string, ms []int64) []string {
	t.Helper()
	req := &pubsubpb.PublishRequest{Topic: topic}
	for i, d := range data {
		req.Messages = append(req.Messages, &pubsubpb.PubsubMessage{Data: []byte(d), Attributes: at(fmt.Sprint(ms[i]))})
	}
	resp, err := f.client.TopicAdminClient.Publish(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetMessageIds()
}

// messagesOf returns what the server knows of the messages of topic.
func (f *fake) messagesOf(topic string) []*pstest.Message {
	var ms []*pstest.Message
	for _, m := range f.srv.Messages() {
		if m.Topic == topic {
			ms = append(ms, m)
		}
	}
	return ms
}

// allAcked reports whether every message of topic was acknowledged.
func (f *fake) allAcked(topic string) bool {
	for _, m := range f.messagesOf(topic) {
		if m.Acks == 0 {
			return false
		}
	}
	return true
}

// ackLog records every ack ID the server is sent, and which of them came
// for a message that the pipeline had not yet seen.
type ackLog struct {
	key string

	mu    sync.Mutex
	ids   []string        // message IDs, one per ack ID received
	early []string        // message IDs acknowledged before a test DoFn saw them
	lose  map[string]bool // message IDs whose next acknowledgement is lost
	lost  []string        // the ack IDs of the lost acknowledgements
}

// loseNextAck makes the server drop the next acknowledgement of each of
// the messages ids, as if it never arrived.
func (a *ackLog) loseNextAck(ids ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.lose == nil {
		a.lose = map[string]bool{}
	}
	for _, id := range ids {
		a.lose[id] = true
	}
}

// lostAcks returns the ack IDs whose acknowledgement was dropped.
func (a *ackLog) lostAcks() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.lost...)
}

// React records an Acknowledge request and lets the server handle it. It
// runs under the server's lock, so it must not call the server.
func (a *ackLog) React(req any) (bool, any, error) {
	r, ok := req.(*pubsubpb.AcknowledgeRequest)
	if !ok {
		return false, nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	kept := r.AckIds[:0:0]
	for _, id := range r.AckIds {
		msg := id[:strings.LastIndex(id, ":")] // pstest ack IDs are "MESSAGE:DELIVERY"
		if a.lose[msg] {
			// The server sees the request without it.
			delete(a.lose, msg)
			a.lost = append(a.lost, id)
			continue
		}
		kept = append(kept, id)
		a.ids = append(a.ids, msg)
		if !registry.saw(a.key, msg) {
			a.early = append(a.early, msg)
		}
	}
	r.AckIds = kept
	return false, nil, nil
}

// counts returns how many ack IDs came for each message, and the messages
// acknowledged before they were seen.
func (a *ackLog) counts() (map[string]int, []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := map[string]int{}
	for _, id := range a.ids {
		n[id]++
	}
	return n, append([]string(nil), a.early...)
}

// testKey names a test run's registry entries and gate: the test's name
// and a sequence number, so that a test run again in the same process
// (go test -count=N) starts afresh.
func testKey(t testing.TB) string {
	return fmt.Sprintf("%s#%d", t.Name(), runs.Add(1))
}

var runs atomic.Int64

// registry is where test DoFns, running in this process, report what
// they saw, under their test's key.
var registry = &reports{lines: map[string][]string{}, seen: map[string]map[string]bool{}}

type reports struct {
	mu    sync.Mutex
	lines map[string][]string
	seen  map[string]map[string]bool // key -> message IDs
}

// add reports a line under key.
func (r *reports) add(key, line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines[key] = append(r.lines[key], line)
}

// see reports that message id was seen under key.
func (r *reports) see(key, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[key] == nil {
		r.seen[key] = map[string]bool{}
	}
	r.seen[key][id] = true
}

func (r *reports) saw(key, id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[key][id]
}

// linesOf returns, sorted, what was reported under key.
func (r *reports) linesOf(key string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.lines[key]...)
	sort.Strings(out)
	return out
}

func (r *reports) count(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lines[key])
}

// collectFn reports each message as "TIME DATA" (TIME in epoch
// milliseconds) under Key, and that its ID was seen.
type collectFn struct{ Key string }

func (f *collectFn) ProcessElement(et beam.EventTime, m pubsubio.Message) {
	registry.see(f.Key, m.ID)
	registry.add(f.Key, fmt.Sprintf("%d %s", et.Milliseconds(), m.Data))
}

// collectDeadFn reports each dead letter as "DATA: ERROR" under
// Key+"/dead", and that its message was seen under Key.
type collectDeadFn struct{ Key string }

func (f *collectDeadFn) ProcessElement(d pubsubio.DeadLetter) {
	registry.see(f.Key, d.MessageID)
	registry.add(f.Key+"/dead", fmt.Sprintf("%s: %s", d.Data, d.Error))
}

func init() {
	register.DoFn2x0[beam.EventTime, pubsubio.Message](&collectFn{})
	register.DoFn1x0[pubsubio.DeadLetter](&collectDeadFn{})
}

// drainFn drops what it is given. It declares state, which it never
// touches, so that it is stateful: Prism runs it in a stage of its own, in
// the SDK worker.
type drainFn struct {
	Unused state.Value[int64]
}

func (f *drainFn) ProcessElement(_ state.Provider, _ string, _ beam.T) {}

// keyAll keys every element alike.
func keyAll(x beam.T) (string, beam.T) { return "", x }

func init() {
	register.DoFn3x0[state.Provider, string, beam.T](&drainFn{})
	register.Function1x2(keyAll)
}

// drain gives col a consumer in a stage of its own, so that the stage that
// makes col has an output. Prism v2.77 spins a core for the whole of every
// bundle of a stage with no output (stage.Execute selects on the bundle's
// DataWait channel, closed from the start when there is nothing to wait
// for), and a streaming read's bundles last up to a second each. The
// consumer is a stateful DoFn, not a Reshuffle: Prism runs a Reshuffle
// itself, and a step it runs itself can fail the job with its progress
// race (see internal/prismrun), which a streaming test cannot run again.
func drain(s beam.Scope, col beam.PCollection) {
	beam.ParDo0(s, &drainFn{Unused: state.MakeValueState[int64]("unused")}, beam.ParDo(s, keyAll, col))
}

// waitFor polls cond until it holds, failing the test after deadline.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	stop := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(stop) {
			t.Fatalf("gave up after %v waiting for %s", deadline, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// running is a streaming pipeline started by start.
type running struct {
	cancel context.CancelFunc
	done   chan error
}

// start runs p on Prism until stop is called or it fails. Under the race
// detector it skips the test instead: when a job ends with bundles in
// flight (cancelled, as a streaming test ends, or failed), the Go SDK
// v2.77's harness closes its response channel while those bundles'
// goroutines may still send on it (core/runtime/harness/harness.go, the
// close at line 195 and the send at 213), a race of the SDK's own that
// the detector reports at random. The read's own concurrency is checked
// under -race by the tests that drive its DoFn bundle by bundle
// (bundles_test.go, retry_test.go, readers_test.go).
func start(t testing.TB, p *beam.Pipeline) *running {
	t.Helper()
	if raceDetector {
		t.Skip("the race detector reports a race of the Go SDK v2.77's harness when a job ends with bundles in flight (see start)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	go func() {
		_, err := beam.Run(ctx, "prism", p)
		r.done <- err
	}()
	return r
}

// stop cancels the pipeline through Prism's job service, as a user
// cancels a streaming job, and waits for it to end; a pipeline that ended
// with an error of its own fails the test.
func (r *running) stop(t testing.TB) {
	t.Helper()
	defer r.cancel()
	if err := cancelRunningJobs(); err != nil {
		t.Errorf("cancelling the job: %v", err)
		r.cancel()
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("pipeline failed: %v", err)
		}
	case <-time.After(deadline):
		t.Fatalf("pipeline did not stop within %v of its cancellation", deadline)
	}
}

// cancelRunningJobs cancels every running job of the in-process Prism,
// whose address the prism runner left in the endpoint flag.
func cancelRunningJobs() error {
	conn, err := grpc.NewClient(*jobopts.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	jobs := jobpb.NewJobServiceClient(conn)
	resp, err := jobs.GetJobs(ctx, &jobpb.GetJobsRequest{})
	if err != nil {
		return err
	}
	for _, j := range resp.GetJobInfo() {
		if j.GetState() == jobpb.JobState_RUNNING {
			if _, err := jobs.Cancel(ctx, &jobpb.CancelJobRequest{JobId: j.GetJobId()}); err != nil {
				return err
			}
		}
	}
	return nil
}

// wait waits for the pipeline to end by itself and returns its error.
func (r *running) wait(t testing.TB) error {
	t.Helper()
	select {
	case err := <-r.done:
		return err
	case <-time.After(deadline):
		r.cancel()
		t.Fatalf("pipeline did not end within %v", deadline)
		return nil
	}
}
