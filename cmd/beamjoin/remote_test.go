package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow/dataflowlib"
	"github.com/google/go-cmp/cmp"
	df "google.golang.org/api/dataflow/v1b3"
	"google.golang.org/api/option"
)

// scriptedJob is a job whose states, and the interrupts around them,
// follow a script: each State call takes the next step.
type scriptedJob struct {
	steps      []jobStep
	interrupts chan os.Signal
	requested  []interruptAction
	requestErr error
	i          int
}

// jobStep is what one State call returns, and whether the user interrupts
// the command right after it.
type jobStep struct {
	state     string
	err       error
	interrupt bool
}

func (j *scriptedJob) State(context.Context) (string, bool, error) {
	s := j.steps[j.i]
	j.i++
	if s.interrupt {
		j.interrupts <- os.Interrupt
	}
	final := strings.Contains("JOB_STATE_DONE JOB_STATE_FAILED JOB_STATE_CANCELLED JOB_STATE_DRAINED", s.state)
	return s.state, final && s.state != "", s.err
}

func (j *scriptedJob) Request(_ context.Context, a interruptAction) error {
	j.requested = append(j.requested, a)
	return j.requestErr
}

func (j *scriptedJob) Name() string   { return "Dataflow job J" }
func (j *scriptedJob) ByHand() string { return "gcloud dataflow jobs drain J --region=R (or cancel)" }

// after is the pace of the wait: at once, unless an interrupt is waiting,
// so that the wait takes the interrupt, never a tick, whatever the
// scheduler does.
func (j *scriptedJob) after() <-chan time.Time {
	if len(j.interrupts) > 0 {
		return nil
	}
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}

// TestWaitForJob waits for a scripted job under each --on-interrupt
// action, and checks what the command asked the runner and said.
func TestWaitForJob(t *testing.T) {
	running := jobStep{state: "JOB_STATE_RUNNING"}
	interrupted := jobStep{state: "JOB_STATE_RUNNING", interrupt: true}
	const (
		detachHint = "beamjoin: Dataflow job J runs in the runner; Ctrl-C stops only the command and leaves the job running (--on-interrupt cancel or drain stops the job)"
		cancelHint = "beamjoin: Dataflow job J runs in the runner; Ctrl-C cancels it"
		detached   = "beamjoin: detached: only the command stopped; Dataflow job J runs on in the runner: gcloud dataflow jobs drain J --region=R (or cancel)"
	)
	for _, tc := range []struct {
		name       string
		action     interruptAction
		steps      []jobStep
		requestErr error
		wantErr    error
		wantAsked  []interruptAction
		wantSaid   []string
	}{
		{"runs_to_its_end", detachJob, []jobStep{running, running, {state: "JOB_STATE_DONE"}}, nil, nil, nil,
			[]string{detachHint, "beamjoin: Dataflow job J ended: JOB_STATE_DONE"}},
		{"fails", cancelJob, []jobStep{running, {state: "JOB_STATE_FAILED"}}, nil, errJobFailed, nil,
			[]string{cancelHint, "beamjoin: Dataflow job J ended: JOB_STATE_FAILED"}},
		{"detach", detachJob, []jobStep{running, interrupted}, nil, nil, nil,
			[]string{detachHint, detached}},
		{"cancel", cancelJob, []jobStep{interrupted, {state: "JOB_STATE_CANCELLING"}, {state: "JOB_STATE_CANCELLED"}}, nil, nil, []interruptAction{cancelJob},
			[]string{cancelHint,
				"beamjoin: asked the runner to cancel Dataflow job J; waiting until it has stopped (Ctrl-C again to stop waiting)",
				"beamjoin: Dataflow job J ended: JOB_STATE_CANCELLED"}},
		{"drain", drainJob, []jobStep{running, interrupted, {state: "JOB_STATE_DRAINING"}, {state: "JOB_STATE_DRAINED"}}, nil, nil, []interruptAction{drainJob},
			[]string{"beamjoin: Dataflow job J runs in the runner; Ctrl-C drains it",
				"beamjoin: asked the runner to drain Dataflow job J; waiting until it has stopped (Ctrl-C again to stop waiting)",
				"beamjoin: Dataflow job J ended: JOB_STATE_DRAINED"}},
		{"a_second_interrupt_stops_waiting", cancelJob, []jobStep{interrupted, {state: "JOB_STATE_CANCELLING", interrupt: true}}, nil, nil, []interruptAction{cancelJob},
			[]string{cancelHint,
				"beamjoin: asked the runner to cancel Dataflow job J; waiting until it has stopped (Ctrl-C again to stop waiting)",
				detached}},
		{"the_request_fails", cancelJob, []jobStep{interrupted}, errors.New("403 forbidden"), errors.New("403 forbidden"), []interruptAction{cancelJob},
			[]string{cancelHint, "beamjoin: could not cancel Dataflow job J (403 forbidden); it runs on: gcloud dataflow jobs drain J --region=R (or cancel)"}},
		{"the_state_cannot_be_read", detachJob, []jobStep{running, {err: errors.New("connection refused")}}, nil, errors.New("connection refused"), nil,
			[]string{detachHint, "beamjoin: no longer waiting for Dataflow job J: its state could not be read (connection refused); it may still be running: gcloud dataflow jobs drain J --region=R (or cancel)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &scriptedJob{steps: tc.steps, interrupts: make(chan os.Signal, 2), requestErr: tc.requestErr}
			var said bytes.Buffer
			err := waitForJob(context.Background(), job, job.interrupts, tc.action, job.after, &said)
			if fmt.Sprint(err) != fmt.Sprint(tc.wantErr) {
				t.Errorf("error = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantAsked, job.requested); diff != "" {
				t.Errorf("requests to the runner (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSaid, strings.Split(strings.TrimSuffix(said.String(), "\n"), "\n")); diff != "" {
				t.Errorf("what the command said (-want +got):\n%s", diff)
			}
			if job.i != len(tc.steps) {
				t.Errorf("the command read the state %d times, want %d", job.i, len(tc.steps))
			}
		})
	}
}

// fakeDataflow serves the two calls of Dataflow's REST API that the
// command makes, for one job: get its state, and update its requested
// state.
type fakeDataflow struct {
	mu       sync.Mutex
	state    string
	requests []string // "METHOD PATH requestedState"
}

func (f *fakeDataflow) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path != "/v1b3/projects/shop/locations/europe-west1/jobs/2026-12-06_J" {
		http.NotFound(w, r)
		return
	}
	var job df.Job
	if r.Method == http.MethodPut {
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &job); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	f.requests = append(f.requests, fmt.Sprintf("%s %s %s", r.Method, r.URL.Path, job.RequestedState))
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(df.Job{Id: "2026-12-06_J", CurrentState: f.state})
}

// The command's Dataflow job reads the job's state and asks for a cancel
// or a drain with the REST calls gcloud makes, here against a fake of
// the API.
func TestDataflowJob(t *testing.T) {
	fake := &fakeDataflow{state: "JOB_STATE_RUNNING"}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	ctx := context.Background()
	svc, err := df.NewService(ctx, option.WithEndpoint(srv.URL), option.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	job := &dataflowJob{svc: svc, project: "shop", region: "europe-west1", id: "2026-12-06_J"}
	var got []string
	state := func() {
		s, final, err := job.State(ctx)
		got = append(got, fmt.Sprintf("state %s, final %v, error %v", s, final, err))
	}
	state()
	if err := job.Request(ctx, cancelJob); err != nil {
		t.Fatal(err)
	}
	fake.state = "JOB_STATE_CANCELLED"
	state()
	if err := job.Request(ctx, drainJob); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"state JOB_STATE_RUNNING, final false, error <nil>",
		"state JOB_STATE_CANCELLED, final true, error <nil>",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	const path = "/v1b3/projects/shop/locations/europe-west1/jobs/2026-12-06_J"
	wantRequests := []string{"GET " + path + " ", "PUT " + path + " JOB_STATE_CANCELLED", "GET " + path + " ", "PUT " + path + " JOB_STATE_DRAINED"}
	if diff := cmp.Diff(wantRequests, fake.requests); diff != "" {
		t.Errorf("requests to the API (-want +got):\n%s", diff)
	}
	if got, want := job.ByHand(), "gcloud dataflow jobs drain 2026-12-06_J --region=europe-west1 (or cancel)"; got != want {
		t.Errorf("ByHand() = %q, want %q", got, want)
	}
}

// The Go SDK v2.77's own wait for a Dataflow job, which beam.Run makes
// unless --async is set, never looks at its context: called with a
// context already cancelled, it still asks for the job's state, and then
// sleeps 30 s before asking again, until the job ends. That is why the
// command submits the job asynchronously and waits for it itself
// (remote.go). This test fails once the SDK is fixed.
func TestSDKWaitForCompletionIgnoresItsContext(t *testing.T) {
	fake := &fakeDataflow{state: "JOB_STATE_RUNNING"}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	svc, err := df.NewService(context.Background(), option.WithEndpoint(srv.URL), option.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	go dataflowlib.WaitForCompletion(ctx, svc, "shop", "europe-west1", "2026-12-06_J") // returns once the server is closed
	for stop := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		fake.mu.Lock()
		asked := len(fake.requests)
		fake.mu.Unlock()
		if asked > 0 {
			return // it asked for the state after its context was cancelled
		}
		if time.Now().After(stop) {
			t.Fatal("the SDK's WaitForCompletion did not ask for the job's state with a cancelled context within a minute: has it learned to look at its context? Then the command could use it again")
		}
	}
}

// The command waits for the job itself only for a streaming join on
// Dataflow that it submits: not for a batch join, another runner, or a
// submission the user made asynchronous.
func TestWaitsForDataflow(t *testing.T) {
	for _, tc := range []struct {
		runner           string
		streaming, async bool
		want             bool
	}{
		{"dataflow", true, false, true},
		{"DataflowRunner", true, false, true},
		{"dataflow", false, false, false},
		{"dataflow", true, true, false},
		{"flink", true, false, false},
		{"prism", true, false, false},
	} {
		if got := waitsForDataflow(tc.runner, tc.streaming, tc.async); got != tc.want {
			t.Errorf("waitsForDataflow(%q, streaming %v, async %v) = %v, want %v", tc.runner, tc.streaming, tc.async, got, tc.want)
		}
	}
}
