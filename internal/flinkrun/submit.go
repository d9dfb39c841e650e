package flinkrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/metricsx"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal/runnerlib"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"
)

// result is a finished job's result.
type result struct {
	jobID   string
	metrics *metrics.Results
}

func (r *result) Metrics() metrics.Results {
	if r.metrics == nil {
		return metrics.Results{}
	}
	return *r.metrics
}

func (r *result) JobID() string { return r.jobID }

// jobOptions returns the job's pipeline options: the Go SDK's own (its
// flags under go_options, which its workers read back) and, at top level,
// the parallelism, the experiments and o.Flink.
func jobOptions(par int, o Options) (*structpb.Struct, error) {
	beam.PipelineOptions.LoadOptionsFromFlags(nil)
	name := o.Name
	if name == "" {
		name = "beamjoin"
	}
	fields := map[string]any{
		"beam:option:app_name:v1":    name,
		"beam:option:job_name:v1":    name,
		"beam:option:parallelism:v1": par,
		"beam:option:experiments:v1": []any{"beam_fn_api"},
	}
	goOpts := map[string]any{}
	for k, v := range beam.PipelineOptions.Export().Options {
		goOpts[k] = v
	}
	fields["beam:option:go_options:v1"] = map[string]any{"options": goOpts}
	for k, v := range o.Flink {
		fields["beam:option:"+k+":v1"] = v
	}
	return structpb.NewStruct(fields)
}

// submit prepares, stages and runs the job, and waits for its end. When
// ctx ends first, the job is cancelled.
func submit(ctx context.Context, p *pipepb.Pipeline, bin string, par int, o Options) (beam.PipelineResult, error) {
	opts, err := jobOptions(par, o)
	if err != nil {
		return nil, fmt.Errorf("flinkrun: pipeline options: %w", err)
	}
	cc, err := grpc.NewClient(o.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		return nil, err
	}
	defer cc.Close()
	client := jobpb.NewJobServiceClient(cc)
	prep, err := client.Prepare(ctx, &jobpb.PrepareJobRequest{Pipeline: p, PipelineOptions: opts, JobName: o.Name})
	if err != nil {
		return nil, fmt.Errorf("flinkrun: preparing the job: %w", err)
	}
	token, err := runnerlib.Stage(ctx, prep.GetPreparationId(), prep.GetArtifactStagingEndpoint().GetUrl(), bin, prep.GetStagingSessionToken())
	if err != nil {
		return nil, fmt.Errorf("flinkrun: staging the worker: %w", err)
	}
	run, err := client.Run(ctx, &jobpb.RunJobRequest{PreparationId: prep.GetPreparationId(), RetrievalToken: token})
	if err != nil {
		return nil, fmt.Errorf("flinkrun: running the job: %w", err)
	}
	id := run.GetJobId()
	if o.OnSubmit != nil {
		o.OnSubmit(id)
	}
	werr := wait(ctx, client, id)
	res := &result{jobID: id}
	mctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if m, err := client.GetJobMetrics(mctx, &jobpb.GetJobMetricsRequest{JobId: id}); err == nil {
		res.metrics = metricsx.FromMonitoringInfos(p, m.GetMetrics().GetAttempted(), m.GetMetrics().GetCommitted())
	}
	return res, werr
}

// wait polls the job's state until it ends, and cancels it if ctx ends
// first (the SDK's WaitForCompletion ignores its context).
func wait(ctx context.Context, client jobpb.JobServiceClient, id string) error {
	for {
		st, err := client.GetState(context.Background(), &jobpb.GetJobStateRequest{JobId: id})
		if err != nil {
			return fmt.Errorf("flinkrun: job %s: %w", id, err)
		}
		switch st.GetState() {
		case jobpb.JobState_DONE:
			return nil
		case jobpb.JobState_FAILED:
			return fmt.Errorf("flinkrun: job %s failed: %s", id, lastError(client, id))
		case jobpb.JobState_CANCELLED:
			if ctx.Err() != nil {
				return fmt.Errorf("flinkrun: job %s cancelled: %w", id, ctx.Err())
			}
			return fmt.Errorf("flinkrun: job %s was cancelled", id)
		}
		select {
		case <-ctx.Done():
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			client.Cancel(cctx, &jobpb.CancelJobRequest{JobId: id})
			cancel()
			// Wait for the cancellation to take effect.
			for range 100 {
				st, err := client.GetState(context.Background(), &jobpb.GetJobStateRequest{JobId: id})
				if err != nil || isTerminal(st.GetState()) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			return fmt.Errorf("flinkrun: job %s cancelled: %w", id, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func isTerminal(s jobpb.JobState_Enum) bool {
	return s == jobpb.JobState_DONE || s == jobpb.JobState_FAILED || s == jobpb.JobState_CANCELLED
}

// lastError returns the job's last error message, which the job server
// keeps among the job's messages.
func lastError(client jobpb.JobServiceClient, id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := client.GetMessageStream(ctx, &jobpb.JobMessagesRequest{JobId: id})
	if err != nil {
		return "(no message: " + err.Error() + ")"
	}
	msg := "(no message)"
	for {
		r, err := stream.Recv()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				break
			}
			break
		}
		if m := r.GetMessageResponse(); m != nil && m.GetImportance() >= jobpb.JobMessage_JOB_MESSAGE_WARNING {
			msg = m.GetMessageText()
		}
		if s := r.GetStateResponse(); s != nil && isTerminal(s.GetState()) {
			break
		}
	}
	return msg
}
