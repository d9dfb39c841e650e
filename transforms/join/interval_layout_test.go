package join_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/google/go-cmp/cmp"
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
	{"split", []join.Option{join.SplitKeys(0)}},
	{"split_narrow", []join.Option{join.SplitKeys(700 * time.Millisecond)}},
	{"hot", []join.Option{join.HotKeyThreshold(2)}},
}

// split reports whether layout splits keys over buckets (SplitKeys, or a
// hot-key threshold every test's keys reach), which does not take
// MaxBufferedPerKey.
func split(layout []join.Option) bool { return len(layout) > 0 }

// underLayout is opts followed by the layout options a suite test runs
// under.
func underLayout(layout []join.Option, opts ...join.Option) []join.Option {
	return append(opts, layout...)
}

// TestInterval runs the interval suite under each layout of a key's
// buffer: the default bag ("bag"), the split layout with its default
// bucket width ("split") and with buckets of 700 ms, narrower than most
// tests' bounds, so that an element goes to many buckets
// ("split_narrow"), and the default layout with keys that go hot at two
// buffered elements ("hot"). The suite's tests assert the same results
// under every layout.
func TestInterval(t *testing.T) {
	for _, l := range bufferLayouts {
		t.Run(l.name, func(t *testing.T) {
			for _, tc := range intervalSuite {
				t.Run(tc.name, func(t *testing.T) { tc.test(t, l.layout...) })
			}
		})
	}
}

// TestIntervalBucketBoundaries runs a key through many buckets, in every
// layout and with and without the bundle cache, against the matching core
// played by hand: under EmitRetract a retraction looks for the partners of
// a partner, and under EmitFinal an element is reported unmatched only if
// it never matched, across bucket boundaries; in the default layout also
// under eviction by MaxBufferedPerKey. Times rise with arrival and the
// allowed lateness keeps cleanup away until the end, so the core's
// arrival order is the pipeline's.
func TestIntervalBucketBoundaries(t *testing.T) {
	layouts := []struct {
		name    string
		cap     int
		noCache bool
		opts    []join.Option
	}{
		{"bag_capped", 20, false, nil},
		{"bag_capped_no_cache", 20, true, nil},
		{"bag", 0, false, nil},
		{"split", 0, false, []join.Option{join.SplitKeys(0)}},
		{"split_narrow", 0, false, []join.Option{join.SplitKeys(700 * time.Millisecond)}},
		{"split_narrow_no_cache", 0, true, []join.Option{join.SplitKeys(700 * time.Millisecond)}},
	}
	for _, emit := range []join.Emit{join.EmitRetract, join.EmitFinal} {
		rules := match.Rules{Bounds: match.Between(-1500*time.Millisecond, 2500*time.Millisecond), Type: match.FullOuter, Emit: match.Emit(emit), Lateness: time.Hour}
		for _, lt := range layouts {
			script, want := boundaryScenario(rules, lt.cap)
			t.Run(emit.String()+"/"+lt.name, func(t *testing.T) {
				opts := append([]join.Option{join.Between(-1500*time.Millisecond, 2500*time.Millisecond), join.FullOuter, emit,
					join.AllowedLateness(time.Hour), join.CleanupEvery(time.Millisecond)}, lt.opts...)
				if lt.cap > 0 {
					opts = append(opts, join.MaxBufferedPerKey(lt.cap))
				}
				if lt.noCache {
					opts = append(opts, join.NoBundleCache())
				}
				p, s := beam.NewPipelineWithRoot()
				left, right := play(s, onTime(script...))
				joined := join.Interval[string, string, string](s, left, right, append(opts, join.TrackFates())...)
				res, late := joined.Records, joined.Late
				passert.Equals(s, beam.ParDo(s, formatResult, res), toAny(want)...)
				passert.Empty(s, late)
				fates := gather(s, beam.ParDo(s, describeFate, joined.Fates))
				pr := ptest.RunAndValidate(t, p)
				if len(lt.opts) == 0 {
					// Prism's counters can lose increments when bundles
					// report at once; the split layout's many small
					// bundles make that likely, so it is held to the
					// fates, which are records.
					checkAccounting(t, pr)
				}
				checkOneFateEach(t, script, fates())
			})
		}
	}
}

// boundaryScenario is 150 elements of one key, a random side each, about
// 700 ms apart, and the records the matching core gives for them, evicting
// above maxBuffered (if positive) and cleaning everything up at the end.
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
		if maxBuffered > 0 {
			removed(b.Evict(rules, maxBuffered))
		}
	}
	removed(b.Expire(rules, 1<<62))
	return script, want
}

// TestSplitKeysMisuse checks the construction errors of SplitKeys and of
// HotKeyBuckets, which selects the same layout, of UniqueLeft, which only
// the bag layout takes, and of HotKeyThreshold.
func TestSplitKeysMisuse(t *testing.T) {
	tests := []struct {
		name string
		opts []join.Option
		want string
	}{
		{"negative_width", []join.Option{join.SplitKeys(-time.Second)},
			"beamjoin: join.Interval: SplitKeys(-1s) must be zero or a positive whole number of milliseconds"},
		{"sub_millisecond_width", []join.Option{join.SplitKeys(1500 * time.Microsecond)},
			"beamjoin: join.Interval: SplitKeys(1.5ms) must be zero or a positive whole number of milliseconds"},
		{"with_a_cap", []join.Option{join.SplitKeys(0), join.MaxBufferedPerKey(10)},
			"beamjoin: join.Interval: MaxBufferedPerKey(10) cannot be combined with SplitKeys(0s): the cap counts a key's elements across its buckets, which no one of them sees"},
		{"hot_key_buckets_negative", []join.Option{join.HotKeyBuckets(-1)},
			"beamjoin: join.Interval: HotKeyBuckets(-1) is negative"},
		{"hot_key_buckets_with_a_cap", []join.Option{join.HotKeyBuckets(8), join.MaxBufferedPerKey(10)},
			"beamjoin: join.Interval: MaxBufferedPerKey(10) cannot be combined with HotKeyBuckets(8): the cap counts a key's elements across its buckets, which no one of them sees"},
		{"unique_left_split", []join.Option{join.UniqueLeft(), join.SplitKeys(0)},
			"beamjoin: join.Interval: UniqueLeft cannot be combined with SplitKeys(0s): a bucket holds a key's left element only for its own time range"},
		{"hot_key_threshold_zero", []join.Option{join.HotKeyThreshold(0)},
			"beamjoin: join.Interval: HotKeyThreshold(0) must be positive (NoHotKeyDetection turns detection off)"},
		{"hot_key_threshold_negative", []join.Option{join.HotKeyThreshold(-3)},
			"beamjoin: join.Interval: HotKeyThreshold(-3) must be positive (NoHotKeyDetection turns detection off)"},
		{"hot_key_threshold_split", []join.Option{join.HotKeyThreshold(10), join.SplitKeys(0)},
			"beamjoin: join.Interval: HotKeyThreshold(10) cannot be combined with SplitKeys(0s), which splits every key already"},
		{"hot_key_threshold_with_a_cap", []join.Option{join.HotKeyThreshold(10), join.MaxBufferedPerKey(10)},
			"beamjoin: join.Interval: HotKeyThreshold(10) cannot be combined with MaxBufferedPerKey(10), which counts a key's elements in one place"},
		{"hot_key_threshold_unique_left", []join.Option{join.HotKeyThreshold(10), join.UniqueLeft()},
			"beamjoin: join.Interval: HotKeyThreshold(10) cannot be combined with UniqueLeft, which needs a key's left element in one place"},
		{"unique_left_with_a_cap", []join.Option{join.UniqueLeft(), join.MaxBufferedPerKey(10)},
			"beamjoin: join.Interval: UniqueLeft cannot be combined with MaxBufferedPerKey(10): the cap counts buffered elements, and UniqueLeft buffers fewer, so the cap would evict other ones"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			left, right := play(s, []event{l(1, "k", "v")})
			_, err := join.TryInterval[string, string, string](s, left, right, append([]join.Option{join.Between(0, time.Second)}, tc.opts...)...)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
	_, s := beam.NewPipelineWithRoot()
	left, right := play(s, []event{l(1, "k", "v")})
	if _, err := join.TryWindow[string, string, string](s, left, right, join.SplitKeys(0)); err == nil || err.Error() != "beamjoin: join.Window does not take SplitKeys" {
		t.Errorf("join.Window with SplitKeys: error = %v", err)
	}
	if _, err := join.TryWindow[string, string, string](s, left, right, join.UniqueLeft()); err == nil || err.Error() != "beamjoin: join.Window does not take UniqueLeft" {
		t.Errorf("join.Window with UniqueLeft: error = %v", err)
	}
}

// checkOneFateEach checks that each element of script (all of distinct
// times) has exactly one fate among fates (describeFate's lines).
func checkOneFateEach(t *testing.T, script []event, fates []string) {
	t.Helper()
	var want, got []string
	for _, e := range script {
		if !e.watermark {
			want = append(want, fmt.Sprintf("%s %s %s", e.side, e.key, since(time.UnixMilli(e.time))))
		}
	}
	for _, f := range fates {
		fs := strings.Fields(f)
		got = append(got, strings.Join(fs[:len(fs)-1], " "))
	}
	if diff := cmp.Diff(sortedList(want), sortedList(got)); diff != "" {
		t.Errorf("fates, one per element (-want +got):\n%s", diff)
	}
}
