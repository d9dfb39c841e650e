package match

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPartnersIsAddWithoutTheAdd checks, on random streams and bounds, that
// Partners finds exactly the partners that Add then pairs the element with,
// and changes nothing: the StreamJoiner makes an element's records before
// it buffers the element, so that a failed record leaves no trace.
func TestPartnersIsAddWithoutTheAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		lower := time.Duration(rng.IntN(20)-10) * time.Millisecond
		r := Rules{Bounds: Between(lower, lower+time.Duration(rng.IntN(20))*time.Millisecond), Type: Type(rng.IntN(4))}
		b := NewBuffer[string]()
		for i := range 60 {
			x := Entry[string]{Side: Side(rng.IntN(2)), Time: int64(rng.IntN(100)), Value: fmt.Sprint(i)}
			before := b.Entries()
			found := values(b.Partners(r, x.Side, x.Time))
			if after := b.Entries(); !reflect.DeepEqual(before, after) {
				t.Fatalf("trial %d: Partners changed the buffer (-before +after):\n%s", trial, cmp.Diff(before, after))
			}
			if added := values(b.Add(r, x).Partners); !slices.Equal(added, found) {
				t.Fatalf("trial %d, element %+v: Partners differs from Add (-Add +Partners):\n%s", trial, x, cmp.Diff(added, found))
			}
		}
	}
}
