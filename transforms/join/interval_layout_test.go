package join_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join"
)

// intervalSuite is every interval join test that runs a pipeline.
var intervalSuite = []struct {
	name string
	test func(t *testing.T, layout ...join.Option)
}{
	{"BoundShapes", intervalBoundShapes},
	{"TypesAndModes", intervalTypesAndModes},
	{"Late", intervalLate},
	{"ForgetsProgressAfterASpan", intervalForgetsProgressAfterASpan},
	{"StateBounded", intervalStateBounded},
	{"MaxBufferedPerKey", intervalMaxBufferedPerKey},
	{"FinalNotLateDownstream", intervalFinalNotLateDownstream},
	{"StructValuesIntKeys", intervalStructValuesIntKeys},
	{"LateAfterForget", intervalLateAfterForget},
}

// bufferLayout names the layout options a suite test runs under.
type bufferLayout struct {
	name   string
	layout []join.Option
}

// bufferLayouts are the layouts of a key's buffer every suite test runs
// under (see TestInterval).
var bufferLayouts = []bufferLayout{
	{"bag", nil},
	{"buckets", []join.Option{join.ForceLayout(true, 0, 0)}},
	{"buckets_after_bag", []join.Option{join.ForceLayout(true, 2, 3)}},
}

// underLayout is opts followed by the layout options a suite test runs
// under.
func underLayout(layout []join.Option, opts ...join.Option) []join.Option {
	return append(opts, layout...)
}

// TestInterval runs the interval suite under each layout of a key's
// buffer: the default bag ("bag"), every element moved into its time bucket
// as it arrives ("buckets"), and keys moving into buckets above 2 elements
// with bag entries moved into buckets above 3 ("buckets_after_bag"), which
// also folds keys back into the bag. The suite's tests assert the same
// results under every layout.
func TestInterval(t *testing.T) {
	for _, l := range bufferLayouts {
		t.Run(l.name, func(t *testing.T) {
			for _, tc := range intervalSuite {
				t.Run(tc.name, func(t *testing.T) { tc.test(t, l.layout...) })
			}
		})
	}
}

// TestIntervalBucketBoundaries runs a key through many buckets under
// eviction, in every layout and with and without the bundle cache, against
// the matching core played by hand: under EmitRetract a retraction looks
// for the partners of a partner, and under EmitFinal an evicted element is
// reported unmatched only if it never matched, across bucket boundaries.
// Times rise with arrival and the allowed lateness keeps cleanup away until
// the end, so the core's arrival order is the pipeline's.
func TestIntervalBucketBoundaries(t *testing.T) {
	const maxBuffered = 20
	layouts := []struct {
		name                  string
		force, noCache        bool
		bucketAbove, logLimit int
		opts                  []join.Option
	}{
		{"bag", false, false, 0, 0, nil},
		{"buckets", true, false, 0, 0, nil},
		{"buckets_after_bag", true, false, 3, 2, nil},
		{"buckets_after_bag_no_cache", true, true, 3, 2, nil},
		{"HotKeyBuckets(5)", false, false, 0, 0, []join.Option{join.HotKeyBuckets(5)}},
	}
	for _, emit := range []join.Emit{join.EmitRetract, join.EmitFinal} {
		rules := match.Rules{Bounds: match.Between(-1500*time.Millisecond, 2500*time.Millisecond), Type: match.FullOuter, Emit: match.Emit(emit), Lateness: time.Hour}
		script, want := boundaryScenario(rules, maxBuffered)
		for _, lt := range layouts {
			t.Run(emit.String()+"/"+lt.name, func(t *testing.T) {
				opts := lt.opts
				if lt.force {
					opts = append(opts, join.ForceLayout(true, lt.bucketAbove, lt.logLimit))
				}
				if lt.noCache {
					opts = append(opts, join.NoBundleCache())
				}
				p, s := beam.NewPipelineWithRoot()
				left, right := play(s, onTime(script...))
				joined := join.Interval[string, string, string](s, left, right, append([]join.Option{
					join.Between(-1500*time.Millisecond, 2500*time.Millisecond), join.FullOuter, emit,
					join.AllowedLateness(time.Hour), join.MaxBufferedPerKey(maxBuffered), join.CleanupEvery(time.Millisecond)}, opts...)...)
				res, late := joined.Records, joined.Late
				passert.Equals(s, beam.ParDo(s, formatResult, res), toAny(want)...)
				passert.Empty(s, late)
				checkAccounting(t, ptest.RunAndValidate(t, p))
			})
		}
	}
}

// boundaryScenario is 150 elements of one key, a random side each, about
// 700 ms apart, and the records the matching core gives for them, evicting
// above maxBuffered and cleaning everything up at the end.
func boundaryScenario(rules match.Rules, maxBuffered int) (script []event, want []string) {
	rng := rand.New(rand.NewPCG(1, 2))
	record := func(kind join.Kind, x, y match.Entry[string], at int64) string {
		l, r := &x, &y
		if x.Side == match.Right {
			l, r = r, l
		}
		side := func(e *match.Entry[string]) string {
			if e.Value == "" {
				return "-"
			}
			return fmt.Sprintf("%s@%d", e.Value, e.Time)
		}
		return fmt.Sprintf("%v k %s %s t=%d", kind, side(l), side(r), at)
	}
	var none match.Entry[string]
	removed := func(xs []match.Entry[string]) {
		for _, x := range xs {
			if rules.UnmatchedOnRemoval(x.Side, x.Matched) {
				want = append(want, record(join.KindUnmatched, x, none, x.Time))
			}
		}
	}
	b := match.NewBuffer[string]()
	for i := range 150 {
		e := match.Entry[string]{Side: match.Side(rng.IntN(2)), Time: int64(i)*700 + rng.Int64N(300), Value: fmt.Sprint("v", i)}
		if e.Side == match.Left {
			script = append(script, l(e.Time, "k", e.Value))
		} else {
			script = append(script, r(e.Time, "k", e.Value))
		}
		a := b.Add(rules, e)
		for _, x := range a.Retracted {
			want = append(want, record(join.KindRetract, x, none, x.Time))
		}
		for _, x := range a.Partners {
			want = append(want, record(join.KindPair, e, x, max(e.Time, x.Time)))
		}
		if a.Unmatched {
			want = append(want, record(join.KindUnmatched, e, none, e.Time))
		}
		removed(b.Evict(rules, maxBuffered))
	}
	removed(b.Expire(rules, 1<<62))
	return script, want
}

// TestHotKeyBucketsMisuse checks the option's construction errors.
func TestHotKeyBucketsMisuse(t *testing.T) {
	tests := []struct {
		name string
		try  func(s beam.Scope, left, right beam.PCollection) error
		want string
	}{
		{"negative", func(s beam.Scope, left, right beam.PCollection) error {
			_, err := join.TryInterval[string, string, string](s, left, right, join.Between(0, time.Second), join.HotKeyBuckets(-1))
			return err
		}, "beamjoin: join.Interval: HotKeyBuckets(-1) is negative"},
		{"window_join", func(s beam.Scope, left, right beam.PCollection) error {
			_, err := join.TryWindow[string, string, string](s, left, right, join.HotKeyBuckets(10))
			return err
		}, "beamjoin: join.Window does not take HotKeyBuckets"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			left, right := play(s, []event{l(1, "k", "v")})
			err := tc.try(s, left, right)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}
