// Package jsonjoin joins JSON-lines inputs, two or (the multi-way join)
// three or more, with beamjoin's transforms and writes the results as JSON
// lines: it is the pipeline behind the beamjoin command, and a Config is
// one command line.
//
//	c := jsonjoin.Config{
//		Op:    jsonjoin.Interval,
//		Left:  jsonjoin.Input{Pattern: "orders.jsonl", Fields: jsonl.Fields{Key: "order_id", Time: "ts"}},
//		Right: jsonjoin.Input{Pattern: "payments.jsonl", Fields: jsonl.Fields{Key: "order_id", Time: "ts"}},
//		Lower: 0, Upper: 15 * time.Minute, Type: join.LeftOuter, Emit: join.EmitFinal,
//		Out:   "paid.jsonl",
//	}
//	summary, err := jsonjoin.Run(ctx, c, jsonjoin.DefaultRunner)
//
// Inputs are read by package jsonl (keys as canonical JSON text, times as
// epoch milliseconds or RFC 3339, bad lines to dead letters) and joined by
// join.Interval, join.Window, join.CoGroup, join.AsOf or join.Multi with
// string keys and jsonl.Record values. Build adds the whole join to a pipeline of one's
// own; Run checks the files, builds and runs it, and returns its Summary.
// How a Config becomes a pipeline, and where a new route goes:
// docs/design/jsonjoin.md.
//
// An interval join of files read whole (Replay false) is a batch join: it
// runs join.Interval's bounded path (join.Bounded), which groups each key's
// records and sweeps them in event-time order, with no late records. With
// Replay the files are streams, and the join runs on state and timers.
//
// # The multi-way join
//
// Op Multi joins three or more inputs, Config.Inputs, the first being the
// anchor, in one step (join.Multi). Each input after the first has its
// Bounds relative to the anchor, in input order, and is required (an
// anchor line without a match in its bounds has no row) unless Optional
// gives its number, 1-based (a row has null for it then):
//
//	fields := jsonl.Fields{Key: "user", Time: "ts"}
//	c := jsonjoin.Config{
//		Op: jsonjoin.Multi,
//		Inputs: []jsonjoin.Input{
//			{Pattern: "impressions.jsonl", Fields: fields},
//			{Pattern: "clicks.jsonl", Fields: fields},
//			{Pattern: "conversions.jsonl", Fields: fields},
//		},
//		Bounds:   []jsonjoin.Bounds{{Lower: 0, Upper: 10 * time.Minute}, {Lower: 0, Upper: 24 * time.Hour}},
//		Optional: []int{3},
//		Emit:     join.EmitFinal,
//	}
//
// It takes Emit and AllowedLateness, Replay and Pub/Sub inputs as the
// interval join does, and no Left, Right or other route's settings. Its
// inputs are named input1 to inputN in the Summary and the Progress.
// Files read whole take join.Multi's bounded path, whose rows are
// EmitFinal's in every mode; replayed, the join judges lateness itself
// (the reader does not, as it does for an interval join: see Replay).
//
// # Output
//
// One JSON object per line; the input objects are copied through byte for
// byte, and the key is written as its canonical JSON text. The command
// writes lines sorted (digit runs by value), but the format promises no
// order.
//
// Interval join (FormatResult):
//
//	{"kind":"pair","key":K,"left":{…},"right":{…},"left_time":MS,"right_time":MS,"time":MS}
//
// kind is "pair", "unmatched" (an outer element without a partner; the
// absent side and its time are null) or "retract" (EmitRetract withdrawing
// an earlier unmatched record, with the same fields). time is the record's
// event time: the later of the two for a pair, the element's own otherwise.
//
// Window join (FormatWindowResult): the same, plus
// "window":{"start":MS,"end":MS} for the window [start, end); time is
// end - 1, the window's max timestamp. CoGroup (FormatGroup):
//
//	{"kind":"group","key":K,"left":[…],"right":[…],"time":MS,"window":{"start":MS,"end":MS}}
//
// with each side's objects sorted by file, then line (Beam's grouping
// keeps no order; a Pub/Sub record's file is its subscription, its line
// its message ID).
//
// Late elements of the interval join (FormatLate):
//
//	{"side":"left","key":K,"time":MS,"value":{…}}
//
// and, in the same file, those the reader of a replay judged late
// (FormatReaderLate; see Replay):
//
//	{"side":"left","key":K,"time":MS,"value":{…},"judged_by":"reader"}
//
// Multi-way join (FormatMultiResult), records and times in input order,
// null for an optional input without a match:
//
//	{"key":K,"records":[{…},{…},null],"times":[MS,MS,null]}
//
// with "kind":"retract" first for a row withdrawn (EmitRetract). Its late
// elements (FormatMultiLate), I the input's number (1-based):
//
//	{"input":I,"key":K,"time":MS,"record":{…}}
//
// Dead letters (FormatDeadLetter):
//
//	{"file":"orders.jsonl","line":17,"error":"field \"ts\": missing","raw":"…"}
//
// Without Late or DeadLetter those records are only counted.
//
// # Replay
//
// With Replay (the command's --watermark-lag), the inputs are replayed as
// one stream by package jsonl: each file in line order, the files of all
// inputs merged by event time, with one watermark, the largest time read
// less WatermarkLag, reported each time that time has risen by a quarter
// of the join's span (the interval's width plus the allowed lateness; the
// window slide, size or session gap; for Multi, from the lowest lower
// bound below zero to the highest upper bound, plus the allowed lateness)
// and enough data has been read. The
// lines and the watermark reports the join receives are then the same in
// every run.
//
// In an interval join the reader also judges lateness (jsonl's
// Source.JudgeLate, by join.LateBehind): a line more than AllowedLateness
// behind the watermark when it is read (for the left side with Lower above
// 0, that much more; for the right side with Upper below 0, -Upper more)
// is late, on any key, whether or not its partners are still buffered: it
// goes to Late with "judged_by":"reader" and is counted per side as
// reader_late, never joined. That is the line the join could only judge by
// timing, and on a key it had never seen or had forgotten would join as
// new, its records behind the watermark. So which lines are late does
// not depend on timing, and the results are a batch join's of the
// input less the late elements (MaxBufferedPerKey's evictions aside): the
// command's end-to-end tests check both against SQLite and across runs.
// (The join still judges late, against its keys' cleanup, any line it gets
// behind a cleanup; in the runs measured the reader had taken every such
// line first.)
//
// A multi-way join's reader judges no lateness (join.LateBehind has no
// rule for it): the join judges it, against its keys' cleanup, so a line
// behind the watermark may be late in one run and joined in another, as
// below.
//
// For a window join or cogroup a line that comes after the watermark has
// passed the end of its window may still be late in one run and joined in
// another: Beam runs the reader and the join at the same time and tells
// the join of the watermark only when it closes a window, so such a line is
// late if the runner has closed its window before the line reaches the
// join, and joined otherwise (a window join drops a late line). Everything
// else is the same in every run, and a run without Replay does not depend
// on timing at all.
//
// # Runners
//
// Run takes the name of the runner, Prism in process when it is empty; the
// runner's own settings are Beam's flags, and Run changes none of them. On
// Prism, and on --runner=universal, whose job server may be a stand-alone
// Prism, pass --experiments=prism_disable_sdf_split (the beamjoin command
// does): splitting a bundle of the interval join's stateful DoFn while it
// holds timers loses or repeats work (apache/beam#35771). Files named with
// relative paths are resolved in the working directory at construction;
// results written to "-" go to the standard output of the process that
// runs the writing DoFn, which is the command itself only with in-process
// (LOOPBACK) workers: Run rejects it with other workers (CheckFiles);
// give files, e.g. gs://…, there.
//
// # Summary
//
// Run's Summary is counted from the records, not from Beam counters (Prism
// v2.77 can lose a counter's first increments when two bundles report it
// at once): Build counts, with Beam combines, each side's records and dead
// letters as the reader emits them (dead letters by reason, keeping the
// first line of each), the lines the reader judged late, and the records
// the join makes by kind, and writes the counts to Config.Accounting, which
// ReadSummary reads back. Per side (left and right, or a multi-way
// join's input1 to inputN), lines read = in (records that went to the
// join) + reader_late + invalid. Summary.Check
// fails an input of which no line is valid (saying which field was wrong in
// how many lines) and, where the fates of the join's elements are counted,
// any element without exactly one fate. They are counted for the interval
// join, for the multi-way join (join.TrackFates: matched, unmatched for an
// anchor whose row has none of the other inputs, expired, late), and for
// the window join and the cogroup of a replay or a stream (their
// late-counting path); a window join or cogroup of files read whole runs
// on CoGroupByKey, where nothing is late, and counts its records only.
//
// # Progress
//
// Workers in the process that calls Run (Prism in process, LOOPBACK) feed
// a progress hub as they count: lines read and the latest event time per
// side (input), records made. Config.Progress receives it every ProgressEvery.
// Workers elsewhere have no hub; their runner's UI shows their progress.
package jsonjoin
