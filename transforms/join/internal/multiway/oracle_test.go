package multiway

// This file holds the oracle: the multi-way join's rows by brute force
// over every pair of an anchor element and an element of each input, as
// the SQL join defines them, and each element's fate.

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
)

// testKeyCoder is a string key coder.
var testKeyCoder = func() coders.Element {
	_, s := beam.NewPipelineWithRoot()
	c, err := coders.KVKey(beam.ParDo(s, func(v string) (string, string) { return v, v }, beam.Create(s, "k")))
	if err != nil {
		panic(err)
	}
	return c
}()

// oracle returns the rows of events under r, counted, as rowKey writes
// them, and each element's fate.
func oracle(r Rules, events []event) (map[string]int, map[string]match.Fate) {
	rows := map[string]int{}
	fates := map[string]match.Fate{}
	inRow := map[string]bool{}
	for _, a := range events {
		if a.Input != Anchor {
			continue
		}
		combos := [][]*event{{&a}}
		hasPartner := false
		for i := 1; i < len(r.Inputs); i++ {
			var m []*event
			for j := range events {
				e := &events[j]
				if e.Key == a.Key && e.Input == i && r.Inputs[i].Lower <= e.Time-a.Time && e.Time-a.Time <= r.Inputs[i].Upper {
					m = append(m, e)
				}
			}
			if len(m) == 0 {
				if !r.Inputs[i].Optional {
					combos = nil
					break
				}
				m = []*event{nil}
			} else {
				hasPartner = true
			}
			var next [][]*event
			for _, c := range combos {
				for _, e := range m {
					next = append(next, append(append([]*event(nil), c...), e))
				}
			}
			combos = next
		}
		switch {
		case len(combos) == 0:
			fates[a.value()] = match.Expired
		case hasPartner:
			fates[a.value()] = match.Matched
		default:
			fates[a.value()] = match.Unmatched
		}
		for _, c := range combos {
			row := Row{Times: make([]int64, len(c)), Values: make([][]byte, len(c))}
			for i, e := range c {
				if e != nil {
					row.Present |= 1 << i
					row.Values[i] = []byte(e.value())
					inRow[e.value()] = true
				}
			}
			rows[rowKey(a.Key, row)]++
		}
	}
	for _, e := range events {
		if e.Input == Anchor {
			continue
		}
		if inRow[e.value()] {
			fates[e.value()] = match.Matched
		} else {
			fates[e.value()] = match.Expired
		}
	}
	return rows, fates
}
