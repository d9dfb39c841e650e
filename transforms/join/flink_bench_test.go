package join_test

// The pipeline benchmarks on Flink (make bench-flink): the interval join,
// the hand-written join and the bag-append floor of pipeline_bench_test.go,
// on the same generated input, each submitted to a job server of its own
// (Flink's embedded cluster, streaming, parallelism 2) with its workers in
// this process (LOOPBACK), beside Flink's own DataStream intervalJoin on
// the same input in a JVM of its own (peers/flink). Every row reports the
// Flink job's run time, the state calls its workers made (internal/fncalls,
// exact), and the peak memory of the JVM and of this process.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/beamjoin/beamjoin/internal/flinkrun"
	"github.com/beamjoin/beamjoin/internal/fncalls"
)

var (
	flinkBenchN       = flag.Int64("flink-bench-n", 100_000, "BenchmarkFlinkPipeline: elements per run")
	flinkBenchReverse = flag.Bool("flink-bench-reverse", false, "BenchmarkFlinkPipeline: run the rows in reverse order")
	flinkProfileDir   = flag.String("flink-profile-dir", "", "BenchmarkFlinkPipeline: write each row's Go CPU profile and the JVM's flight recording here")
	flinkLogDir       = flag.String("flink-log-dir", "", "BenchmarkFlinkPipeline: write each JVM's log here")
)

// flinkPipelineCases are the rows of BenchmarkFlinkPipeline that run Beam
// pipelines; "flink-intervaljoin" is Flink's own join (peers/flink). The
// rows whose name ends in fewKeysSuffix run on the input with fewKeys
// keys instead of 1000, where a key has many elements in a bundle: the
// state calls a bundle's cache saves show there.
//
// "-appendeach" rows are their row with every append a state call of its
// own, as before write-behind (join.NoWriteBehind); "cleanup60s" rows take
// CleanupEvery(time.Minute): over 10 keys, the default cadence makes each
// key's cleanup firings a chain of bundles with one element of the key
// each (docs/performance.md, "On Flink"), a minute's lets a key have
// several elements in a bundle.
var flinkPipelineCases = []string{"bag-append", "handwritten-inner", "interval-inner", "interval-inner-appendeach", "interval-left-final",
	"interval-inner" + fewKeysSuffix, "interval-inner-cleanup60s" + fewKeysSuffix, "interval-inner-cleanup60s-appendeach" + fewKeysSuffix}

const (
	fewKeys       = 10
	fewKeysSuffix = "-10keys"
)

// flinkInput is the input of every row: the pipeline benchmarks' standard
// input, unpaced (Flink has back pressure).
func flinkInput(n int64) genSpec {
	g := standard(n)
	g.Ahead = 0
	return g
}

// BenchmarkFlinkPipeline runs each row once on -flink-bench-n generated
// elements. It is skipped unless scripts/flink.sh has resolved the job
// server (flinkrun.ClasspathEnv); the Flink row needs the peers' classpath
// too (flinkrun.PeersClasspathEnv). make bench-flink runs it in rounds,
// alternating the order of the rows (-flink-bench-reverse).
//
//	BEAMJOIN_FLINK_CLASSPATH=$(scripts/flink.sh classpath) BEAMJOIN_FLINK_PEERS_CLASSPATH=$(scripts/flink.sh peers) \
//	    go test ./transforms/join -run '^$' -bench BenchmarkFlinkPipeline -benchtime 1x
func BenchmarkFlinkPipeline(b *testing.B) {
	cp := flinkrun.Classpath(b)
	fncalls.Install()
	rows := append([]string{"flink-intervaljoin"}, flinkPipelineCases...)
	if *flinkBenchReverse {
		for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
			rows[i], rows[j] = rows[j], rows[i]
		}
	}
	for _, row := range rows {
		g := flinkInput(*flinkBenchN)
		name, few := strings.CutSuffix(row, fewKeysSuffix)
		if few {
			g.Keys = fewKeys
		}
		b.Run(fmt.Sprintf("%s/N=%d", row, g.N), func(b *testing.B) {
			for range b.N {
				if row == "flink-intervaljoin" {
					runFlinkIntervalJoin(b, g)
					continue
				}
				runOnFlink(b, cp, g, row, pipelineCaseNamed(b, name))
			}
		})
	}
}

func pipelineCaseNamed(b *testing.B, name string) pipelineCase {
	for _, c := range pipelineCases {
		if c.name == name {
			return c
		}
	}
	b.Fatalf("no pipeline case %q", name)
	return pipelineCase{}
}

// runOnFlink runs one pipeline case on a job server of its own and
// reports its figures.
func runOnFlink(b *testing.B, cp string, g genSpec, row string, c pipelineCase) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	opts := append([]string(nil), flinkrun.TimestampOptions...)
	if *flinkProfileDir != "" {
		opts = append(opts, "-XX:StartFlightRecording=filename="+filepath.Join(*flinkProfileDir, row+".jfr")+",settings=profile")
	}
	js, err := flinkrun.Start(ctx, flinkrun.Config{Classpath: cp, Parallelism: 2, JavaOptions: opts})
	if err != nil {
		b.Fatal(err)
	}
	defer js.Stop()

	p, s := beam.NewPipelineWithRoot()
	left, right := generate(s, g)
	c.build(s, left, right)
	beamlog.SetupLogging("warn", "text")
	consumed.Store(0)
	handBuffered.reset()
	results.reset(0)

	fncalls.Reset()
	usage := flinkrun.MeasureUsage(js.Pid())
	stopProfile := startCPUProfile(b, row)
	start := time.Now()
	_, err = flinkrun.Execute(ctx, p, flinkrun.Options{Endpoint: js.Endpoint, Environment: flinkrun.Loopback, Parallelism: 2, Name: row})
	wall := time.Since(start)
	stopProfile()
	flinkrun.KeepLog(b, *flinkLogDir, row, js.Log())
	if err != nil {
		b.Fatal(err)
	}
	calls := fncalls.Read()
	u := usage()
	writeThreadCPU(b, row, js.Pid())
	if *flinkProfileDir != "" {
		if err := flinkrun.DumpFlightRecording(js.Pid(), filepath.Join(*flinkProfileDir, row+".jfr")); err != nil {
			b.Error(err)
		}
	}
	if want := c.want(g); want >= 0 && results.n.Load() != want {
		b.Fatalf("%s: %d records, want %d", c.name, results.n.Load(), want)
	}
	run, err := flinkrun.JobRunTime(js.Log())
	if err != nil {
		b.Fatal(err)
	}
	st, bundles := statefulCalls(calls)
	n := float64(g.N)
	b.ReportMetric(n/run.Seconds(), "elem/s")
	b.ReportMetric(n/wall.Seconds(), "elem/s-wall")
	b.ReportMetric(float64(st.Calls())/n, "state-calls/elem")
	b.ReportMetric(float64(st.Gets)/n, "state-gets/elem")
	b.ReportMetric(float64(st.Appends)/n, "state-appends/elem")
	b.ReportMetric(float64(st.Clears)/n, "state-clears/elem")
	// The bundles of the stateful stage, timer-only ones among them.
	b.ReportMetric(float64(bundles), "bundles")
	b.ReportMetric(float64(u.JVMPeakRSS)/(1<<20), "jvm-peak-RSS-MB")
	b.ReportMetric(float64(u.GoPeakRSS)/(1<<20), "go-peak-RSS-MB")
	b.ReportMetric(u.JVMCPU.Seconds()*1e6/n, "jvm-cpu-us/elem")
	b.ReportMetric(u.GoCPU.Seconds()*1e6/n, "go-cpu-us/elem")
}

// statefulCalls sums the state calls of the transforms that made any, and
// returns the bundles of the busiest of them: the stateful stage's.
func statefulCalls(c fncalls.Counts) (fncalls.State, int64) {
	st, _ := c.Matching(func(string) bool { return true })
	var bundles int64
	for name, s := range c.State {
		if s.Calls() > 0 {
			bundles = max(bundles, c.Bundles[name])
		}
	}
	return st, bundles
}

// startCPUProfile writes this process's CPU profile of a row to
// -flink-profile-dir, if set.
func startCPUProfile(b *testing.B, name string) (stop func()) {
	if *flinkProfileDir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(*flinkProfileDir, name+".cpu.pprof"))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// writeThreadCPU writes the CPU time of the JVM's threads by name to
// -flink-profile-dir, if set, busiest first.
func writeThreadCPU(b *testing.B, name string, pid int) {
	if *flinkProfileDir == "" {
		return
	}
	threads, err := flinkrun.ThreadCPU(pid)
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, 0, len(threads))
	for t := range threads {
		names = append(names, t)
	}
	sort.Slice(names, func(i, j int) bool { return threads[names[i]] > threads[names[j]] })
	var out strings.Builder
	for _, t := range names {
		fmt.Fprintf(&out, "%8.2fs  %s\n", threads[t].Seconds(), t)
	}
	if err := os.WriteFile(filepath.Join(*flinkProfileDir, name+".jvm-threads.txt"), []byte(out.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

// flinkPairs is IntervalJoinBench's line of results.
var flinkPairs = regexp.MustCompile(`(?m)^pairs=(\d+) net-runtime-ms=(\d+)$`)

// runFlinkIntervalJoin runs Flink's DataStream intervalJoin on the same
// input (peers/flink, IntervalJoinBench, which makes it from the same
// formula) in a JVM of its own, and reports its figures.
func runFlinkIntervalJoin(b *testing.B, g genSpec) {
	cp := flinkrun.PeersClasspath(b)
	var opts []string
	if *flinkProfileDir != "" {
		opts = append(opts, "-XX:StartFlightRecording=filename="+filepath.Join(*flinkProfileDir, "flink-intervaljoin.jfr")+",settings=profile")
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	args := []string{
		"--n", strconv.FormatInt(g.N, 10), "--keys", strconv.FormatInt(g.Keys, 10),
		"--pair", strconv.FormatInt(g.Pair, 10), "--gap", strconv.FormatInt(g.Gap, 10),
		"--value", strconv.Itoa(g.Value), "--every", strconv.FormatInt(g.Every, 10),
		"--lower", ms(-5 * time.Second), "--upper", ms(5 * time.Second), "--parallelism", "2",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	res, err := flinkrun.RunJava(ctx, flinkrun.JavaRun{Classpath: cp, Main: "io.github.beamjoin.peers.IntervalJoinBench", Args: args, JavaOptions: opts})
	flinkrun.KeepLog(b, *flinkLogDir, "flink-intervaljoin", res.Output)
	if err != nil {
		b.Fatalf("%v\n%s", err, res.Output)
	}
	m := flinkPairs.FindStringSubmatch(res.Output)
	if m == nil {
		b.Fatalf("IntervalJoinBench printed no result:\n%s", res.Output)
	}
	if pairs, _ := strconv.ParseInt(m[1], 10, 64); pairs != g.N/2 {
		b.Fatalf("flink-intervaljoin: %d pairs, want %d", pairs, g.N/2)
	}
	run, err := flinkrun.JobRunTime(res.Output)
	if err != nil {
		b.Fatal(err)
	}
	n := float64(g.N)
	b.ReportMetric(n/run.Seconds(), "elem/s")
	b.ReportMetric(n/res.Wall.Seconds(), "elem/s-wall")
	b.ReportMetric(float64(res.PeakRSS)/(1<<20), "jvm-peak-RSS-MB")
	// The JVM's CPU time includes its start and Flink's cluster's: not
	// comparable with the Beam rows', which count the job's alone.
	b.ReportMetric(res.CPU.Seconds()*1e6/n, "jvm-cpu-us/elem-whole")
}
