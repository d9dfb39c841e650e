package join_test

// This file checks that a pipeline using the joins serializes to the same
// bytes every time it is built (SPEC §8): Dataflow's update check and any
// runner that compares submitted pipelines see one pipeline, not two. It
// also checks, on the serialized pipeline, where the joins' Flattens are.

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"github.com/beamjoin/beamjoin/transforms/join"
	"google.golang.org/protobuf/proto"
)

// marshalPipeline builds a pipeline with build and returns its Runner API
// proto's bytes. The root transforms are sorted first: graphx lists them
// in Go map order (BEAM_NOTES: pipelinex.computeRoots), and each ParDo
// payload is re-encoded deterministically (below); neither order says
// anything about the pipeline.
func marshalPipeline(t *testing.T, build func(s beam.Scope)) []byte {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	build(s)
	edges, _, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	pb, err := graphx.Marshal(edges, &graphx.Options{Environment: &pipepb.Environment{Urn: "beam:env:loopback:v1"}})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(pb.RootTransformIds)
	// graphx encodes each ParDoPayload with proto.Marshal (protox.MustEncode,
	// core/runtime/graphx/translate.go), which writes a map in Go map order:
	// a DoFn with two state specs gets its StateSpecs in either order (the
	// interval join's map-state layout had one). Re-encode the payloads
	// deterministically, as for the roots; that order is the SDK's, and
	// says nothing about the pipeline.
	for _, tr := range pb.GetComponents().GetTransforms() {
		spec := tr.GetSpec()
		if spec.GetUrn() != "beam:transform:pardo:v1" {
			continue
		}
		var pardo pipepb.ParDoPayload
		if err := proto.Unmarshal(spec.GetPayload(), &pardo); err != nil {
			t.Fatal(err)
		}
		canonical, err := proto.MarshalOptions{Deterministic: true}.Marshal(&pardo)
		if err != nil {
			t.Fatal(err)
		}
		spec.Payload = canonical
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPipelineMarshalsIdentically builds each join's pipeline twice and
// compares the serialized protos byte for byte. An interval join once
// drew a random ID into its DoFn's payload at every serialization.
func TestPipelineMarshalsIdentically(t *testing.T) {
	keyed := func(s beam.Scope, windowed bool) beam.PCollection {
		col := beam.ParDo(s, modelKeyed, beam.Create(s, "a", "b"))
		if windowed {
			col = beam.WindowInto(s, window.NewFixedWindows(time.Minute), col)
		}
		return col
	}
	for _, tc := range []struct {
		name  string
		build func(s beam.Scope)
	}{
		{"interval", func(s beam.Scope) {
			in := keyed(s, false)
			join.Interval[string, string, string](s, in, in, join.Between(-time.Second, time.Second), join.FullOuter, join.EmitRetract,
				join.AllowedLateness(time.Second), join.MaxBufferedPerKey(10), join.ProgressHorizon(time.Minute), join.Streaming())
		}},
		{"interval_hot_key_detection", func(s beam.Scope) {
			in := keyed(s, false)
			join.Interval[string, string, string](s, in, in, join.Between(-time.Second, time.Second), join.LeftOuter, join.HotKeyThreshold(100), join.Streaming())
		}},
		{"interval_windowed_hot_keys", func(s beam.Scope) {
			in := keyed(s, true)
			join.Interval[string, string, string](s, in, in, join.Between(0, time.Second), join.LeftOuter, join.EmitFinal, join.SplitKeys(0), join.Streaming())
		}},
		{"interval_bounded", func(s beam.Scope) {
			in := keyed(s, false)
			join.Interval[string, string, string](s, in, in, join.Between(0, time.Second), join.Bounded())
		}},
		{"window", func(s beam.Scope) {
			in := keyed(s, true)
			join.Window[string, string, string](s, in, in, join.LeftOuter)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, second := marshalPipeline(t, tc.build), marshalPipeline(t, tc.build)
			if !bytes.Equal(first, second) {
				t.Errorf("two builds of one pipeline serialize differently (%d and %d bytes)", len(first), len(second))
			}
		})
	}
}

// TestBoundedFlattensGathered checks the shape of the bounded paths: each
// side is gathered before the Flatten, so that a runner that runs a
// Flatten itself (Prism) handles one element per group, side and bundle,
// not every input element. The streaming path keeps its Flatten of the
// encoded sides, under the step name a running pipeline's update matches.
func TestBoundedFlattensGathered(t *testing.T) {
	keyed := func(s beam.Scope) beam.PCollection { return beam.ParDo(s, modelKeyed, beam.Create(s, "a", "b")) }
	for _, tc := range []struct {
		name     string
		build    func(s beam.Scope)
		producer string // what each of the Flatten's inputs must come from
		flatten  string // the Flatten's step name
	}{
		{"interval_bounded", func(s beam.Scope) {
			in := keyed(s)
			join.Interval[string, string, string](s, in, in, join.Between(0, time.Second), join.Bounded())
		}, "bucketGatherFn", "join.Interval/bounded/Flatten"},
		{"asof_bounded", func(s beam.Scope) {
			in := keyed(s)
			join.AsOf[string, string, string](s, in, in, join.Bounded())
		}, "bucketGatherFn", "join.AsOf/bounded/Flatten"}, // one gatherer for both bounded paths, AsOf's with one bucket
		{"interval_streaming", func(s beam.Scope) {
			in := keyed(s)
			join.Interval[string, string, string](s, in, in, join.Between(0, time.Second), join.Streaming())
		}, "encodeFn", "join.Interval/Flatten"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pb pipepb.Pipeline
			if err := proto.Unmarshal(marshalPipeline(t, tc.build), &pb); err != nil {
				t.Fatal(err)
			}
			transforms := pb.GetComponents().GetTransforms()
			producer := map[string]string{} // PCollection ID -> the name of the leaf transform that makes it
			for _, tr := range transforms {
				if len(tr.GetSubtransforms()) > 0 {
					continue
				}
				for _, out := range tr.GetOutputs() {
					producer[out] = tr.GetUniqueName()
				}
			}
			var flattens []string
			for _, tr := range transforms {
				if tr.GetSpec().GetUrn() != "beam:transform:flatten:v1" {
					continue
				}
				if strings.HasPrefix(tr.GetUniqueName(), "join.Interval/hot/") {
					// Hot-key detection's: the records of the per-key
					// DoFn and of the hot keys' buckets.
					for _, in := range tr.GetInputs() {
						if p := producer[in]; !strings.HasSuffix(p, "hotFn") && !strings.HasSuffix(p, "bucketFn") {
							t.Errorf("%s flattens the output of %s, want the hot-key layout's", tr.GetUniqueName(), p)
						}
					}
					continue
				}
				flattens = append(flattens, tr.GetUniqueName())
				if len(tr.GetInputs()) != 2 {
					t.Errorf("%s has %d inputs, want 2", tr.GetUniqueName(), len(tr.GetInputs()))
				}
				for _, in := range tr.GetInputs() {
					if p := producer[in]; !strings.Contains(p, tc.producer) {
						t.Errorf("%s flattens the output of %s, want that of a %s", tr.GetUniqueName(), p, tc.producer)
					}
				}
			}
			if want := []string{tc.flatten}; !slices.Equal(flattens, want) {
				t.Errorf("Flatten steps %q, want %q", flattens, want)
			}
		})
	}
}
