// Package windowed is the engine of join.Window and join.CoGroup below
// their records: the grouped path, their default (grouped.go: both inputs
// windowed as the caller or the options say and grouped by Beam's
// CoGroupByKey), and the late-counting path that ReportLate and
// TrackFates choose (build.go and fn.go: one stateful DoFn per key in the
// global window that assigns, fires and expires the windows itself, and
// reports the elements that arrive too late for them, with the records
// put back into windows afterwards).
//
// Package join makes the author's records (WindowResult, Group) and late
// elements of what it returns: the CoGroupByKey's groups, or the stateful
// DoFn's panes (PaneRecord), missed windows (MissedRecord) and fates
// (raw.FateRecord).
//
// It rests on the Beam Go SDK (bag state, one event-time timer family),
// the windowing rules of transforms/internal/panes, which decide
// everything on the late-counting path, the inputs' windowing checks of
// package windowing and the records of package raw. It imports no other
// engine and not package join. docs/design/window.md explains the design
// and what each path can and cannot see.
package windowed
