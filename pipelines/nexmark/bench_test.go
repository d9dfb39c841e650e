package nexmark

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

var (
	benchEvents = flag.Int64("nexmark-events", 100_000, "BenchmarkQuery: events per run")
	benchQuery  = flag.String("nexmark-query", "", "BenchmarkQuery: only this query (q3, q8, q9)")
	rssEvents   = flag.String("nexmark-rss-events", "100000,1000000", "BenchmarkStreamingPeakRSS: the two event counts, small,large")
	sdkFirst    = flag.Bool("nexmark-sdk-first", false, "BenchmarkQuery: run each query's SDK-only version before beamjoin's")
)

// BenchmarkQuery runs each query, beamjoin's version and the SDK-only one,
// bounded and streaming, on Prism in process, counting rows only, and
// reports events/s of wall time (pipeline construction included) and the
// process's CPU time per event (cpu-ns/event, runner included). The two
// versions of a query run back to back, so that their ratio is of runs
// under the same load: beamjoin's first, or the SDK-only one's with
// -nexmark-sdk-first. (With -count, Go repeats each version's run in place,
// so rounds of pairs take one process each: make nexmark runs
// NEXMARK_COUNT of them, alternating the order.) Rows are checked by
// TestQueriesMatchSQLite, not here.
//
//	go test ./pipelines/nexmark -run '^$' -bench BenchmarkQuery -benchtime 1x -nexmark-events 1000000
func BenchmarkQuery(b *testing.B) {
	versions := []bool{false, true} // SDK-only?
	if *sdkFirst {
		versions = []bool{true, false}
	}
	for _, q := range Queries {
		if *benchQuery != "" && string(q) != *benchQuery {
			continue
		}
		for _, stream := range []bool{false, true} {
			for _, sdkOnly := range versions {
				name := fmt.Sprintf("%s/%s/%s/N=%d", q, map[bool]string{false: "beamjoin", true: "sdk-only"}[sdkOnly],
					map[bool]string{false: "bounded", true: "streaming"}[stream], *benchEvents)
				b.Run(name, func(b *testing.B) {
					var perSec float64
					var rows int64
					cpu0 := processCPU()
					for i := 0; i < b.N; i++ {
						sum, err := Run(context.Background(), RunConfig{Query: q, SDKOnly: sdkOnly, Stream: stream,
							Config: Config{Seed: 1, Events: *benchEvents}})
						if err != nil {
							b.Fatal(err)
						}
						perSec += sum.EventsPerSecond()
						rows = sum.Rows
					}
					cpu := processCPU() - cpu0
					b.ReportMetric(perSec/float64(b.N), "events/s")
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(int64(b.N)**benchEvents), "cpu-ns/event")
					b.ReportMetric(float64(rows), "rows")
				})
			}
		}
	}
}

// processCPU is the CPU time this process has used, user and system: the
// runner's too, since Prism runs in process. Unlike wall time, it does not
// count the time other processes took the cores, so it compares two runs
// on a shared machine more steadily.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childRunEnv, when set to "QUERY EVENTS VERSION" (VERSION beamjoin or
// sdk-only), makes the test binary a child that runs that query streaming
// and exits (TestMain is not involved: the
// benchmark starts the child with -test.run=TestStreamingChild).
const childRunEnv = "NEXMARK_CHILD_RUN"

// TestStreamingChild is the child process of BenchmarkStreamingPeakRSS; it
// does nothing in an ordinary test run.
func TestStreamingChild(t *testing.T) {
	spec := os.Getenv(childRunEnv)
	if spec == "" {
		t.Skip("the child of BenchmarkStreamingPeakRSS")
	}
	var q, version string
	var n int64
	if _, err := fmt.Sscan(spec, &q, &n, &version); err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), RunConfig{Query: Query(q), Stream: true, SDKOnly: version == "sdk-only", Config: Config{Seed: 1, Events: n}})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(os.Stderr, sum)
}

// BenchmarkStreamingPeakRSS runs each query streaming in a child process
// at the two sizes of -nexmark-rss-events, beamjoin's version and then the
// SDK-only one, and reports each child's peak resident set (getrusage's
// ru_maxrss) and the ratio of the two sizes.
//
//	go test ./pipelines/nexmark -run '^$' -bench BenchmarkStreamingPeakRSS -benchtime 1x
func BenchmarkStreamingPeakRSS(b *testing.B) {
	var small, large int64
	if _, err := fmt.Sscanf(*rssEvents, "%d,%d", &small, &large); err != nil {
		b.Fatalf("-nexmark-rss-events %q: want small,large: %v", *rssEvents, err)
	}
	for _, q := range Queries {
		if *benchQuery != "" && string(q) != *benchQuery {
			continue
		}
		for _, version := range []string{"beamjoin", "sdk-only"} {
			b.Run(string(q)+"/"+version, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					rssSmall, rssLarge := childPeakRSS(b, q, version, small), childPeakRSS(b, q, version, large)
					b.ReportMetric(float64(rssSmall)/1024, "MB-peak-rss-N="+strconv.FormatInt(small, 10))
					b.ReportMetric(float64(rssLarge)/1024, "MB-peak-rss-N="+strconv.FormatInt(large, 10))
					b.ReportMetric(float64(rssLarge)/float64(rssSmall), "rss-ratio")
				}
			})
		}
	}
}

// childPeakRSS is the peak RSS, in KiB, of a child running version
// (beamjoin or sdk-only) of query q streaming on n events.
func childPeakRSS(b *testing.B, q Query, version string, n int64) int64 {
	cmd := exec.Command(os.Args[0], "-test.run=^TestStreamingChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %s", childRunEnv, q, n, version))
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("child %s N=%d: %v\n%s", q, n, err, out)
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
}
