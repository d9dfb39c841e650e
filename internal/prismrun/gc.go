package prismrun

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target (GOGC) that SetGCPercent
// sets: a collection starts when the heap has grown by half of what the
// last one left live, rather than by all of it (Go's default, 100).
const GCPercent = 50

// SetGCPercent sets the garbage collector's target to GCPercent unless
// the GOGC environment variable gives one, and returns the target in
// force (-1 when collection is off).
//
// Prism in process holds every collection of a run in the heap of the
// process that runs it, so the process's peak memory is what is live
// plus what the collector lets accumulate between collections: at Go's
// default up to as much again, at 50 half as much. Measured on 2 x
// 100,000 lines joined by the beamjoin command's batch path (the child
// process of pipelines/jsonjoin BenchmarkBatchInterval, three runs each,
// taken in turn): peak RSS 428-495 MB against 533-567 MB at Go's default,
// for 7.6-8.2 s of wall time against 5.1-6.5 s. The command spends that
// time to stay within half a gigabyte; GOGC=100 buys it back. The
// beamjoin command calls SetGCPercent before it runs a join of files read
// whole, the case the half-gigabyte figure is for; not before a replay or
// a Pub/Sub stream, which it would slow more: a replay of the same files
// took about 15% less time at Go's default, peaking at 452-499 MB against
// 387-443 MB (see the README's Performance).
func SetGCPercent() int {
	if v, ok := os.LookupEnv("GOGC"); ok && v != "" {
		old := debug.SetGCPercent(100)
		debug.SetGCPercent(old)
		return old
	}
	debug.SetGCPercent(GCPercent)
	return GCPercent
}
