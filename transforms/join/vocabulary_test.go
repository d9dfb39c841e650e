package join

import (
	"encoding"
	"testing"

	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/interval"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
)

// TestWordsText reads back what each word writes, and checks the errors for
// text that names nothing.
func TestWordsText(t *testing.T) {
	roundTrip(t, Left, Right)
	roundTrip(t, Inner, LeftOuter, RightOuter, FullOuter)
	roundTrip(t, EmitImmediate, EmitFinal, EmitRetract)
	errors := []struct {
		err  error
		want string
	}{
		{new(Type).UnmarshalText([]byte("outer")), `beamjoin: unknown join type "outer" (want inner, left, right or full)`},
		{new(Emit).UnmarshalText([]byte("later")), `beamjoin: unknown emission mode "later" (want immediate, final or retract)`},
		{new(Side).UnmarshalText([]byte("middle")), `beamjoin: unknown side "middle" (want left or right)`},
		{second(Type(9).MarshalText()), "beamjoin: unknown join type Type(9)"},
	}
	for _, e := range errors {
		if e.err == nil || e.err.Error() != e.want {
			t.Errorf("error = %v, want %q", e.err, e.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// roundTrip checks that each value's text is its String form and reads back
// as the value.
func roundTrip[T interface {
	comparable
	encoding.TextMarshaler
	String() string
}, P interface {
	*T
	encoding.TextUnmarshaler
}](t *testing.T, values ...T) {
	t.Helper()
	for _, v := range values {
		text, err := v.MarshalText()
		if err != nil || string(text) != v.String() {
			t.Errorf("%v.MarshalText() = %q, %v; want %q", v, text, err, v.String())
		}
		var got T
		if err := P(&got).UnmarshalText(text); err != nil || got != v {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", text, got, err, v)
		}
	}
}

// TestCoreWordsAgree checks that the plain conversions to the matching
// core's words keep their meaning.
func TestCoreWordsAgree(t *testing.T) {
	for _, c := range []struct{ got, want any }{
		{Left.core(), match.Left}, {Right.core(), match.Right},
		{Inner.core(), match.Inner}, {LeftOuter.core(), match.LeftOuter},
		{RightOuter.core(), match.RightOuter}, {FullOuter.core(), match.FullOuter},
		{EmitImmediate.core(), match.Immediate}, {EmitFinal.core(), match.Final}, {EmitRetract.core(), match.Retract},
		{sideOf(match.Right), Right},
	} {
		if c.got != c.want {
			t.Errorf("core word %v, want %v", c.got, c.want)
		}
	}
}

// TestEnginesAgree checks the values that package join and its engines
// each name: the raw records' kinds and outcomes are decoded by number
// into Kind and Outcome, and the defaults and the metrics namespace are
// the engines'.
func TestEnginesAgree(t *testing.T) {
	for _, c := range []struct{ got, want any }{
		{KindPair, Kind(raw.Pair)}, {KindUnmatched, Kind(raw.Unmatched)}, {KindRetract, Kind(raw.Retract)},
		{OutcomeMatched, Outcome(raw.OutcomeOf(match.Matched))}, {OutcomeUnmatched, Outcome(raw.OutcomeOf(match.Unmatched))},
		{OutcomeExpired, Outcome(raw.OutcomeOf(match.Expired))}, {OutcomeEvicted, Outcome(raw.OutcomeOf(match.Evicted))},
		{OutcomeLate, Outcome(raw.OutcomeOf(match.Late))}, {OutcomeGrouped, Outcome(raw.Grouped)},
		{int64(DefaultBundleCacheBytes), int64(interval.DefaultCacheBytes)},
		{Namespace, raw.Namespace},
	} {
		if c.got != c.want {
			t.Errorf("join's %v, the engines' %v", c.got, c.want)
		}
	}
}
