package nexmark

// Nexmark on Flink (make bench-flink): beamjoin's Q3, Q8 and winning bids
// on Flink streaming, with their workers in this process (LOOPBACK),
// against Beam Java's own Nexmark queries (beam-sdks-java-nexmark, from
// peers/flink) on the same Flink: on the classic Flink runner, in one JVM
// with no Fn API between Flink and the queries, and portable, submitted to
// a Beam job server like beamjoin's, with the Java SDK harness in the job
// server's JVM (an EMBEDDED environment). Every run takes a JVM of its own;
// every figure is from Flink's own log of the job (flinkrun.JobRunTime).

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/internal/flinkrun"
	"github.com/beamjoin/beamjoin/internal/fncalls"
)

func init() {
	register.Function1x0(countFlinkRow)
}

var (
	flinkEvents     = flag.Int64("flink-nexmark-events", 100_000, "BenchmarkFlinkQuery: events per run")
	flinkReverse    = flag.Bool("flink-nexmark-reverse", false, "BenchmarkFlinkQuery: run each query's versions in reverse order")
	flinkProfileDir = flag.String("flink-profile-dir", "", "BenchmarkFlinkQuery: write the Go CPU profile and the JVM's flight recording of each beamjoin run here")
	flinkLogDir     = flag.String("flink-log-dir", "", "BenchmarkFlinkQuery: write each JVM's log here")
)

// javaQueries are Beam Java's names of the queries.
var javaQueries = map[Query]string{Q3: "LOCAL_ITEM_SUGGESTION", Q8: "MONITOR_NEW_USERS", Q9: "WINNING_BIDS"}

// flinkVersions are the versions of each query that BenchmarkFlinkQuery runs.
var flinkVersions = []string{"beamjoin", "beam-java-classic", "beam-java-portable"}

// BenchmarkFlinkQuery runs each query's versions once on
// -flink-nexmark-events events, streaming, at parallelism 2, and reports
// events/s over the Flink job's run time, per core of this 2-core machine
// (events/s/core: events/s over the job's parallelism), the peak memory
// of each JVM and of this process, and beamjoin's state calls per event.
// It is skipped unless scripts/flink.sh has resolved the job server and
// the peers (flinkrun.ClasspathEnv, flinkrun.PeersClasspathEnv).
//
//	BEAMJOIN_FLINK_CLASSPATH=$(scripts/flink.sh classpath) BEAMJOIN_FLINK_PEERS_CLASSPATH=$(scripts/flink.sh peers) \
//	    go test ./pipelines/nexmark -run '^$' -bench BenchmarkFlinkQuery -benchtime 1x
func BenchmarkFlinkQuery(b *testing.B) {
	jobServer := flinkrun.Classpath(b)
	fncalls.Install()
	versions := append([]string(nil), flinkVersions...)
	if *flinkReverse {
		for i, j := 0, len(versions)-1; i < j; i, j = i+1, j-1 {
			versions[i], versions[j] = versions[j], versions[i]
		}
	}
	for _, q := range Queries {
		if *benchQuery != "" && string(q) != *benchQuery {
			continue
		}
		for _, v := range versions {
			b.Run(fmt.Sprintf("%s/%s/N=%d", q, v, *flinkEvents), func(b *testing.B) {
				for range b.N {
					switch v {
					case "beamjoin":
						runGoOnFlink(b, jobServer, q, *flinkEvents)
					case "beam-java-classic":
						runJavaClassic(b, flinkrun.PeersClasspath(b), q, *flinkEvents)
					case "beam-java-portable":
						runJavaPortable(b, flinkrun.PeersClasspath(b), q, *flinkEvents)
					}
				}
			})
		}
	}
}

var flinkRows atomic.Int64

// countFlinkRow counts a query's rows in this process, where the LOOPBACK
// workers run.
func countFlinkRow(string) { flinkRows.Add(1) }

// reportRun reports what every version reports.
func reportRun(b *testing.B, n int64, run time.Duration, rows int64, jvmPeak int64) {
	eps := float64(n) / run.Seconds()
	b.ReportMetric(eps, "events/s")
	b.ReportMetric(eps/2, "events/s/core")
	b.ReportMetric(float64(rows), "rows")
	b.ReportMetric(float64(jvmPeak)/(1<<20), "jvm-peak-RSS-MB")
}

// runGoOnFlink runs beamjoin's version of q on a job server of its own.
func runGoOnFlink(b *testing.B, cp string, q Query, n int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	opts := append([]string(nil), flinkrun.TimestampOptions...)
	if *flinkProfileDir != "" {
		opts = append(opts, "-XX:StartFlightRecording=filename="+filepath.Join(*flinkProfileDir, string(q)+".jfr")+",settings=profile")
	}
	js, err := flinkrun.Start(ctx, flinkrun.Config{Classpath: cp, Parallelism: 2, JavaOptions: opts})
	if err != nil {
		b.Fatal(err)
	}
	defer js.Stop()
	c := Config{Seed: 1, Events: n}.withDefaults()
	p, s := beam.NewPipelineWithRoot()
	rows, err := Rows(s, q, false, ReadStream(s, c, 0), c)
	if err != nil {
		b.Fatal(err)
	}
	beam.ParDo0(s, countFlinkRow, rows)
	beamlog.SetupLogging("warn", "text")
	flinkRows.Store(0)
	fncalls.Reset()
	usage := flinkrun.MeasureUsage(js.Pid())
	stop := func() {}
	if *flinkProfileDir != "" {
		f, err := os.Create(filepath.Join(*flinkProfileDir, string(q)+".cpu.pprof"))
		if err != nil {
			b.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		stop = func() { pprof.StopCPUProfile(); f.Close() }
	}
	_, err = flinkrun.Execute(ctx, p, flinkrun.Options{Endpoint: js.Endpoint, Environment: flinkrun.Loopback, Parallelism: 2, Name: "nexmark-" + string(q)})
	stop()
	flinkrun.KeepLog(b, *flinkLogDir, string(q)+"-beamjoin", js.Log())
	if err != nil {
		b.Fatal(err)
	}
	calls, u := fncalls.Read(), usage()
	if *flinkProfileDir != "" {
		if err := flinkrun.DumpFlightRecording(js.Pid(), filepath.Join(*flinkProfileDir, string(q)+".jfr")); err != nil {
			b.Error(err)
		}
	}
	run, err := flinkrun.JobRunTime(js.Log())
	if err != nil {
		b.Fatal(err)
	}
	st, _ := calls.Matching(func(string) bool { return true })
	reportRun(b, n, run, flinkRows.Load(), u.JVMPeakRSS)
	b.ReportMetric(float64(u.GoPeakRSS)/(1<<20), "go-peak-RSS-MB")
	b.ReportMetric(float64(st.Calls())/float64(n), "state-calls/event")
	b.ReportMetric(u.JVMCPU.Seconds()*1e6/float64(n), "jvm-cpu-us/event")
	b.ReportMetric(u.GoCPU.Seconds()*1e6/float64(n), "go-cpu-us/event")
}

// javaArgs are Beam Java Nexmark's arguments for q on n events: streaming,
// the default configuration (its rates, proportions, hot ratios and
// window match this package's Config), its results counted, not written.
func javaArgs(q Query, n int64) []string {
	return []string{
		"--query=" + javaQueries[q], "--numEvents=" + strconv.FormatInt(n, 10), "--streaming=true",
		"--parallelism=2", "--sinkType=COUNT_ONLY", "--manageResources=false", "--monitorJobs=true",
	}
}

// javaPerf is the row of Beam Java Nexmark's performance table: runtime
// (s), events/s and results, as Nexmark measures them itself.
var javaPerf = regexp.MustCompile(`(?m)^\s+0000\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s*$`)

// runJavaClassic runs Beam Java's q on the classic Flink runner in a JVM
// of its own: the queries run inside Flink's operators.
func runJavaClassic(b *testing.B, cp string, q Query, n int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	args := append(javaArgs(q, n), "--runner=FlinkRunner", "--flinkMaster=[local]")
	res, err := flinkrun.RunJava(ctx, flinkrun.JavaRun{Classpath: cp, Main: "org.apache.beam.sdk.nexmark.Main", Args: args})
	flinkrun.KeepLog(b, *flinkLogDir, string(q)+"-beam-java-classic", res.Output)
	if err != nil {
		b.Fatalf("%v\n%s", err, tail(res.Output))
	}
	m := javaPerf.FindStringSubmatch(res.Output)
	if m == nil {
		b.Fatalf("Beam Java's Nexmark printed no results:\n%s", tail(res.Output))
	}
	rows, _ := strconv.ParseInt(m[3], 10, 64)
	run, err := flinkrun.JobRunTime(res.Output)
	if err != nil {
		b.Fatal(err)
	}
	reportRun(b, n, run, rows, res.PeakRSS)
	own, _ := strconv.ParseFloat(m[2], 64)
	b.ReportMetric(own, "nexmark-events/s")
}

// metricsClash is how Beam Java's Nexmark fails once a portable job has
// finished: its Flink job reports each metric twice to the portable
// runner's client, and Nexmark's reader wants one.
const metricsClash = "More than one metric result matches name"

// customWindow is how the portable Flink runner fails Beam Java's
// winning bids: the query windows auctions and bids with a custom merging
// WindowFn (AuctionOrBidWindowFn), whose window coder the runner does not
// know, so it reads the windows back from the SDK harness as raw bytes
// and cannot make them windows.
const customWindow = "cannot be cast to class org.apache.beam.sdk.transforms.windowing.BoundedWindow"

// runJavaPortable runs Beam Java's q on a Beam job server of its own,
// started from the peers' classpath (which holds the same Flink runner as
// beamjoin's job server, and Nexmark, for the EMBEDDED environment: the
// Java SDK harness in the job server's JVM, behind the Fn API).
func runJavaPortable(b *testing.B, cp string, q Query, n int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	js, err := flinkrun.Start(ctx, flinkrun.Config{Classpath: cp, Parallelism: 2, JavaOptions: flinkrun.TimestampOptions})
	if err != nil {
		b.Fatal(err)
	}
	defer js.Stop()
	flinkrun.ResetPeakRSS(js.Pid())
	args := append(javaArgs(q, n), "--runner=PortableRunner", "--jobEndpoint="+js.Endpoint, "--defaultEnvironmentType=EMBEDDED")
	res, err := flinkrun.RunJava(ctx, flinkrun.JavaRun{Classpath: cp, Main: "org.apache.beam.sdk.nexmark.Main", Args: args, HeapMB: 512})
	flinkrun.KeepLog(b, *flinkLogDir, string(q)+"-beam-java-portable-client", res.Output)
	flinkrun.KeepLog(b, *flinkLogDir, string(q)+"-beam-java-portable-jobserver", js.Log())
	if err != nil && strings.Contains(js.Log(), customWindow) {
		b.Skipf("Beam Java's %s does not run on the portable Flink runner: its custom window type comes back from the SDK harness as bytes (%s)", javaQueries[q], customWindow)
	}
	if err != nil && !strings.Contains(res.Output, metricsClash) {
		b.Fatalf("%v\n%s\njob server:\n%s", err, tail(res.Output), tail(js.Log()))
	}
	jvmPeak, _ := flinkrun.PeakRSS(js.Pid())
	run, err := flinkrun.JobRunTime(js.Log())
	if err != nil {
		b.Fatalf("%v\n%s", err, tail(js.Log()))
	}
	// Nexmark cannot read the portable job's metrics (metricsClash), so
	// the rows are not counted: -1.
	reportRun(b, n, run, -1, jvmPeak)
	b.ReportMetric(float64(res.PeakRSS)/(1<<20), "client-peak-RSS-MB")
}

// tail is the end of a long output, for an error message.
func tail(s string) string {
	if len(s) > 6000 {
		return "..." + s[len(s)-6000:]
	}
	return s
}
