package e2e

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// modelMessage is the runner's log message that holds the portable
// pipeline a Dataflow dry run translated (the Go SDK's Dataflow runner logs
// it, as text, before the job).
var modelMessage = regexp.MustCompile(`(?m)^time=\S+ level=INFO .*?msg=("components:(?:[^"\\]|\\.)*")`)

// TestE2EDryRunStateful translates the streaming interval join (files
// replayed with --watermark-lag) for Dataflow without credentials or
// network, and checks the pipeline Dataflow would run, not just the job
// envelope: the stateful DoFn of join.Interval is in it with its state and
// its event-time timers, and the pipeline declares that it needs stateful
// processing. The job is a streaming job. The Go SDK logs the portable
// pipeline at --log-level debug (the job on standard output only points
// to where it would have been staged), so the test reads it there.
func TestE2EDryRunStateful(t *testing.T) {
	t.Parallel()
	r := mustRun(t, "", append([]string{"interval"}, small(t, "--lower", "0", "--upper", "5m", "--watermark-lag", "0",
		"--runner=dataflow", "--dry_run", "--project=p", "--region=us-central1",
		"--staging_location=gs://b/staging", "--temp_location=gs://b/temp", "--out=gs://b/out.jsonl", "--log-level", "debug")...)...)
	var job struct{ Type string }
	if err := json.Unmarshal([]byte(r.stdout), &job); err != nil || job.Type != "JOB_TYPE_STREAMING" {
		t.Errorf("standard output is not a translated streaming job (%v, type %q): %.300s", err, job.Type, r.stdout)
	}

	m := modelMessage.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no translated pipeline in the log at --log-level debug:\n%.2000s", r.stderr)
	}
	text, err := strconv.Unquote(m[1])
	if err != nil {
		t.Fatalf("the logged pipeline is not a quoted string: %v", err)
	}
	var p pipepb.Pipeline
	if err := prototext.Unmarshal([]byte(text), &p); err != nil {
		t.Fatalf("the logged pipeline does not parse: %v", err)
	}
	if !slices.Contains(p.GetRequirements(), "beam:requirement:pardo:stateful:v1") {
		t.Errorf("the pipeline does not require stateful processing: requirements %v", p.GetRequirements())
	}

	var found []string
	for _, tr := range p.GetComponents().GetTransforms() {
		if tr.GetSpec().GetUrn() != "beam:transform:pardo:v1" {
			continue
		}
		var pd pipepb.ParDoPayload
		if err := proto.Unmarshal(tr.GetSpec().GetPayload(), &pd); err != nil {
			t.Fatalf("%s: ParDo payload: %v", tr.GetUniqueName(), err)
		}
		if len(pd.GetStateSpecs()) == 0 && len(pd.GetTimerFamilySpecs()) == 0 {
			continue
		}
		found = append(found, tr.GetUniqueName())
		if !slices.ContainsFunc(intervalSteps, func(step string) bool { return strings.HasSuffix(tr.GetUniqueName(), step) }) {
			continue
		}
		if len(pd.GetStateSpecs()) == 0 {
			t.Errorf("%s has no state", tr.GetUniqueName())
		}
		for id, s := range pd.GetStateSpecs() {
			if s.GetProtocol().GetUrn() == "" {
				t.Errorf("%s: state %s has no protocol", tr.GetUniqueName(), id)
			}
		}
		if len(pd.GetTimerFamilySpecs()) == 0 {
			t.Errorf("%s has no timers", tr.GetUniqueName())
		}
		t.Logf("%s: %d states, timer families %v", tr.GetUniqueName(), len(pd.GetStateSpecs()), slices.Sorted(maps.Keys(pd.GetTimerFamilySpecs())))
		for id, tf := range pd.GetTimerFamilySpecs() {
			if tf.GetTimeDomain() != pipepb.TimeDomain_EVENT_TIME {
				t.Errorf("%s: timer family %s is in time domain %v, want event time", tr.GetUniqueName(), id, tf.GetTimeDomain())
			}
		}
		// A stateful DoFn's input is keyed: a KV coder.
		in := p.GetComponents().GetPcollections()[tr.GetInputs()[firstKey(tr.GetInputs())]]
		if c := p.GetComponents().GetCoders()[in.GetCoderId()]; c.GetSpec().GetUrn() != "beam:coder:kv:v1" {
			t.Errorf("%s: input coder %s, want a KV coder", tr.GetUniqueName(), c.GetSpec().GetUrn())
		}
	}
	for _, step := range intervalSteps {
		if !slices.ContainsFunc(found, func(n string) bool { return strings.HasSuffix(n, step) }) {
			t.Errorf("no stateful %s in the translated pipeline; stateful ParDos: %v", step, found)
		}
	}
}

// intervalSteps are the stateful steps of the interval join's default
// layout: the per-key DoFn with hot-key detection, and the buckets a hot
// key's later elements go to.
var intervalSteps = []string{"/join.Interval/interval.hotFn", "/join.Interval/hot-buckets/interval.bucketFn"}

func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}
