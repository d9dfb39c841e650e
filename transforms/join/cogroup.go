package join

// This file holds CoGroup, its record type, and the DoFns that make its
// records on each path.

import (
	"context"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/transforms/join/internal/windowed"
)

func init() {
	register.DoFn5x1[context.Context, beam.EventTime, beam.X, windowed.PaneRecord, func(beam.EventTime, beam.W), error](&groupPaneFn{})
	register.DoFn6x1[context.Context, beam.Window, beam.X, func(*beam.Y) bool, func(*beam.Z) bool, func(beam.EventTime, beam.W), error](&groupFn{})
	register.Iter1[beam.Y]()
	register.Iter1[beam.Z]()
	register.Emitter2[beam.EventTime, beam.W]()
}

// Group is everything CoGroup collected for one key in one firing of one
// window: the values of the left input and of the right input, each in no
// particular order. One of Left and Right may be empty, never both.
//
// WindowStart and WindowEnd are the window's bounds, [WindowStart,
// WindowEnd). The Group's element timestamp is the window's max timestamp,
// WindowEnd minus one millisecond. Inputs in the global window (not windowed
// at all) give one Group per key, with WindowStart at Beam's minimum
// timestamp and WindowEnd just past the end of the global window; on an
// unbounded input that window only closes when the input ends.
type Group[K, L, R any] struct {
	Key         K
	Left        []L
	Right       []R
	WindowStart time.Time
	WindowEnd   time.Time
}

// CoGroup groups left, a PCollection<KV<K,L>>, and right, a
// PCollection<KV<K,R>>, by key and window: Flink's coGroup.
// Outputs.Records is a PCollection<Group[K,L,R]> with one Group per key and
// window in which either input has values, timestamped with the window's
// max timestamp:
//
//	out := join.CoGroup[string, Order, Payment](s, orders, payments,
//		join.WindowInto(window.NewFixedWindows(time.Hour)))
//
// Without the WindowInto option the inputs' own windowing is used, as set by
// the caller with beam.WindowInto; both inputs must then be windowed alike.
// By default CoGroup is Beam's CoGroupByKey: the runner assigns, merges and
// fires the windows by the inputs' trigger, and each firing (pane) gives
// one Group, in its window, of the values of that pane (every value of the
// window so far with beam.PanesAccumulate). With sliding windows an element
// is in several windows, so it appears in several Groups; with sessions, a
// session spans the values of both inputs whose gaps are short enough,
// merged across the two. Elements beyond the allowed lateness are dropped
// by the runner, unseen and uncounted.
//
// ReportLate or TrackFates choose the late-counting path, as in Window:
// default trigger only; an element that arrives after its window expired
// is not grouped but counted (left_late, right_late) and, with ReportLate,
// returned in Outputs.Late; with TrackFates, Outputs.Fates holds each
// element's fate: OutcomeGrouped (in at least one Group) or OutcomeLate.
// Within the allowed lateness a late element adds a further Group of its
// window. Counters: groups_out; on the late-counting path also left_in,
// left_grouped, left_late, and the same for right.
//
// The program must call RegisterTypes[K, L, R]() in an init function.
// CoGroup panics on misuse; TryCoGroup returns the error.
func CoGroup[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) Outputs {
	return mustBuild(TryCoGroup[K, L, R](s, left, right, opts...))
}

// TryCoGroup is CoGroup returning an error instead of panicking: for an
// option CoGroup does not take, for inputs that are not PCollections of KV
// pairs with the type arguments' key and value types, for inputs that are
// windowed differently, for a trigger other than the default with
// ReportLate or TrackFates, and for types not registered with
// RegisterTypes.
func TryCoGroup[K, L, R any](s beam.Scope, left, right beam.PCollection, opts ...Option) (Outputs, error) {
	out := beam.EncodedType{T: reflect.TypeFor[Group[K, L, R]]()}
	return buildWindowedRoute[K, L, R](s, windowedRoute{
		op: "join.CoGroup", allowed: coGroupOptions, records: out.T,
		grouped:    func(_ config, values sideValues) any { return &groupFn{groups{Out: out, sideValues: values}} },
		panes:      func(_ config, values sideValues) any { return &groupPaneFn{groups{Out: out, sideValues: values}} },
		groupedVar: beam.WType, panesVar: beam.WType,
	}, opts, left, right)
}

// groupCounter counts the cogroup's records.
var groupCounter = beam.NewCounter(Namespace, "groups_out")

// groups makes the Groups of either path. It is not generic: the Group
// type is a field, bound to the output's universal type at construction.
type groups struct {
	Out beam.EncodedType
	sideValues

	key, start, end int
	values          [2]int // field indexes in Out, by side
}

// Setup finds the fields of the Group type and sets up the value coders
// (which only the late-counting path uses).
func (f *groups) Setup() error {
	t := f.Out.T
	f.key, f.start, f.end = fieldIndex(t, "Key"), fieldIndex(t, "WindowStart"), fieldIndex(t, "WindowEnd")
	f.values = [2]int{fieldIndex(t, "Left"), fieldIndex(t, "Right")}
	return f.sideValues.setup()
}

// newGroup makes an empty Group of key k in window [start, end).
func (f *groups) newGroup(k any, start, end time.Time) reflect.Value {
	g := reflect.New(f.Out.T).Elem()
	g.Field(f.key).Set(reflect.ValueOf(k))
	g.Field(f.start).Set(reflect.ValueOf(start))
	g.Field(f.end).Set(reflect.ValueOf(end))
	return g
}

// add appends v to the values of side s of g.
func (f *groups) add(g reflect.Value, s Side, v any) {
	vs := g.Field(f.values[s])
	vs.Set(reflect.Append(vs, valueOf(v, vs.Type().Elem())))
}

// groupFn turns one CoGroupByKey group into a Group.
type groupFn struct{ groups }

func (f *groupFn) ProcessElement(ctx context.Context, w beam.Window, k beam.X, lefts func(*beam.Y) bool, rights func(*beam.Z) bool, emit func(beam.EventTime, beam.W)) error {
	start, end := windowBounds(w)
	g := f.newGroup(k, start, end)
	var l beam.Y
	for lefts(&l) {
		f.add(g, Left, l)
	}
	var r beam.Z
	for rights(&r) {
		f.add(g, Right, r)
	}
	emit(w.MaxTimestamp(), g.Interface())
	groupCounter.Inc(ctx, 1)
	return nil
}

// groupPaneFn turns a pane of the late-counting path into a Group.
type groupPaneFn struct{ groups }

func (f *groupPaneFn) ProcessElement(ctx context.Context, et beam.EventTime, k beam.X, p windowed.PaneRecord, emit func(beam.EventTime, beam.W)) error {
	sides, err := f.decodePane("join.CoGroup", p)
	if err != nil {
		return err
	}
	g := f.newGroup(k, time.UnixMilli(p.Start).UTC(), time.UnixMilli(p.End).UTC())
	for s, vs := range sides {
		for _, v := range vs {
			f.add(g, Side(s), v.v)
		}
	}
	emit(et, g.Interface())
	groupCounter.Inc(ctx, 1)
	return nil
}
