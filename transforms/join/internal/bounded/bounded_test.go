package bounded

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/coders"
	"github.com/beamjoin/beamjoin/transforms/internal/match"
	"github.com/beamjoin/beamjoin/transforms/join/internal/bagstate"
	"github.com/beamjoin/beamjoin/transforms/join/internal/raw"
	"github.com/beamjoin/beamjoin/transforms/join/internal/runnerkey"
	gocmp "github.com/google/go-cmp/cmp"
)

// keyedByItself makes a KV pair, for a PCollection with a string key coder.
func keyedByItself(v string) (string, string) { return v, v }

func init() { register.Function1x2(keyedByItself) }

// stringKeys is the coder of string keys.
func stringKeys(t testing.TB) coders.Element {
	t.Helper()
	_, s := beam.NewPipelineWithRoot()
	c, err := coders.KVKey(beam.ParDo(s, keyedByItself, beam.Create(s, "k")))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// gatherDoFn is a bounded path's gatherer.
type gatherDoFn interface {
	Setup() error
	StartBundle(func(beam.EventTime, []byte, []Part))
	ProcessElement(beam.EventTime, beam.X, raw.Encoded, func(beam.EventTime, []byte, []Part)) error
	FinishBundle(func(beam.EventTime, []byte, []Part))
}

// TestGatherers checks the bounded paths' gathering: a bundle's values
// leave grouped by runner key (a shard of the keys, and for Interval a
// time bucket) and by key, one element per runner key when they fit in
// Hold, in more when they do not, each value exactly once (Interval: once
// per bucket it is placed in) with its side and event time, each element
// at its runner key's hold, which no value in it is before.
func TestGatherers(t *testing.T) {
	keyCoder := stringKeys(t)
	buckets := Buckets{Width: 1000, Back: 100, Ahead: 100}
	type gathered struct {
		at     beam.EventTime
		rk     string
		parts  []Part
		before bool // handed on before the bundle's end
	}
	run := func(f gatherDoFn, n int) []gathered {
		if err := f.Setup(); err != nil {
			t.Fatal(err)
		}
		var out []gathered
		ending := false
		emit := func(at beam.EventTime, rk []byte, parts []Part) {
			out = append(out, gathered{at, string(rk), slices.Clone(parts), !ending})
		}
		f.StartBundle(emit)
		for i := range n {
			if err := f.ProcessElement(beam.EventTime(1000+(i*37)%3000), fmt.Sprint("k", i%10), raw.Encoded{Side: uint8(i % 2), Value: []byte{byte(i)}}, emit); err != nil {
				t.Fatal(err)
			}
		}
		ending = true
		f.FinishBundle(emit)
		return out
	}
	// values is what the elements hold: "key side time value" lines, one
	// per value, sorted.
	values := func(out []gathered) []string {
		var vs []string
		for _, g := range out {
			for _, p := range g.parts {
				k, err := keyCoder.Decode(p.Key)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range p.Values {
					vs = append(vs, fmt.Sprintf("%v %d %d %d", k, v.Side, v.Time, v.Value[0]))
					if v.Time < g.at.Milliseconds() {
						t.Errorf("runner key %x's element at %d holds a value at %d", g.rk, g.at.Milliseconds(), v.Time)
					}
				}
				if want := runnerkey.Shard(p.Key, 4); !strings.HasSuffix(g.rk, string(want)) {
					t.Errorf("key %v in runner key %x, not in its shard %x", k, g.rk, want)
				}
			}
		}
		slices.Sort(vs)
		return vs
	}
	if err := keyCoder.Setup(); err != nil {
		t.Fatal(err)
	}
	var wantAsOf, wantInterval []string
	for i := range 100 {
		ts := int64(1000 + (i*37)%3000)
		line := fmt.Sprintf("k%d %d %d %d", i%10, i%2, ts, i)
		wantAsOf = append(wantAsOf, line)
		first, last := buckets.Placement(ts)
		for range last - first + 1 {
			wantInterval = append(wantInterval, line)
		}
	}
	slices.Sort(wantAsOf)
	slices.Sort(wantInterval)

	for _, tc := range []struct {
		name       string
		f          func(hold int) gatherDoFn
		want       []string
		runnerKeys int // at most, when everything fits
		holdOf     func(rk string) beam.EventTime
	}{
		{"asof", func(hold int) gatherDoFn {
			return &bucketGatherFn{Op: "join.AsOf", Hold: hold, Shards: 4, Key: keyCoder}
		},
			wantAsOf, 4, func(string) beam.EventTime { return noEarlierHold }},
		{"interval", func(hold int) gatherDoFn {
			return &bucketGatherFn{Op: "join.Interval", Hold: hold, Buckets: buckets, Shards: 4, Key: keyCoder}
		},
			wantInterval, 5 * 4, func(rk string) beam.EventTime { return buckets.Hold([]byte(rk)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Everything fits: one element per runner key, at the bundle's end.
			out := run(tc.f(1<<20), 100)
			seen := map[string]bool{}
			for _, g := range out {
				if g.before || seen[g.rk] {
					t.Errorf("runner key %x handed on twice, or before the bundle's end", g.rk)
				}
				seen[g.rk] = true
				if want := tc.holdOf(g.rk); g.at != want {
					t.Errorf("runner key %x at %d, want its hold %d", g.rk, g.at, want)
				}
			}
			if len(out) > tc.runnerKeys {
				t.Errorf("%d elements, want at most %d (one per runner key)", len(out), tc.runnerKeys)
			}
			if diff := gocmp.Diff(tc.want, values(out)); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
			// A hold of 400 bytes: handed on every few values.
			out = run(tc.f(400), 100)
			if !out[0].before {
				t.Errorf("with a hold of 400 bytes, nothing handed on before the bundle's end")
			}
			if diff := gocmp.Diff(tc.want, values(out)); diff != "" {
				t.Errorf("hold 400: values (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBoundedStateFormat checks the bounded paths' state: parts written
// by encodePart decode to the same values by key, a part larger than a
// state value is written in several, and an element of another format
// version is refused naming it.
func TestBoundedStateFormat(t *testing.T) {
	big := make([]byte, bagstate.MaxValue/2)
	in := map[string][]match.Entry[[]byte]{
		"a": {{Side: match.Left, Time: -5, Value: []byte("x")}, {Side: match.Right, Time: 7, Value: nil}},
		"b": {{Side: match.Right, Time: 1, Value: big}, {Side: match.Left, Time: 2, Value: big}, {Side: match.Left, Time: 3, Value: big}},
	}
	var elements [][]byte
	for _, k := range []string{"a", "b"} {
		elements = append(elements, encodePart([]byte(k), in[k])...)
	}
	if len(elements) < 3 {
		t.Errorf("%d bag elements, want b's 1.5 MiB in at least two", len(elements))
	}
	for _, e := range elements {
		if len(e) > bagstate.MaxValue+64 {
			t.Errorf("a bag element of %d bytes, over a state value", len(e))
		}
	}
	got, err := decodeParts(elements)
	if err != nil {
		t.Fatal(err)
	}
	in["a"][1].Value = []byte{} // a nil value comes back empty
	if diff := gocmp.Diff(in, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	newer := append([]byte{2}, elements[0][1:]...)
	if _, err := decodeParts([][]byte{newer}); err == nil || !strings.Contains(err.Error(), "format version 2") {
		t.Errorf("an element of version 2: error %v, want one naming the version", err)
	}
}
