package match

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// boundShape is a named Bounds to test with.
type boundShape struct {
	name   string
	bounds Bounds
}

// propertyShapes are the bound shapes of every layer's tests plus random
// ones, some with ends one millisecond off a whole second.
func propertyShapes(rng *rand.Rand) []boundShape {
	var shapes []boundShape
	for _, s := range boundShapes {
		shapes = append(shapes, boundShape{s.name, s.bounds})
	}
	for len(shapes) < len(boundShapes)+10 {
		lower := time.Duration(rng.IntN(21)-10)*time.Second + time.Duration(rng.IntN(3)-1)*time.Millisecond
		b := Bounds{
			Lower:          lower,
			Upper:          lower + time.Duration(rng.IntN(12))*time.Second + time.Duration(rng.IntN(3)-1)*time.Millisecond,
			LowerExclusive: rng.IntN(2) == 0,
			UpperExclusive: rng.IntN(2) == 0,
		}
		if b.Validate() == nil {
			shapes = append(shapes, boundShape{fmt.Sprintf("random_%v", b), b})
		}
	}
	return shapes
}

// randomInput returns n elements of random sides at times on a few whole
// seconds, give or take a millisecond, so that many pairs sit on or next
// to the ends of the bounds.
func randomInput(rng *rand.Rand, n int) []item {
	in := make([]item, n)
	for i := range in {
		in[i] = item{Side(rng.IntN(2)), int64(rng.IntN(40))*sec + int64(rng.IntN(3)-1)}
	}
	return in
}

func randomRules(rng *rand.Rand, b Bounds, lateness time.Duration) Rules {
	return Rules{Bounds: b, Type: Type(rng.IntN(4)), Emit: Emit(rng.IntN(3)), Lateness: lateness}
}

// TestPropertyArrivalOrderDoesNotMatter: with nothing cleaned up until all
// elements are in, Add produces the oracle's pairs, each once, whatever the
// arrival order. A final cleanup then checks each element's Matched flag
// and what each emission mode reports.
func TestPropertyArrivalOrderDoesNotMatter(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, shape := range propertyShapes(rng) {
		t.Run(shape.name, func(t *testing.T) {
			for trial := range 30 {
				in := randomInput(rng, 5+rng.IntN(30))
				var first []pair
				for perm := range 6 {
					r := run{
						rules:   randomRules(rng, shape.bounds, 0),
						in:      in,
						order:   rng.Perm(len(in)),
						marks:   slices.Repeat([]int64{noWatermark}, len(in)),
						persist: perm%2 == 1,
						flush:   true,
					}
					if err := r.check(); err != nil {
						t.Fatalf("trial %d, permutation %d, %+v:\ninput %v\norder %v\n%v", trial, perm, r.rules, in, r.order, err)
					}
					got, _ := r.play()
					pairs := sortedPairs(got.Pairs)
					if perm == 0 {
						first = pairs
					} else if !slices.Equal(first, pairs) {
						t.Fatalf("trial %d: permutation %d gave pairs %v, permutation 0 gave %v", trial, perm, pairs, first)
					}
				}
			}
		})
	}
}

// TestPropertyWatermarkCleanup: with cleanup driven by a monotone
// watermark between arrivals, and only elements not behind it by more than
// the lateness fed, every matching pair is produced exactly once, no
// element is judged late, every element leaves knowing whether it matched,
// and Final reports exactly the outer elements with no partner in the whole
// input (Retract's changelog nets to the same).
//
// Some runs also cap the buffer with Evict. Eviction may cost pairs, so
// there the pairs need only be real matches, each emitted at most once, and
// "no partner" means "in no emitted pair".
func TestPropertyWatermarkCleanup(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, shape := range propertyShapes(rng) {
		for _, lateness := range []time.Duration{0, time.Millisecond, 3 * time.Second} {
			t.Run(fmt.Sprintf("%s/lateness_%v", shape.name, lateness), func(t *testing.T) {
				for trial := range 40 {
					in := randomInput(rng, 5+rng.IntN(40))
					// A stream: roughly in time order, with some disorder.
					disorder := []int64{0, 2 * sec, 10 * sec, 100 * sec}[rng.IntN(4)]
					key := make([]int64, len(in))
					for i, x := range in {
						key[i] = x.Time + rng.Int64N(disorder+1)
					}
					order := rng.Perm(len(in))
					slices.SortStableFunc(order, func(a, b int) int { return int(key[a] - key[b]) })
					r := run{
						rules:       randomRules(rng, shape.bounds, lateness),
						maxBuffered: []int{0, 0, 1, 3, 8}[rng.IntN(5)],
						in:          in,
						order:       order,
						marks: watermarks(in, order, lateness, func(int) float64 {
							switch rng.IntN(4) {
							case 0:
								return -1 // no cleanup before this arrival
							case 1:
								return 1 // as far as the data allows: the boundary
							}
							return rng.Float64()
						}),
						persist: rng.IntN(2) == 0,
						flush:   true,
					}
					if err := r.check(); err != nil {
						t.Fatalf("trial %d, %+v, persist %v, max buffered %d:\ninput %v\norder %v\nwatermarks %v\n%v", trial, r.rules, r.persist, r.maxBuffered, in, order, r.marks, err)
					}
				}
			})
		}
	}
}

// TestPropertyLateLosesNothingSilently lets the watermark run ahead of
// the data: elements behind it by more than the lateness arrive. Whatever
// the core judges late must be that far behind, and every pair of elements
// it did not judge late must still be produced: lateness never hides a
// lost pair.
func TestPropertyLateLosesNothingSilently(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	lates := 0
	for _, shape := range propertyShapes(rng) {
		for _, lateness := range []time.Duration{0, 2 * time.Second} {
			t.Run(fmt.Sprintf("%s/lateness_%v", shape.name, lateness), func(t *testing.T) {
				for trial := range 40 {
					in := randomInput(rng, 5+rng.IntN(40))
					order := rng.Perm(len(in))
					slices.SortStableFunc(order, func(a, b int) int {
						return int(in[a].Time/(5*sec) - in[b].Time/(5*sec)) // disorder within 5 s buckets
					})
					rules := randomRules(rng, shape.bounds, lateness)
					// Cleanup times: random, or on (or next to) the expiry of
					// some element, where pairs are lost if the rules are off
					// by one.
					var expiries []int64
					for _, x := range in {
						e := rules.Expiry(x.Side, x.Time)
						expiries = append(expiries, e-1, e, e+1)
					}
					slices.Sort(expiries)
					marks := make([]int64, len(order))
					w := int64(-5 * sec)
					for k := range marks {
						marks[k] = noWatermark
						switch rng.IntN(3) {
						case 0:
							w += rng.Int64N(4 * sec)
							marks[k] = w
						case 1:
							i, _ := slices.BinarySearch(expiries, w+1)
							if i += rng.IntN(4); i < len(expiries) {
								w = expiries[i]
								marks[k] = w
							}
						}
					}
					r := run{rules: rules, in: in, order: order, marks: marks,
						persist: rng.IntN(2) == 0, flush: true, mayBeLate: true, maxBuffered: []int{0, 0, 2, 5}[rng.IntN(4)]}
					if err := r.check(); err != nil {
						t.Fatalf("trial %d, %+v, persist %v, max buffered %d:\ninput %v\norder %v\nwatermarks %v\n%v", trial, r.rules, r.persist, r.maxBuffered, in, order, marks, err)
					}
					got, _ := r.play()
					lates += len(got.Late)
				}
			})
		}
	}
	t.Logf("%d late elements", lates)
	if lates < 1000 {
		t.Errorf("only %d late elements in all trials: the test hardly exercises lateness", lates)
	}
}

// TestPropertyHarnessCatchesLoss makes sure the harness can fail: a
// watermark that runs ahead of the data loses pairs or finds late
// elements, and check says so.
func TestPropertyHarnessCatchesLoss(t *testing.T) {
	in := []item{{Left, 0}, {Right, 5 * sec}}
	r := run{
		rules: Rules{Bounds: Between(0, 10*time.Second), Type: LeftOuter, Emit: Final},
		in:    in,
		order: []int{0, 1},
		marks: []int64{noWatermark, 20 * sec},
		flush: true,
	}
	if err := r.check(); err == nil {
		t.Error("check() = nil for a run whose watermark passed the right element's time")
	}
}
