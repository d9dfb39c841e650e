// This file holds the reproduction of the Go SDK v2.77 defect that keeps
// Read from acknowledging in bundle finalization callbacks.

package pubsubio_test

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/google/go-cmp/cmp"
)

// finalizeBundles is how many bundles the finalizing DoFn runs, one
// position each.
const finalizeBundles = 6

// finalizeLog is what the finalizing DoFn saw, by test key.
var finalizeLog = struct {
	sync.Mutex
	bundles   map[string][]finalizeBundle
	finalized map[string][]int64
}{bundles: map[string][]finalizeBundle{}, finalized: map[string][]int64{}}

// finalizeBundle is one bundle of the finalizing DoFn: the position it
// claimed, the DoFn instance that ran it, and how many bundles that
// instance had run before.
type finalizeBundle struct {
	Pos, Instance, Nth int64
}

var finalizeInstances atomic.Int64

// finalizeFn is a splittable DoFn over [0, finalizeBundles) that claims
// one position per bundle, checkpoints after it, and registers a bundle
// finalization callback in every bundle that records the position.
type finalizeFn struct {
	Key string

	instance, bundles int64
}

func (f *finalizeFn) Setup() { f.instance = finalizeInstances.Add(1) }

func (f *finalizeFn) CreateInitialRestriction(_ []byte) offsetrange.Restriction {
	return offsetrange.Restriction{Start: 0, End: finalizeBundles}
}

func (f *finalizeFn) SplitRestriction(_ []byte, r offsetrange.Restriction) []offsetrange.Restriction {
	return []offsetrange.Restriction{r}
}

func (f *finalizeFn) RestrictionSize(_ []byte, r offsetrange.Restriction) float64 { return r.Size() }

func (f *finalizeFn) CreateTracker(r offsetrange.Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(offsetrange.NewTracker(r))
}

func (f *finalizeFn) ProcessElement(bf beam.BundleFinalization, rt *sdf.LockRTracker, _ []byte, emit func(int64)) sdf.ProcessContinuation {
	pos := rt.GetRestriction().(offsetrange.Restriction).Start
	if !rt.TryClaim(pos) {
		return sdf.StopProcessing()
	}
	finalizeLog.Lock()
	finalizeLog.bundles[f.Key] = append(finalizeLog.bundles[f.Key], finalizeBundle{Pos: pos, Instance: f.instance, Nth: f.bundles})
	finalizeLog.Unlock()
	f.bundles++
	key := f.Key
	bf.RegisterCallback(time.Minute, func() error {
		finalizeLog.Lock()
		defer finalizeLog.Unlock()
		finalizeLog.finalized[key] = append(finalizeLog.finalized[key], pos)
		return nil
	})
	emit(pos)
	return sdf.ResumeProcessingIn(50 * time.Millisecond)
}

func init() {
	register.DoFn4x1[beam.BundleFinalization, *sdf.LockRTracker, []byte, func(int64), sdf.ProcessContinuation](&finalizeFn{})
	register.Emitter1[int64]()
	beam.RegisterType(reflect.TypeOf((*offsetrange.Restriction)(nil)).Elem())
}

// The Go SDK v2.77 runs the bundle finalization callbacks of a DoFn
// instance's first bundle only. exec.NewPlan attaches one finalizer to the
// plan and its ParDos; Plan.Finalize runs the plan's callbacks and gives
// the plan a new finalizer, while the ParDos keep the old one. A reused
// plan's later bundles register their callbacks on the old finalizer,
// which nothing runs again, and the harness, asking the new one, tells the
// runner they need no finalization. Prism sends FinalizeBundle anyway and
// logs the harness's "couldn't find plan in finalizing map".
//
// This is why Read does not acknowledge in finalization callbacks. When
// the test fails because every bundle was finalized, the SDK is fixed, and
// Read can move its acknowledgements there.
func TestSDKFinalizesFirstBundleOfEachDoFnInstanceOnly(t *testing.T) {
	key := testKey(t)
	p, s := beam.NewPipelineWithRoot()
	out := beam.ParDo(s, &finalizeFn{Key: key}, beam.Impulse(s))
	drain(s, out)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	finalizeLog.Lock()
	bundles := finalizeLog.bundles[key]
	finalized := map[int64]bool{}
	for _, pos := range finalizeLog.finalized[key] {
		finalized[pos] = true
	}
	finalizeLog.Unlock()
	if len(bundles) != finalizeBundles {
		t.Fatalf("%d bundles ran, want %d: %v", len(bundles), finalizeBundles, bundles)
	}
	var got, want []string
	reused := false
	for _, b := range bundles {
		got = append(got, fmt.Sprintf("bundle %d: finalized %v", b.Pos, finalized[b.Pos]))
		want = append(want, fmt.Sprintf("bundle %d: finalized %v", b.Pos, b.Nth == 0))
		reused = reused || b.Nth > 0
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("finalized bundles, want those that were the first of their DoFn instance (-want +got):\n%s\nbundles: %+v", diff, bundles)
	}
	if !reused {
		t.Errorf("no DoFn instance ran a second bundle, so the test shows nothing: %+v", bundles)
	}
}
