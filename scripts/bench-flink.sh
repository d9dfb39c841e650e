#!/bin/sh
# make bench-flink (docs/performance.md, "On Flink"): beamjoin on a real
# Flink against what a team on Flink would pick instead, every ratio from
# the same run. Not part of make test.
#
# Each round runs, one JVM per row, back to back:
#   - BenchmarkFlinkPipeline (transforms/join): on BENCH_FLINK_N generated
#     elements (default 100,000), Flink's own DataStream intervalJoin
#     (peers/flink), the bag-append floor, the hand-written Beam join,
#     Interval inner and left outer EmitFinal on Flink streaming, and
#     Interval on the same input over 10 keys;
#   - BenchmarkFlinkQuery (pipelines/nexmark): Nexmark Q3, Q8 and winning
#     bids on BENCH_FLINK_EVENTS events (default 100,000), beamjoin's Go
#     queries against Beam Java's Nexmark on the classic and the portable
#     Flink runner.
# BENCH_FLINK_ROUNDS rounds (default 2), the order of the rows reversed in
# even rounds, so that each ratio is the median of paired runs. The job
# server and the Java peers are resolved with Maven (scripts/flink.sh;
# about 700 MB the first time, in ~/.m2). Raw results go to
# .bench-flink/raw.txt, each JVM's log to .bench-flink/logs/, the table to
# .bench-flink/table.txt. BENCH_FLINK_PROFILE=1 adds a round with Go CPU
# profiles, JVM flight recordings and the JVMs' CPU per thread in
# .bench-flink/profile/ (not in the table). About 30 minutes on 2 cores
# with the defaults.
set -eu
GO=${GO:-go}
N=${BENCH_FLINK_N:-50000}
EVENTS=${BENCH_FLINK_EVENTS:-50000}
ROUNDS=${BENCH_FLINK_ROUNDS:-2}
DIR=$(pwd)/.bench-flink
rm -rf "$DIR"
mkdir -p "$DIR/logs"
BEAMJOIN_FLINK_CLASSPATH=$(scripts/flink.sh classpath)
BEAMJOIN_FLINK_PEERS_CLASSPATH=$(scripts/flink.sh peers)
export BEAMJOIN_FLINK_CLASSPATH BEAMJOIN_FLINK_PEERS_CLASSPATH
# The test processes' temporary files (the Go SDK leaves an empty
# beamloopbackworker-* file in the temporary directory for every LOOPBACK
# job) go to a directory removed at the end.
mkdir -p "$DIR/tmp"
$GO test -c -o "$DIR/join.test" ./transforms/join
$GO test -c -o "$DIR/nexmark.test" ./pipelines/nexmark
start=$(date +%s)

# round N [DIR FLAGS]: one round of both benchmarks, appended to raw.txt;
# with a directory, profiled there instead.
round() {
	out=$DIR/raw.txt
	extra=""
	if [ -n "${2:-}" ]; then
		out=$2/raw.txt
		extra="-flink-profile-dir $2"
	fi
	rev="" nrev=""
	if [ $(($1 % 2)) -eq 0 ]; then
		rev=-flink-bench-reverse nrev=-flink-nexmark-reverse
	fi
	mkdir -p "$DIR/logs/round$1"
	rc=0
	echo "# round $1 joins, $(uptime)" >> "$out"
	(cd transforms/join && TMPDIR=$DIR/tmp "$DIR/join.test" -test.run '^$' -test.bench '^BenchmarkFlinkPipeline$' -test.benchtime 1x -test.timeout 120m \
		-flink-bench-n "$N" $rev $extra -flink-log-dir "$DIR/logs/round$1") >> "$out" 2>> "$DIR/stderr.log" || rc=1
	echo "# round $1 nexmark, $(uptime)" >> "$out"
	(cd pipelines/nexmark && TMPDIR=$DIR/tmp "$DIR/nexmark.test" -test.run '^$' -test.bench '^BenchmarkFlinkQuery$' -test.benchtime 1x -test.timeout 240m \
		-flink-nexmark-events "$EVENTS" $nrev $extra -flink-log-dir "$DIR/logs/round$1") >> "$out" 2>> "$DIR/stderr.log" || rc=1
	echo "# round $1 done, $(uptime)" >> "$out"
	return $rc
}

# summarize_profiles DIR: for each Go CPU profile, the functions that
# take the most of it (cumulative); for each JVM flight recording, its
# execution samples by thread (digits left out, so that a pool's threads
# add up) and by top frame.
summarize_profiles() {
	for f in "$1"/*.cpu.pprof; do
		[ -e "$f" ] || continue
		$GO tool pprof -top -cum -nodecount 60 "$f" > "${f%.cpu.pprof}.pprof-top.txt" 2>/dev/null || true
	done
	for f in "$1"/*.jfr; do
		[ -e "$f" ] || continue
		jfr print --events jdk.ExecutionSample "$f" | awk '
			/sampledThread = / { t = $0; sub(/.*sampledThread = "/, "", t); sub(/".*/, "", t); gsub(/[0-9]+/, "#", t); n++; next }
			/stackTrace = \[/ { getline; f = $0; sub(/^ +/, "", f); sub(/\(.*/, "", f); threads[t]++; frames[f]++; next }
			END {
				printf "%d execution samples\n\nby thread:\n", n
				for (k in threads) printf "%6d %5.1f%%  %s\n", threads[k], 100 * threads[k] / n, k | "sort -rn"
				close("sort -rn")
				printf "\nby top frame:\n"
				for (k in frames) printf "%6d %5.1f%%  %s\n", frames[k], 100 * frames[k] / n, k | "sort -rn | head -40"
			}' > "${f%.jfr}.jfr-top.txt" || true
	done
}

status=0
i=1
while [ "$i" -le "$ROUNDS" ]; do
	round "$i" || status=1
	i=$((i + 1))
done
if [ -n "${BENCH_FLINK_PROFILE:-}" ]; then
	mkdir -p "$DIR/profile"
	round "$i" "$DIR/profile" || status=1
	summarize_profiles "$DIR/profile"
fi
grep -E '^(# round|Benchmark|--- (FAIL|SKIP))|flink_bench_test' "$DIR/raw.txt" || true
{
	echo "make bench-flink: $ROUNDS rounds, N=$N elements, $EVENTS Nexmark events, $(( ($(date +%s) - start) / 60 )) minutes; $(nproc) cores; $(uname -sr); $(java -version 2>&1 | head -1); $($GO version)"
	grep '^# round' "$DIR/raw.txt"
	$GO run ./cmd/benchtable "$DIR/raw.txt"
} | tee "$DIR/table.txt"
rm -rf "$DIR/join.test" "$DIR/nexmark.test" "$DIR/tmp"
exit $status
