package main

import (
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
	"github.com/google/go-cmp/cmp"
)

// What the command says when a streaming join is interrupted: the stream's
// progress when it was counted here, and whether the job ended with the
// command.
func TestStopped(t *testing.T) {
	p := &jsonjoin.Progress{Elapsed: 83 * time.Second, Lines: []int64{201, 180}, Out: 150, Done: true,
		Time: []time.Time{time.UnixMilli(1714572000000), time.UnixMilli(1714572300000)}}
	for _, tc := range []struct {
		name      string
		sum       jsonjoin.Summary
		inProcess bool
		want      string
	}{
		{"in_process", jsonjoin.Summary{Op: jsonjoin.Interval, Ran: true, Stream: p}, true,
			"beamjoin: stopped after 1m23s: left 201 lines read (event time 2024-05-01T14:00:00Z), right 180 lines read (event time 2024-05-01T14:05:00Z); 150 records out\n" +
				"beamjoin: messages not yet acknowledged are delivered to the next run\n"},
		{"remote", jsonjoin.Summary{Op: jsonjoin.Interval, Ran: true}, false,
			"beamjoin: stopped; the runner's own UI shows what the job read and wrote\n" +
				"beamjoin: only the command stopped: the job runs on in the runner until it is cancelled or drained there (Dataflow: gcloud dataflow jobs drain JOB_ID --region=REGION)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, stopped(tc.sum, tc.inProcess)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
