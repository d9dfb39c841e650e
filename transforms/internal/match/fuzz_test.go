package match

import (
	"testing"
	"time"
)

// Flags of the third byte of a FuzzBuffer input.
const (
	fuzzLowerExclusive byte = 1 << 0
	fuzzUpperExclusive byte = 1 << 1
	// bits 2-3: the join type; bits 4-5: the emission mode (mod 3)
	fuzzPersist   byte = 1 << 6 // round-trip the buffer through "state"
	fuzzMayBeLate byte = 1 << 7 // let the watermark run ahead of the data
)

func fuzzType(t Type) byte { return byte(t) << 2 }
func fuzzEmit(e Emit) byte { return byte(e) << 4 }

// decodeRun reads a run from fuzz input:
//
//	byte 0: the lower bound, int8 milliseconds
//	byte 1: upper - lower, milliseconds
//	byte 2: flags (fuzzLowerExclusive, …)
//	byte 3: the allowed lateness in milliseconds (bits 0-5), and a size
//	        cap applied with Evict (bits 6-7: none, 2, 4 or 8)
//	then two bytes per element, in arrival order (at most 64):
//	  a: side (bit 0) and time in milliseconds (a >> 1)
//	  b: cleanup before the arrival: 0 for none; otherwise, with
//	     fuzzMayBeLate, advance the watermark by b ms, and without it, move
//	     it b/255 of the way to the latest time that keeps every later
//	     arrival on time (255: exactly there).
//
// It reports false for inputs that are too short or whose bounds match
// nothing.
func decodeRun(data []byte) (run, bool) {
	if len(data) < 6 {
		return run{}, false
	}
	lower := time.Duration(int8(data[0])) * time.Millisecond
	flags := data[2]
	r := run{
		rules: Rules{
			Bounds: Bounds{
				Lower:          lower,
				Upper:          lower + time.Duration(data[1])*time.Millisecond,
				LowerExclusive: flags&fuzzLowerExclusive != 0,
				UpperExclusive: flags&fuzzUpperExclusive != 0,
			},
			Type:     Type(flags >> 2 & 3),
			Emit:     Emit(flags >> 4 & 3 % 3),
			Lateness: time.Duration(data[3]&63) * time.Millisecond,
		},
		persist:     flags&fuzzPersist != 0,
		mayBeLate:   flags&fuzzMayBeLate != 0,
		maxBuffered: []int{0, 2, 4, 8}[data[3]>>6],
		flush:       true,
	}
	if r.rules.Validate() != nil {
		return run{}, false
	}
	var steps []byte
	for rest := data[4:]; len(rest) >= 2 && len(r.in) < 64; rest = rest[2:] {
		r.order = append(r.order, len(r.in))
		r.in = append(r.in, item{Side(rest[0] & 1), int64(rest[0] >> 1)})
		steps = append(steps, rest[1])
	}
	if r.mayBeLate {
		w := int64(-1)
		for _, b := range steps {
			mark := int64(noWatermark)
			if b != 0 {
				w += int64(b)
				mark = w
			}
			r.marks = append(r.marks, mark)
		}
	} else {
		r.marks = watermarks(r.in, r.order, r.rules.Lateness, func(k int) float64 {
			if steps[k] == 0 {
				return -1
			}
			return float64(steps[k]) / 255
		})
	}
	return r, true
}

// FuzzBuffer plays fuzzed inputs (bounds, join type, emission mode,
// lateness, elements in arrival order, cleanup times between them) through
// a Buffer and checks everything it says against the nested-loop oracle,
// as the property tests do.
func FuzzBuffer(f *testing.F) {
	el := func(s Side, ms byte, step byte) []byte { return []byte{ms<<1 | byte(s), step} }
	seed := func(lower int8, width byte, flags byte, lateness byte, elems ...[]byte) []byte {
		b := []byte{byte(lower), width, flags, lateness}
		for _, e := range elems {
			b = append(b, e...)
		}
		return b
	}
	// [-5, 5] ms, full outer, final: a pair, a loner, cleanup on the edge.
	f.Add(seed(-5, 10, fuzzType(FullOuter)|fuzzEmit(Final), 0,
		el(Left, 10, 0), el(Right, 15, 0), el(Right, 40, 255), el(Left, 60, 255)))
	// Exclusive ends, retract, persisted like the Beam join.
	f.Add(seed(-5, 10, fuzzLowerExclusive|fuzzUpperExclusive|fuzzType(LeftOuter)|fuzzEmit(Retract)|fuzzPersist, 0,
		el(Left, 10, 0), el(Right, 5, 0), el(Right, 6, 128), el(Right, 15, 0), el(Right, 14, 255)))
	// Negative/negative bounds, right outer, immediate, lateness 3 ms.
	f.Add(seed(-20, 12, fuzzType(RightOuter)|fuzzEmit(Immediate), 3,
		el(Right, 0, 0), el(Left, 20, 200), el(Left, 8, 255), el(Right, 30, 255), el(Left, 45, 255)))
	// Positive/positive bounds, inner, final.
	f.Add(seed(2, 8, fuzzType(Inner)|fuzzEmit(Final), 0,
		el(Left, 1, 0), el(Right, 3, 1), el(Right, 11, 255), el(Left, 9, 255), el(Right, 12, 255)))
	// Zero width at an offset, full outer, retract.
	f.Add(seed(3, 0, fuzzType(FullOuter)|fuzzEmit(Retract), 1,
		el(Left, 7, 0), el(Right, 10, 255), el(Right, 10, 255), el(Left, 7, 255)))
	// A size cap of 2 on a full outer join, final.
	f.Add(seed(-5, 10, fuzzType(FullOuter)|fuzzEmit(Final)|fuzzPersist, 1<<6,
		el(Left, 10, 0), el(Right, 12, 0), el(Left, 11, 0), el(Right, 30, 0), el(Left, 29, 255), el(Right, 9, 0)))
	// The watermark runs ahead: late elements, lost nothing silently.
	f.Add(seed(-4, 8, fuzzType(FullOuter)|fuzzEmit(Final)|fuzzMayBeLate|fuzzPersist, 2,
		el(Left, 10, 0), el(Right, 12, 9), el(Left, 3, 3), el(Right, 1, 7), el(Left, 30, 20), el(Right, 14, 0)))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, ok := decodeRun(data)
		if !ok {
			return
		}
		if err := r.check(); err != nil {
			t.Fatalf("%+v, persist %v, may be late %v, max buffered %d:\ninput %v\nwatermarks %v\n%v", r.rules, r.persist, r.mayBeLate, r.maxBuffered, r.in, r.marks, err)
		}
	})
}
