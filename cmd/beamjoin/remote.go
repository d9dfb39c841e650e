// This file holds how the command waits for a streaming join that
// Dataflow runs, and what it does with the job when it is interrupted
// (--on-interrupt). The Go SDK's own wait (dataflowlib.WaitForCompletion)
// never looks at its context, and signal.NotifyContext swallows every
// signal after the first, so Ctrl-C could not stop the command; instead
// the command submits the job asynchronously and waits for it here.

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/gcpopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow/dataflowlib"
	df "google.golang.org/api/dataflow/v1b3"
)

// interruptAction is what the command does with a job that runs outside
// this process when the user interrupts it: --on-interrupt.
type interruptAction string

const (
	// detachJob leaves the job running and says how to stop it.
	detachJob interruptAction = "detach"
	// cancelJob asks the runner to cancel the job, and waits until it has.
	cancelJob interruptAction = "cancel"
	// drainJob asks the runner to drain the job (stop reading, finish what
	// it read, then stop), and waits until it has.
	drainJob interruptAction = "drain"
)

func (a *interruptAction) String() string { return string(*a) }

func (a *interruptAction) Set(s string) error {
	switch v := interruptAction(s); v {
	case detachJob, cancelJob, drainJob:
		*a = v
		return nil
	}
	return fmt.Errorf("want detach, cancel or drain")
}

// pollJob is how the command paces its requests for the state of a job
// it waits for: every ten seconds.
func pollJob() <-chan time.Time { return time.After(10 * time.Second) }

// remoteJob is a job that a runner runs outside this process, as the
// command waits for it.
type remoteJob interface {
	// State returns the job's state and whether it is final.
	State(ctx context.Context) (state string, final bool, err error)
	// Request asks the runner to cancel or drain the job.
	Request(ctx context.Context, a interruptAction) error
	// Name names the job in messages: "Dataflow job ID".
	Name() string
	// ByHand says how to cancel or drain the job by hand.
	ByHand() string
}

// errJobFailed is what waitForJob returns when the job it waits for
// failed.
var errJobFailed = errors.New("the job failed")

// waitForJob waits until job is in a final state, asking for it each
// time the channel after returns is ready. When a signal comes on
// interrupts it does what action says:
// detach at once, or ask for a cancel or a drain and wait on until the
// job has stopped; a second signal detaches. It tells the user on w what
// it does and why, and returns errJobFailed if the job failed, or the
// error that kept it from learning the job's state.
func waitForJob(ctx context.Context, job remoteJob, interrupts <-chan os.Signal, action interruptAction, after func() <-chan time.Time, w io.Writer) error {
	fmt.Fprintf(w, "beamjoin: %s runs in the runner; Ctrl-C %s\n", job.Name(), map[interruptAction]string{
		detachJob: "stops only the command and leaves the job running (--on-interrupt cancel or drain stops the job)",
		cancelJob: "cancels it", drainJob: "drains it"}[action])
	asked := false
	for {
		state, final, err := job.State(ctx)
		if err != nil {
			fmt.Fprintf(w, "beamjoin: no longer waiting for %s: its state could not be read (%v); it may still be running: %s\n", job.Name(), err, job.ByHand())
			return err
		}
		if final {
			fmt.Fprintf(w, "beamjoin: %s ended: %s\n", job.Name(), state)
			if state == "JOB_STATE_FAILED" {
				return errJobFailed
			}
			return nil
		}
		select {
		case <-interrupts:
			if action == detachJob || asked {
				fmt.Fprintf(w, "beamjoin: detached: only the command stopped; %s runs on in the runner: %s\n", job.Name(), job.ByHand())
				return nil
			}
			if err := job.Request(ctx, action); err != nil {
				fmt.Fprintf(w, "beamjoin: could not %s %s (%v); it runs on: %s\n", action, job.Name(), err, job.ByHand())
				return err
			}
			asked = true
			fmt.Fprintf(w, "beamjoin: asked the runner to %s %s; waiting until it has stopped (Ctrl-C again to stop waiting)\n", action, job.Name())
		case <-after():
		}
	}
}

// dataflowJob is a job on Dataflow, through its REST API.
type dataflowJob struct {
	svc                 *df.Service
	project, region, id string
}

// newDataflowJob reaches the Dataflow job id with the runner's own
// settings: --project, --region and --dataflow_endpoint, and the default
// credentials.
func newDataflowJob(ctx context.Context, id string) (*dataflowJob, error) {
	endpoint := ""
	if f := flag.Lookup("dataflow_endpoint"); f != nil {
		endpoint = f.Value.String()
	}
	svc, err := dataflowlib.NewClient(ctx, endpoint)
	if err != nil {
		return nil, fmt.Errorf("beamjoin: a Dataflow client to wait for job %s: %w", id, err)
	}
	return &dataflowJob{svc: svc, project: gcpopts.GetProject(ctx), region: gcpopts.GetRegion(ctx), id: id}, nil
}

// State returns the job's current state; the final ones are those of the
// Go SDK's own wait (dataflowlib.WaitForCompletion).
func (j *dataflowJob) State(ctx context.Context) (string, bool, error) {
	job, err := j.svc.Projects.Locations.Jobs.Get(j.project, j.region, j.id).Context(ctx).Do()
	if err != nil {
		return "", false, err
	}
	switch s := job.CurrentState; s {
	case "JOB_STATE_DONE", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_DRAINED", "JOB_STATE_UPDATED":
		return s, true, nil
	default:
		return s, false, nil
	}
}

// Request asks Dataflow for the job's cancel or drain, as `gcloud dataflow
// jobs cancel|drain` does: an update of its requested state.
func (j *dataflowJob) Request(ctx context.Context, a interruptAction) error {
	requested := map[interruptAction]string{cancelJob: "JOB_STATE_CANCELLED", drainJob: "JOB_STATE_DRAINED"}[a]
	if requested == "" {
		return fmt.Errorf("beamjoin: no request for %q", a)
	}
	_, err := j.svc.Projects.Locations.Jobs.Update(j.project, j.region, j.id, &df.Job{RequestedState: requested}).Context(ctx).Do()
	return err
}

// Name names the job.
func (j *dataflowJob) Name() string { return "Dataflow job " + j.id }

// ByHand gives the gcloud commands that stop the job.
func (j *dataflowJob) ByHand() string {
	return fmt.Sprintf("gcloud dataflow jobs drain %s --region=%s (or cancel)", j.id, j.region)
}

// waitsForDataflow reports whether the command submits the job to
// Dataflow asynchronously and waits for it itself: a streaming join on
// Dataflow that is really submitted (no --dry_run) and not already
// asynchronous (--async / --execute_async, where the command returns once
// the job is submitted).
func waitsForDataflow(runner string, streaming, async bool) bool {
	return streaming && !async && !dryRun() && (runner == "dataflow" || runner == "DataflowRunner")
}
