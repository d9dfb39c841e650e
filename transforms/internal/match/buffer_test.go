package match

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type e = Entry[string]

func left(ts int64, v string) e  { return e{Side: Left, Time: ts, Value: v} }
func right(ts int64, v string) e { return e{Side: Right, Time: ts, Value: v} }

func values(es []e) []string {
	var out []string
	for _, x := range es {
		out = append(out, x.Value)
	}
	return out
}

func TestBufferAdd(t *testing.T) {
	r := Rules{Bounds: Between(-5*time.Second, 10*time.Second), Type: FullOuter, Emit: Retract}
	b := NewBuffer[string]()
	type arrival struct {
		Late                bool
		Partners, Retracted []string
		Unmatched           bool
	}
	steps := []struct {
		in   e
		want arrival
	}{
		{left(10*sec, "l1"), arrival{Unmatched: true}},
		{left(12*sec, "l2"), arrival{Unmatched: true}},
		// Matches l1 (d=+10s, inclusive) and l2: both are retracted.
		{right(20*sec, "r1"), arrival{Partners: []string{"l1", "l2"}, Retracted: []string{"l1", "l2"}}},
		// Matches l1 and l2 again; no second retraction.
		{right(15*sec, "r2"), arrival{Partners: []string{"l1", "l2"}}},
		// Matches r1 (d=+2s) and r2 (d=-3s), which had matched already.
		{left(18*sec, "l3"), arrival{Partners: []string{"r2", "r1"}}},
		// Too far from every left element.
		{right(40*sec, "r3"), arrival{Unmatched: true}},
	}
	for i, st := range steps {
		a := b.Add(r, st.in)
		got := arrival{Late: a.Late, Partners: values(a.Partners), Retracted: values(a.Retracted), Unmatched: a.Unmatched}
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Errorf("step %d: Add(%v) (-want +got):\n%s", i, st.in.Value, diff)
		}
	}
	if got, want := values(b.Entries()), []string{"l1", "l2", "l3", "r2", "r1", "r3"}; !cmp.Equal(want, got) {
		t.Errorf("Entries() = %v, want %v (left first, each side by time)", got, want)
	}
}

// A buffered element whose flag was never persisted (the Beam join only
// appends) is still known to have matched while its partner is buffered.
func TestBufferAddRetractsOnlyTrulyFirstMatch(t *testing.T) {
	r := Rules{Bounds: Between(0, 10*time.Second), Type: LeftOuter, Emit: Retract}
	b := Restore([]e{left(0, "l"), right(5*sec, "r1")}, NoProgress) // l.Matched not persisted
	a := b.Add(r, right(6*sec, "r2"))
	if len(a.Retracted) != 0 {
		t.Errorf("Retracted = %v, want none: l matched r1 before", values(a.Retracted))
	}
}

func TestBufferExpireSettlesMatches(t *testing.T) {
	r := Rules{Bounds: Between(-10*time.Second, 10*time.Second), Type: FullOuter, Emit: Final}
	// As read back from state: nothing flagged, in arrival order.
	b := Restore([]e{left(20*sec, "l1"), right(12*sec, "r1"), right(100*sec, "r2"), left(0, "l0")}, NoProgress)
	// At 22s+1ms the right element at 12s expires (12+10), as does l0 (0+10);
	// l1 (expiry 30s+1ms) stays but must remember it matched r1.
	removed := b.Expire(r, 22*sec+1)
	type out struct {
		Value   string
		Matched bool
	}
	var got []out
	for _, x := range removed {
		got = append(got, out{x.Value, x.Matched})
	}
	want := []out{{"l0", false}, {"r1", true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if b.Progress != 22*sec+1 {
		t.Errorf("Progress = %d, want %d", b.Progress, 22*sec+1)
	}
	rest := b.Entries()
	if diff := cmp.Diff([]e{{Side: Left, Time: 20 * sec, Matched: true, Value: "l1"}, right(100*sec, "r2")}, rest); diff != "" {
		t.Errorf("survivors (-want +got):\n%s", diff)
	}
	next, ok := b.NextExpiry(r)
	if !ok || next != 30*sec+1 {
		t.Errorf("NextExpiry() = %d, %v; want %d, true", next, ok, 30*sec+1)
	}
	// Progress never moves back.
	b.Expire(r, 0)
	if b.Progress != 22*sec+1 {
		t.Errorf("Progress after an earlier Expire = %d, want unchanged", b.Progress)
	}
}

func TestBufferEvictOldestFirst(t *testing.T) {
	r := Rules{Bounds: Between(0, time.Second), Type: FullOuter, Emit: Final}
	b := NewBuffer[string]()
	for _, x := range []e{left(5, "l5"), right(3, "r3"), left(3, "l3"), right(9, "r9"), left(1, "l1")} {
		b.Add(r, x)
	}
	removed := b.Evict(r, 2)
	// Oldest by time across both sides; on a tie the left element goes first.
	if diff := cmp.Diff([]string{"l1", "l3", "r3"}, values(removed)); diff != "" {
		t.Errorf("evicted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"l5", "r9"}, values(b.Entries())); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if b.Evict(r, 2) != nil {
		t.Error("Evict at the cap removed something")
	}
}

func TestBufferDropBefore(t *testing.T) {
	r := Rules{Bounds: Between(0, time.Second)}
	b := NewBuffer[string]()
	for _, x := range []e{left(5, "l5"), right(3, "r3"), left(8, "l8")} {
		b.Add(r, x)
	}
	if diff := cmp.Diff([]string{"l5", "r3"}, values(b.DropBefore(r, 6))); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if b.Progress != NoProgress {
		t.Errorf("DropBefore moved Progress to %d", b.Progress)
	}
}

func TestBufferLateNotBuffered(t *testing.T) {
	r := Rules{Bounds: Between(-5*time.Second, 5*time.Second), Type: FullOuter}
	b := NewBuffer[string]()
	b.Expire(r, 100*sec)
	if a := b.Add(r, left(90*sec, "late")); !a.Late || a.Unmatched {
		t.Errorf("Add(late) = %+v, want Late only", a)
	}
	// Its earliest partner, a right element at 94s, expired at 99s+1ms.
	if a := b.Add(r, left(99*sec, "late too")); !a.Late {
		t.Errorf("Add(99s) not late at progress 100s")
	}
	// Its earliest partner, at 95s, expires at 100s+1ms: not yet removed.
	if a := b.Add(r, left(100*sec, "on time")); a.Late {
		t.Errorf("Add(100s) late at progress 100s")
	}
	if b.Len() != 1 {
		t.Errorf("Len() = %d, want 1", b.Len())
	}
}

// TestBufferValueBytes follows the values' total length through every way
// elements come and go: Restore, Add (and a late arrival, not buffered),
// Expire, Evict and DropBefore; for []byte values too, and as 0 for values
// of other types.
func TestBufferValueBytes(t *testing.T) {
	r := Rules{Bounds: Between(-time.Second, time.Second), Type: FullOuter}
	b := Restore([]e{left(0, "ab"), right(5*sec, "cde")}, NoProgress)
	check := func(step string, want int64) {
		t.Helper()
		var sum int64
		for _, x := range b.Entries() {
			sum += int64(len(x.Value))
		}
		if got := b.ValueBytes(); got != want || got != sum {
			t.Errorf("after %s: ValueBytes() = %d, want %d (the buffered values hold %d)", step, got, want, sum)
		}
	}
	check("Restore", 5)
	b.Add(r, left(10*sec, "fghi"))
	b.Add(r, right(3*sec, "j")) // before the right element at 5 s: inserted, not appended
	check("Add", 10)
	b.Expire(r, 2*sec)
	check("Expire", 8)
	b.Add(r, left(0, "late")) // late: not buffered
	check("a late Add", 8)
	b.Evict(r, 2)
	check("Evict", 7)
	b.DropBefore(r, 10*sec)
	check("DropBefore", 4)
	b.Expire(r, 100*sec)
	check("Expire of everything", 0)

	raw := NewBuffer[[]byte]()
	raw.Add(r, Entry[[]byte]{Side: Left, Time: 0, Value: []byte("xyz")})
	if got := raw.ValueBytes(); got != 3 {
		t.Errorf("[]byte values: ValueBytes() = %d, want 3", got)
	}
	ints := Restore([]Entry[int]{{Side: Left, Value: 7}}, NoProgress)
	if got := ints.ValueBytes(); got != 0 {
		t.Errorf("int values: ValueBytes() = %d, want 0", got)
	}
}

// TestBufferOldestFrom finds the earliest time of a side at or after a
// time, as the split layout's bucket finds its own oldest element.
func TestBufferOldestFrom(t *testing.T) {
	b := Restore([]e{left(5, "a"), left(10, "b"), left(10, "c"), right(7, "x")}, NoProgress)
	for _, tc := range []struct {
		side Side
		from int64
		want int64
		ok   bool
	}{
		{Left, 0, 5, true}, {Left, 5, 5, true}, {Left, 6, 10, true}, {Left, 11, 0, false},
		{Right, 7, 7, true}, {Right, 8, 0, false},
	} {
		if got, ok := b.OldestFrom(tc.side, tc.from); got != tc.want || ok != tc.ok {
			t.Errorf("OldestFrom(%v, %d) = %d, %v; want %d, %v", tc.side, tc.from, got, ok, tc.want, tc.ok)
		}
	}
}

// TestBufferDecided checks when a buffer decides a right element's fate
// (Decided: one left element buffered), and that Join joins such an
// element without buffering it, marking its partner matched once
// (Marked).
func TestBufferDecided(t *testing.T) {
	r := Rules{Bounds: Between(0, 10*time.Millisecond), Type: Inner, Emit: Immediate}
	b := NewBuffer[string]()
	if b.Decided() {
		t.Errorf("an empty buffer decides")
	}
	b.Add(r, right(99, "r0"))
	if b.Decided() {
		t.Errorf("a buffer of right elements decides")
	}
	b.Add(r, left(100, "l"))
	if !b.Decided() {
		t.Errorf("one left element does not decide")
	}
	before := b.Entries()
	a := b.Join(r, right(200, "far"))
	if len(a.Partners) != 0 || a.Marked || a.Late {
		t.Errorf("Join outside the bounds = %+v", a)
	}
	if diff := cmp.Diff(before, b.Entries()); diff != "" {
		t.Errorf("Join changed the buffer (-before +after):\n%s", diff)
	}
	first, second := b.Join(r, right(105, "r1")), b.Join(r, right(106, "r2"))
	if diff := cmp.Diff([]string{"l"}, values(first.Partners)); diff != "" || !first.Marked {
		t.Errorf("first Join = %+v; partners (-want +got):\n%s", first, diff)
	}
	if len(second.Partners) != 1 || second.Marked {
		t.Errorf("second Join = %+v, want one partner, not marked", second)
	}
	if got := values(b.Entries()); !cmp.Equal(got, []string{"l", "r0"}) {
		t.Errorf("buffer holds %v, want [l r0]", got)
	}
	b.Add(r, left(101, "l2"))
	if b.Decided() {
		t.Errorf("two left elements decide")
	}
}
