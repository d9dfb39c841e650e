// Package jsonl reads JSON-lines files into keyed, timestamped records for
// beamjoin's joins, sends the lines it cannot read to dead letters, and
// writes JSON lines back out.
//
// # Records
//
// Read turns each line of a Source's files into a KV<string, Record> whose
// element timestamp is the line's event time, or into a DeadLetter. Every
// line is exactly one of the two, and both are counted (namespace
// "beamjoin": NAME_read for lines, NAME_invalid for dead letters, NAME being
// the Source's name, "left" or "right" in a join).
//
// Where the key and the time are is given by Fields, as dotted paths
// ("user.id"). The key is the canonical JSON text of the value found there:
// strings compare by content and numbers by value, so "A" and "\u0041" are
// one key and 1, 1.0 and 1e0 are one key, but the string "1" and the number
// 1 are two keys. The key written in the join's results is that text. The
// time is either an integer number of milliseconds since the Unix epoch or
// an RFC 3339 string; digits below the millisecond are dropped.
//
// A Record keeps the line's JSON object byte for byte (less surrounding
// white space), its file and its line number, so that results can copy the
// input objects through unchanged.
//
// # Dead letters
//
// A line goes to the dead letters, with an error that names the field at
// fault, when it is not JSON, not an object, blank, missing its key or its
// time, has a key that is not a non-empty string or a number, has a time
// that is neither epoch milliseconds nor RFC 3339, or is longer than
// MaxLineBytes (1 MiB unless set). A long line is skipped without being
// held in memory; its dead letter keeps its first 4 KiB.
//
// # Batch and replay
//
// By default each file is read whole by one DoFn call (files in parallel),
// and event time downstream does not move until every file has been read:
// a join's result is complete and does not depend on the order of lines.
//
// With Replay, the files of every source read together (ReadAll; Read is
// ReadAll of one source) are replayed as one stream, by one splittable
// DoFn, with one watermark:
//
//   - Order. Each file is read in line order. Across files the next line
//     replayed is the earliest of the files' next lines by event time; a
//     line that is not a record goes as soon as it is next in its file;
//     ties go to the earlier source (the left side before the right), then
//     the earlier file name. So a line comes after every line before it in
//     its file, when the replay reaches about the latest time its file had
//     shown before it: each file is a stream delivered in line order.
//   - Watermark. The largest event time read so far less WatermarkLag, as
//     a stream source with bounded out-of-orderness would report it. A line
//     whose time is behind the watermark is still emitted as a record:
//     what a late element means is for the consumer to say; unless the
//     source judges lateness (see Late lines).
//   - Outliers. With MaxSkew, a record whose time is more than MaxSkew
//     ahead of the largest time taken in is still a record, but the
//     watermark does not take its time unless five such records come in a
//     row (the data moved on: a gap in it), so that one bad time (a time
//     in microseconds, a mistyped year) does not make every line after it
//     late; while another file's next record is within the bound, such a
//     record is replayed at once rather than holding the rest of its file
//     back until the stream reaches its time. They are counted
//     (NAME_skewed).
//   - Reports. The reader reports the watermark by checkpointing, a bundle
//     round trip for it and for every stage downstream (about 10 ms for the
//     reader alone on Prism, more with a join), once the largest time has
//     risen by WatermarkStep (DefaultWatermarkStep, one second, unless set)
//     since the previous report and at least 1/500 of the replay's bytes
//     have been read since; and after every 4 MiB whatever the time. So a
//     replay makes at most about 500 reports, plus one per 4 MiB, however
//     much event time it covers. Downstream timers fire, and later lines
//     can be late, at the reports. The beamjoin command sets the step to a
//     quarter of its join's span (see package jsonjoin).
//
// The lines, their order, and where the reports fall depend only on the
// files and these settings: every run of a replay feeds the pipeline the
// same stream. (A runner that checkpoints the reader on its own adds
// reports: Prism does not with prism_disable_sdf_split, which beamjoin
// sets; Dataflow may.) What Beam leaves open is when a stage downstream
// acts on a report relative to the lines that follow it: the runner runs
// the reader and, say, a join at the same time, and a stateful DoFn learns
// of the watermark only when its timers fire. A line read after the
// watermark has passed the time at which the consumer acts on its key (for
// the interval join, the cleanup of the line's potential partners: the
// line is more than WatermarkLag plus the allowed lateness behind the
// largest time read before it) reaches the consumer before or after that
// action depending on timing, so it may be late in one run and joined in
// another, and the records that depend on it differ; and a consumer that
// judges lateness per key, as the interval join does, joins such a line
// as new on a key it has never seen. Every other line is handled the same
// way in every run.
//
// # Late lines
//
// A source with JudgeLate set (read with ReadAllWithLate) settles those
// lines in the reader: a record more than LateBehind behind the watermark
// the replay has reached when it reads the line goes to the source's late
// records, counted NAME_reader_late, instead of its records, on any key
// and in every run alike. A join sets LateBehind by its own rule
// (join.LateBehind for join.Interval: the allowed lateness, and more for
// bounds that keep a side's partners later than it), so that the line is
// late here iff the join, had its cleanup reached the watermark, would
// judge it late; the join then never sees a line that only timing would
// decide. A line behind the watermark by no more than LateBehind is a
// record. The beamjoin command sets it for its interval join (see package
// jsonjoin).
//
// The reader keeps its files open between reports and resumes from where
// it stopped, so it reads each byte once even on a file system whose
// readers cannot seek, such as gs://; it learns their sizes from the file
// system. A DoFn instance that did not read the part before (another
// worker, after a failure) opens the file again and skips to its place,
// seeking where the file system allows.
//
// # Writing
//
// Write collects a PCollection of lines into one file, sorted, once all of
// them are known: it suits the results of a command, not bulk output. The
// lines reach the one writer through a GroupByKey in the global window, in
// batches of a bundle (at most about 1 MiB each), not one element per
// line: Prism looks at every element waiting in an open window each time
// the watermark moves, so during a replay, whose watermark moves at every
// report, lines held one by one made that cost grow with the square of the
// run.
package jsonl
