package streamjoiner_test

import (
	"fmt"
	"strconv"
	"time"

	"github.com/beamjoin/beamjoin/transforms/join"
	"github.com/beamjoin/beamjoin/transforms/streamjoiner"
)

// Strings joined with themselves: a right "k1" buffered first, then a left
// "k1" within five seconds of it produces the pair.
func Example() {
	self := func(s string) string { return s }
	joiner, err := streamjoiner.New(self, self,
		func(l, r *string) (string, error) { return *l + "+" + *r, nil },
		streamjoiner.Between(-5*time.Second, 5*time.Second),
		// Without LeftTime and RightTime elements are stamped with the
		// clock when they arrive; a fixed clock keeps the output stable.
		streamjoiner.Clock(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }))
	if err != nil {
		panic(err)
	}
	out, _ := joiner.ProcessRight("k1")
	fmt.Println(out)
	out, _ = joiner.ProcessLeft("k1")
	fmt.Println(out)
	// Output:
	// []
	// [k1+k1]
}

type Order struct {
	ID, UserID string
	Amount     int
	At         int64 // milliseconds since the Unix epoch
}

type User struct {
	ID, Name string
	At       int64
}

type EnrichedOrder struct {
	OrderID, Name string
	Amount        int
}

// Orders enriched with the user who placed them, if that user's record is
// at most ten seconds away from the order, with the state limits set.
func Example_orderUser() {
	joiner, err := streamjoiner.New(
		func(o Order) string { return o.UserID },
		func(u User) string { return u.ID },
		func(o *Order, u *User) (EnrichedOrder, error) {
			return EnrichedOrder{OrderID: o.ID, Name: u.Name, Amount: o.Amount}, nil
		},
		streamjoiner.Between(-10*time.Second, 10*time.Second),
		streamjoiner.LeftTime(func(o Order) int64 { return o.At }),
		streamjoiner.RightTime(func(u User) int64 { return u.At }),
		streamjoiner.MaxStateSize(1000),
		streamjoiner.StateRetention(30*time.Minute))
	if err != nil {
		panic(err)
	}
	const t0 = 1_700_000_000_000
	out, _ := joiner.ProcessRight(User{ID: "u1", Name: "Ada", At: t0})
	fmt.Printf("%+v\n", out)
	out, _ = joiner.ProcessLeft(Order{ID: "o1", UserID: "u1", Amount: 42, At: t0 + 4000})
	fmt.Printf("%+v\n", out)
	// Too late for Ada's record.
	out, _ = joiner.ProcessLeft(Order{ID: "o2", UserID: "u1", Amount: 7, At: t0 + 11000})
	fmt.Printf("%+v\n", out)
	fmt.Println("buffered:", joiner.LeftBufferSize(), joiner.RightBufferSize())
	// Output:
	// []
	// [{OrderID:o1 Name:Ada Amount:42}]
	// []
	// buffered: 2 1
}

// A full outer join emits an element with no partner at once, and the pair
// as a further record when the partner comes: downstream sees "1|<nil>"
// and then "1|1", and must tolerate or deduplicate that.
func Example_fullOuter() {
	joiner, err := streamjoiner.New(
		func(s string) string { return s },
		strconv.Itoa,
		func(l *string, r *int) (string, error) {
			left, right := "<nil>", "<nil>"
			if l != nil {
				left = *l
			}
			if r != nil {
				right = strconv.Itoa(*r)
			}
			return left + "|" + right, nil
		},
		streamjoiner.Between(-time.Minute, time.Minute),
		streamjoiner.JoinType(join.FullOuter),
		streamjoiner.LeftTime(func(string) int64 { return 0 }),
		streamjoiner.RightTime(func(int) int64 { return 30_000 }))
	if err != nil {
		panic(err)
	}
	for _, feed := range []func() ([]string, error){
		func() ([]string, error) { return joiner.ProcessLeft("1") },
		func() ([]string, error) { return joiner.ProcessRight(1) },
		func() ([]string, error) { return joiner.ProcessRight(2) },
	} {
		out, err := feed()
		fmt.Println(out, err)
	}
	// Output:
	// [1|<nil>] <nil>
	// [1|1] <nil>
	// [<nil>|2] <nil>
}

// JoinedElement is a ready-made record for a JoinFunc without a type of
// its own; which side is absent shows in IsLeftOnly and IsRightOnly.
func ExampleJoinedElement() {
	at := func(s string) int64 { n, _ := strconv.Atoi(s[1:]); return int64(n) }
	joiner, err := streamjoiner.New(
		func(s string) byte { return s[0] },
		func(s string) byte { return s[0] },
		func(l, r *string) (streamjoiner.JoinedElement[string, string], error) {
			if r == nil {
				return streamjoiner.LeftOnly[string, string](*l, at(*l)), nil
			}
			return streamjoiner.Joined(*l, *r, max(at(*l), at(*r))), nil
		},
		streamjoiner.Between(0, 5*time.Millisecond),
		streamjoiner.JoinType(join.LeftOuter),
		streamjoiner.LeftTime(at),
		streamjoiner.RightTime(at))
	if err != nil {
		panic(err)
	}
	out, _ := joiner.ProcessLeft("a10")
	fmt.Println(*out[0].Left, out[0].IsLeftOnly(), out[0].Timestamp)
	out, _ = joiner.ProcessRight("a13")
	fmt.Println(*out[0].Left, *out[0].Right, out[0].IsBothPresent(), out[0].Timestamp)
	// Output:
	// a10 true 10
	// a10 a13 true 13
}

// Stats accounts for every element: per side, In = Buffered + Evicted +
// Dropped + Cleared, and on an outer side In = Matched + Unmatched -
// MatchedAfterUnmatched. Here the left "1" is emitted alone, then paired
// by the right 1; a right element with no key is rejected and changes
// nothing else.
func ExampleStreamJoiner_Stats() {
	joiner, err := streamjoiner.New(
		func(s string) string { return s },
		func(n int) string {
			if n < 0 {
				return "" // no key
			}
			return strconv.Itoa(n)
		},
		func(l *string, r *int) (string, error) { return fmt.Sprint(l != nil, r != nil), nil },
		streamjoiner.Between(-time.Minute, time.Minute),
		streamjoiner.JoinType(join.LeftOuter),
		streamjoiner.LeftTime(func(string) int64 { return 0 }),
		streamjoiner.RightTime(func(int) int64 { return 30_000 }))
	if err != nil {
		panic(err)
	}
	joiner.ProcessLeft("1")
	joiner.ProcessRight(1)
	_, err = joiner.ProcessRight(-1)
	fmt.Println(err)
	joiner.Clear()
	st := joiner.Stats()
	fmt.Printf("left  %+v\nright %+v\npairs %d\n", st.Left, st.Right, st.Pairs)
	// Output:
	// beamjoin: right key selector returned an empty key
	// left  {In:1 Rejected:0 Matched:1 Unmatched:1 MatchedAfterUnmatched:1 Evicted:0 Dropped:0 Cleared:1 Buffered:0}
	// right {In:1 Rejected:1 Matched:1 Unmatched:0 MatchedAfterUnmatched:0 Evicted:0 Dropped:0 Cleared:1 Buffered:0}
	// pairs 1
}
