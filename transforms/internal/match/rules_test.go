package match

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const sec = int64(time.Second / time.Millisecond)

// boundShapes are the bound shapes every layer of beamjoin is tested with.
var boundShapes = []struct {
	name   string
	bounds Bounds
	lo, hi int64 // inclusive range of ts(r) - ts(l) in ms
}{
	{"negative_negative_inclusive", Bounds{Lower: -10 * time.Second, Upper: -2 * time.Second}, -10 * sec, -2 * sec},
	{"negative_negative_exclusive", Bounds{Lower: -10 * time.Second, Upper: -2 * time.Second, LowerExclusive: true, UpperExclusive: true}, -10*sec + 1, -2*sec - 1},
	{"negative_positive_inclusive", Bounds{Lower: -5 * time.Second, Upper: 5 * time.Second}, -5 * sec, 5 * sec},
	{"negative_positive_exclusive_lower", Bounds{Lower: -5 * time.Second, Upper: 5 * time.Second, LowerExclusive: true}, -5*sec + 1, 5 * sec},
	{"negative_positive_exclusive_upper", Bounds{Lower: -5 * time.Second, Upper: 5 * time.Second, UpperExclusive: true}, -5 * sec, 5*sec - 1},
	{"positive_positive_inclusive", Bounds{Lower: 2 * time.Second, Upper: 10 * time.Second}, 2 * sec, 10 * sec},
	{"positive_positive_exclusive", Bounds{Lower: 2 * time.Second, Upper: 10 * time.Second, LowerExclusive: true, UpperExclusive: true}, 2*sec + 1, 10*sec - 1},
	{"zero_width_at_zero", Bounds{}, 0, 0},
	{"zero_width_at_offset", Bounds{Lower: 3 * time.Second, Upper: 3 * time.Second}, 3 * sec, 3 * sec},
	{"one_ms_after_exclusivity", Bounds{Lower: 0, Upper: 2 * time.Millisecond, LowerExclusive: true, UpperExclusive: true}, 1, 1},
}

func TestBoundsMillisAndMatches(t *testing.T) {
	for _, tc := range boundShapes {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.bounds.Validate(); err != nil {
				t.Fatalf("Validate() = %v, want nil", err)
			}
			lo, hi := tc.bounds.Millis()
			if lo != tc.lo || hi != tc.hi {
				t.Errorf("Millis() = [%d, %d], want [%d, %d]", lo, hi, tc.lo, tc.hi)
			}
			r := Rules{Bounds: tc.bounds}
			// Probe just outside, on and just inside each end, from a left
			// element at 100 s.
			const left = 100 * sec
			var got, want []int64
			for _, d := range []int64{tc.lo - 1, tc.lo, tc.lo + 1, tc.hi - 1, tc.hi, tc.hi + 1} {
				if r.Matches(left, left+d) {
					got = append(got, d)
				}
				if tc.lo <= d && d <= tc.hi {
					want = append(want, d)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("offsets that match (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBoundsValidateErrors(t *testing.T) {
	tests := []struct {
		name   string
		bounds Bounds
		want   string
	}{
		{"lower_above_upper", Between(10*time.Second, -5*time.Second),
			"beamjoin: lower bound 10s is greater than upper bound -5s"},
		{"empty_after_exclusivity_zero", Bounds{LowerExclusive: true, UpperExclusive: true},
			"beamjoin: bounds (0s, 0s) match nothing: the interval is empty once its exclusive ends are removed"},
		{"empty_after_exclusivity_one_ms", Bounds{Upper: time.Millisecond, UpperExclusive: true, LowerExclusive: true},
			"beamjoin: bounds (0s, 1ms) match nothing: the interval is empty once its exclusive ends are removed"},
		{"empty_lower_exclusive_zero_width", Bounds{Lower: time.Second, Upper: time.Second, LowerExclusive: true},
			"beamjoin: bounds (1s, 1s] match nothing: the interval is empty once its exclusive ends are removed"},
		{"sub_millisecond", Between(0, 1500*time.Microsecond),
			"beamjoin: bounds [0s, 1.5ms] must be whole milliseconds, the precision of event time"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.bounds.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tc.want)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRulesValidateErrors(t *testing.T) {
	tests := []struct {
		name  string
		rules Rules
		want  string
	}{
		{"negative_lateness", Rules{Lateness: -time.Second}, "beamjoin: allowed lateness -1s is negative"},
		{"sub_millisecond_lateness", Rules{Lateness: time.Microsecond}, "beamjoin: allowed lateness 1µs must be whole milliseconds"},
		{"bad_bounds", Rules{Bounds: Between(time.Second, 0)}, "beamjoin: lower bound 1s is greater than upper bound 0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rules.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tc.want)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpiry(t *testing.T) {
	tests := []struct {
		name     string
		bounds   Bounds
		lateness time.Duration
		side     Side
		ts       int64
		want     int64
	}{
		{"left_positive_upper", Between(-5*time.Second, 10*time.Second), 0, Left, 100 * sec, 110*sec + 1},
		{"right_negative_lower", Between(-5*time.Second, 10*time.Second), 0, Right, 100 * sec, 105*sec + 1},
		{"left_negative_upper_waits_for_nothing", Between(-10*time.Second, -2*time.Second), 0, Left, 100 * sec, 100*sec + 1},
		{"right_of_negative_bounds", Between(-10*time.Second, -2*time.Second), 0, Right, 100 * sec, 110*sec + 1},
		{"left_of_positive_bounds", Between(2*time.Second, 10*time.Second), 0, Left, 100 * sec, 110*sec + 1},
		{"right_positive_lower_waits_for_nothing", Between(2*time.Second, 10*time.Second), 0, Right, 100 * sec, 100*sec + 1},
		{"exclusive_upper_one_ms_sooner", Bounds{Lower: 0, Upper: 10 * time.Second, UpperExclusive: true}, 0, Left, 100 * sec, 110 * sec},
		{"lateness_added", Between(-5*time.Second, 10*time.Second), 3 * time.Second, Left, 100 * sec, 113*sec + 1},
		{"zero_width", Bounds{}, 0, Right, 7, 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Rules{Bounds: tc.bounds, Lateness: tc.lateness}
			if got := r.Expiry(tc.side, tc.ts); got != tc.want {
				t.Errorf("Expiry(%v, %d) = %d, want %d", tc.side, tc.ts, got, tc.want)
			}
		})
	}
}

// TestExpiryNeverLosesAPair checks, for every bound shape, the property the
// cleanup and lateness rules exist for: once cleanup at time p has removed
// an element, every element that could have matched it is late at p, and no
// element at or after p (on time for a watermark at p) is late.
func TestExpiryNeverLosesAPair(t *testing.T) {
	for _, tc := range boundShapes {
		for _, lateness := range []time.Duration{0, 2 * time.Second} {
			r := Rules{Bounds: tc.bounds, Lateness: lateness}
			for _, s := range []Side{Left, Right} {
				const ts = 50 * sec
				p := r.Expiry(s, ts) // cleanup of the element at ts runs at p
				from, to := r.PartnerRange(s, ts)
				for _, pt := range []int64{from, (from + to) / 2, to} {
					if !r.IsLate(s.Other(), pt, p) {
						t.Errorf("%s lateness %v: %v partner at %d of %v element at %d not late at progress %d", tc.name, lateness, s.Other(), pt, s, ts, p)
					}
				}
				for _, on := range []int64{p - lateness.Milliseconds(), p + 1} {
					if r.IsLate(s, on, p) || r.IsLate(s.Other(), on, p) {
						t.Errorf("%s lateness %v: element at %d late at progress %d though not behind the watermark by more than the lateness", tc.name, lateness, on, p)
					}
				}
			}
		}
	}
}

func TestIsLate(t *testing.T) {
	r := Rules{Bounds: Between(-5*time.Second, 10*time.Second)}
	tests := []struct {
		name     string
		side     Side
		ts       int64
		progress int64
		want     bool
	}{
		{"no_progress_never_late", Right, -1000 * sec, NoProgress, false},
		// A right element at 20 s has left partners from 10 s (expiry 20s+1ms).
		{"right_partner_expired", Right, 20 * sec, 20*sec + 1, true},
		{"right_partner_not_yet_expired", Right, 20 * sec, 20 * sec, false},
		// A left element at 20 s has right partners from 15 s (expiry 20s+1ms).
		{"left_partner_expired", Left, 20 * sec, 20*sec + 1, true},
		{"left_partner_not_yet_expired", Left, 20 * sec, 20 * sec, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.IsLate(tc.side, tc.ts, tc.progress); got != tc.want {
				t.Errorf("IsLate(%v, %d, %d) = %v, want %v", tc.side, tc.ts, tc.progress, got, tc.want)
			}
		})
	}
}

// TestEmissionDecisions is the table of SPEC §2.3: for each emission mode,
// join type and side, what is emitted on arrival, on first match and on
// removal.
func TestEmissionDecisions(t *testing.T) {
	type decisions struct {
		ArrivalAlone   bool // arrives with no partner buffered
		ArrivalMatched bool // arrives with a partner buffered
		FirstMatch     bool // retract when a later partner arrives
		RemovedAlone   bool // expires or is evicted never matched
		RemovedMatched bool
	}
	outer := map[Emit]decisions{
		Immediate: {ArrivalAlone: true},
		Final:     {RemovedAlone: true},
		Retract:   {ArrivalAlone: true, FirstMatch: true},
	}
	for _, e := range []Emit{Immediate, Final, Retract} {
		for _, ty := range []Type{Inner, LeftOuter, RightOuter, FullOuter} {
			for _, s := range []Side{Left, Right} {
				r := Rules{Type: ty, Emit: e}
				got := decisions{
					ArrivalAlone:   r.UnmatchedOnArrival(s, false),
					ArrivalMatched: r.UnmatchedOnArrival(s, true),
					FirstMatch:     r.RetractOnFirstMatch(s),
					RemovedAlone:   r.UnmatchedOnRemoval(s, false),
					RemovedMatched: r.UnmatchedOnRemoval(s, true),
				}
				var want decisions
				if ty.Outer(s) {
					want = outer[e]
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%v %v %v (-want +got):\n%s", e, ty, s, diff)
				}
			}
		}
	}
}

func TestOuter(t *testing.T) {
	got := map[Type][2]bool{}
	for _, ty := range []Type{Inner, LeftOuter, RightOuter, FullOuter} {
		got[ty] = [2]bool{ty.Outer(Left), ty.Outer(Right)}
	}
	want := map[Type][2]bool{
		Inner:      {false, false},
		LeftOuter:  {true, false},
		RightOuter: {false, true},
		FullOuter:  {true, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Outer (-want +got):\n%s", diff)
	}
}

func TestFateOf(t *testing.T) {
	r := Rules{Type: LeftOuter}
	tests := []struct {
		side             Side
		matched, evicted bool
		want             Fate
	}{
		{Left, true, false, Matched},
		{Left, false, false, Unmatched},
		{Right, false, false, Expired},
		{Right, true, true, Evicted},
		{Left, false, true, Evicted},
	}
	for _, tc := range tests {
		if got := r.FateOf(tc.side, tc.matched, tc.evicted); got != tc.want {
			t.Errorf("FateOf(%v, matched=%v, evicted=%v) = %v, want %v", tc.side, tc.matched, tc.evicted, got, tc.want)
		}
	}
}
