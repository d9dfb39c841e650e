package join

// This file holds what every join returns (Outputs), the routes' names
// (Route), and the check of a route's options before anything is built.

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Namespace is the Beam metrics namespace of every beamjoin counter.
const Namespace = "beamjoin"

// Outputs is what a join returns: its records, and the outputs that
// options ask for. A PCollection that a join does not produce is the zero
// beam.PCollection, whose IsValid method returns false.
type Outputs struct {
	// Records are the join's records: Result[K,L,R] for Interval and AsOf,
	// WindowResult[K,L,R] for Window, Group[K,L,R] for CoGroup,
	// MultiResult[K,V] for Multi.
	Records beam.PCollection
	// Late are the elements the join judged late: LateElement[K,L,R] for
	// Interval and AsOf, always; MultiLateElement[K,V] for Multi, always;
	// WindowLateElement[K,L,R] for Window and CoGroup, with ReportLate only.
	Late beam.PCollection
	// Fates are Fate[K] records (MultiFate[K] for Multi), exactly one per
	// input element, with TrackFates only.
	Fates beam.PCollection
}

// Route names one of the package's transforms, for checking options
// before a pipeline is built and for naming a route in text (flags,
// JSON).
type Route uint8

// The routes.
const (
	RouteInterval Route = iota
	RouteWindow
	RouteCoGroup
	RouteAsOf
	RouteMulti
)

var routeWords = words{what: "route", kind: "Route", names: []string{
	RouteInterval: "interval", RouteWindow: "window", RouteCoGroup: "cogroup", RouteAsOf: "asof", RouteMulti: "multi",
}}

// String returns "interval", "window", "cogroup", "asof" or "multi".
func (r Route) String() string { return routeWords.name(uint8(r)) }

// MarshalText returns the route's String form; an unknown route is an
// error.
func (r Route) MarshalText() ([]byte, error) { return routeWords.marshal(uint8(r)) }

// UnmarshalText reads a route from its String form.
func (r *Route) UnmarshalText(text []byte) error { return routeWords.unmarshal(text, (*uint8)(r)) }

// Check reports what the route's Try function would reject in opts,
// without building anything, so that a program can validate settings of
// its own (a command's flags) before it builds a pipeline. Only the inputs
// are left to check. It judges the options as for unbounded inputs: the
// combinations that only the bounded path takes (UniqueLeft or SplitKeys
// with MaxBufferedPerKey) pass only with Bounded, though Interval takes
// them on bounded inputs, which choose that path by themselves.
//
//	err := join.RouteInterval.Check(join.Between(10*time.Minute, 5*time.Minute))
//	// beamjoin: join.Interval: lower bound 10m0s is greater than upper bound 5m0s
func (r Route) Check(opts ...Option) error {
	switch r {
	case RouteInterval:
		_, err := intervalConfig(opts)
		return err
	case RouteWindow:
		_, err := windowedConfig("join.Window", windowOptions, opts)
		return err
	case RouteCoGroup:
		_, err := windowedConfig("join.CoGroup", coGroupOptions, opts)
		return err
	case RouteAsOf:
		_, err := asofConfig(opts)
		return err
	case RouteMulti:
		// Multi's own options; each input's are checked with its input.
		_, err := newConfig("join.Multi", multiOptions, opts)
		return err
	}
	_, err := r.MarshalText()
	return err
}
