package join_test

// This file checks that a pipeline using the joins serializes to the same
// bytes every time it is built (SPEC §8): Dataflow's update check and any
// runner that compares submitted pipelines see one pipeline, not two.

import (
	"bytes"
	"slices"
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
				join.AllowedLateness(time.Second), join.MaxBufferedPerKey(10), join.ProgressHorizon(time.Minute))
		}},
		{"interval_windowed_hot_keys", func(s beam.Scope) {
			in := keyed(s, true)
			join.Interval[string, string, string](s, in, in, join.Between(0, time.Second), join.LeftOuter, join.EmitFinal, join.SplitKeys(0))
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
