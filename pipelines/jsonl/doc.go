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
// With Replay, each file is read in line order by a splittable DoFn whose
// watermark trails the largest event time read so far by WatermarkLag, as
// a stream source with bounded out-of-orderness would. The DoFn checkpoints
// each time that largest time has risen by ReplayStep (one second), which
// reports the new watermark to the runner before the next line is read; so
// downstream timers fire, and later lines can be late, during the run. A
// line whose time is behind the watermark is still emitted: what a late
// element means is for the consumer to say (the interval join sends it to
// its late output). The watermark of a Read is the smallest over its files;
// a file that has been read through no longer holds it. Each checkpoint is
// a bundle round trip (about 10 ms on Prism), so replay is for files of
// thousands of lines, not millions.
//
// # Writing
//
// Write collects a PCollection of lines into one file, sorted, once all of
// them are known: it suits the results of a command, not bulk output.
package jsonl
