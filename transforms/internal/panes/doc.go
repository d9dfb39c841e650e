// Package panes is the core of beamjoin's window join and cogroup: which
// windows an element is in, when a key's window fires and when it expires,
// which arrivals are late, and what each firing of a window (a pane) holds.
// It is plain Go with no Beam import; package join's stateful DoFn only
// moves data between its bag state, its one timer family and this package.
//
// Each rule is one function:
//
//   - Windowing.Assign, the windows of an element, exactly as Beam's
//     WindowInto assigns them (fixed, sliding, sessions, global), and
//     merge, how session windows merge across both inputs.
//   - Rules.FireAt, when a window fires: once event time reaches its end
//     (Beam's AfterWatermark, the default trigger).
//   - Rules.ExpireAt, when a window expires: once event time passes its max
//     timestamp plus the allowed lateness; its values are then forgotten.
//   - Rules.Expired, the lateness rule: an arrival is late for a window iff
//     the window had expired by what the key knew of event time when the
//     element arrived. A DoFn cannot read the watermark; a timer that fired
//     on the key at t proves that the watermark had reached t before any
//     later arrival on the key, so "what the key knew" is the latest firing
//     its state records. That is behind the true watermark, so an element
//     on time is never called late; a late one may be taken for on time
//     when nothing has fired on its key yet to prove it late, and then
//     yields a late pane.
//
// (A firing on another key proves less: Prism fires a key's timers once
// the stage's upstream watermark has passed them, while older elements of
// other keys can still wait in the stage, on time. So the join judges by
// the key's own firings only.)
//
// Rules.Fire is a timer firing: it judges the arrivals since the key's
// last write against its progress (Rules.Arrive), emits the panes that are
// due, expires windows, and says which entries are done and when the key's
// next firing is. State encodes a key's state as the bytes of one
// bag-state chunk.
package panes
