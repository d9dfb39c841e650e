# beamjoin's two commands are `make run` and `make test`; both download what
# they need through the Go module proxy, so a machine with only Go works.

GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Packages whose concurrency the race detector checks on every `make test`.
RACE_PKGS   ?= ./transforms/internal/match/... ./transforms/streamjoiner/... ./pipelines/jsonl/... ./pipelines/pubsubio/...

.PHONY: run test flink-test lint bench bench-flink fuzz stress tools sqlite-late nexmark

# The main job: reconcile the sample orders and payments on Prism, in
# process. A payment belongs to an order if it comes 0-15 min after it; a
# left outer join with final emission lists the unpaid orders.
run:
	@echo 'make run: building and running cmd/beamjoin (the first build compiles Beam and its gRPC stack: 3-8 minutes on 2 cores; later runs take seconds)' >&2
	$(GO) run ./cmd/beamjoin interval \
		--left 'testdata/orders.jsonl' --right 'testdata/payments.jsonl' \
		--key order_id --time ts \
		--lower 0 --upper 15m --type left --emit final \
		--dead-letter /dev/stderr

test: tools
	$(GO) vet ./...
	$(GO) test -timeout 30m ./...
	$(GO) test -race $(RACE_PKGS)
	$(MAKE) flink-test

# The Flink suite: beamjoin on a real Apache Flink (Beam's Flink job server
# with Flink's embedded cluster, parallelism 2), its TestFlink tests in the
# packages they test. scripts/flink.sh resolves the job server with Maven
# (cached in .flink/ and ~/.m2), installs a JDK and Maven from Debian's
# packages where they are missing, and runs the tests; each package's tests
# start a job server on free loopback ports and stop it when they end.
flink-test:
	GO=$(GO) scripts/flink.sh test

# sqlite3, which the end-to-end and Nexmark tests compare beamjoin against,
# from Debian's packages when it is missing (scripts/tools.sh).
tools:
	@scripts/tools.sh

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# Benchmarks: the matching core and the StreamJoiner
# against nested loops, state bytes, and pipelines on Prism in process
# against a bag-append baseline and a hand-written interval join (with
# what each buffers on a steady key), scaling and a hot key; hot keys
# found at run time (the default layout against NoHotKeyDetection, three
# interleaved runs on ordinary keys, and one hot key among 1000 ordinary
# ones at 10k and 100k buffered); the interval join's
# bounded path against the window join on a bounded input, and `beamjoin
# interval` on 2x100k generated lines, bounded vs streaming path and SQLite;
# the Pub/Sub source on the pstest fake against a bare pull loop and Receive
# (msgs/s and acked/s); the window join's default and late-counting paths
# against the same join written by hand with CoGroupByKey, on a bounded
# input (three interleaved runs, so that each pair of runs sees the same
# load), and `beamjoin window` on the same 2x100k lines, its CoGroupByKey
# path vs its late-counting path; the interval join's bounded bundle cache
# over 1M elements and 100k keys; the as-of join beside the interval join
# on the same input, and the versions an as-of key holds on a steady stream
# against what its rule requires. Raw, benchstat-compatible
# results go to .bench/raw.txt (Prism's log to .bench/prism.log); the table
# is printed at the end. BENCH_1M=1 adds the 1M-element scaling run (about
# five more minutes). Pipeline runs take one iteration each (-benchtime 1x).
bench: tools
	@mkdir -p .bench
	$(GO) test -run '^$$' -bench 'BenchmarkArrival' -benchmem -benchtime 0.3s -count 5 ./transforms/internal/match > .bench/raw.txt
	$(GO) test -run '^$$' -bench 'BenchmarkStreamJoiner' -benchmem -benchtime 0.3s -count 5 ./transforms/streamjoiner >> .bench/raw.txt
	$(GO) test -run '^$$' -bench 'BenchmarkStateBytes' -benchtime 1x ./transforms/join/internal/bagstate >> .bench/raw.txt
	$(GO) test -run '^$$' -bench 'BenchmarkPipeline/./^N=10000$$' -benchtime 1x -count 3 -timeout 30m ./transforms/join >> .bench/raw.txt 2> .bench/prism.log
	$(GO) test -run '^$$' -bench 'BenchmarkPipeline/^(bag-append|handwritten-inner|interval-inner-split|interval-left-final|window-tumbling)$$/^N=100000$$' -benchtime 1x -timeout 30m ./transforms/join >> .bench/raw.txt 2>> .bench/prism.log
	for i in 1 2 3; do $(GO) test -run '^$$' -bench 'BenchmarkPipeline/^interval-inner(-nodetect)?$$/^N=100000$$' -benchtime 1x -timeout 30m ./transforms/join >> .bench/raw.txt 2>> .bench/prism.log || exit 1; done
	$(GO) test -run '^$$' -bench 'BenchmarkSteadyKey' -benchtime 1x -timeout 30m ./transforms/join >> .bench/raw.txt 2>> .bench/prism.log
	$(GO) test -run '^$$' -bench 'BenchmarkPipeline/^interval-inner$$/^N=300000$$' -benchtime 1x -timeout 30m ./transforms/join >> .bench/raw.txt 2>> .bench/prism.log
	if [ -n "$(BENCH_1M)" ]; then $(GO) test -run '^$$' -bench 'BenchmarkPipeline/^interval-inner$$/^N=1000000$$' -benchtime 1x -timeout 60m ./transforms/join >> .bench/raw.txt 2>> .bench/prism.log; fi
	$(GO) test -run '^$$' -bench '^BenchmarkHotKey$$/./^buffered=(100|1000|10000|100000)$$' -benchtime 1x -timeout 60m ./transforms/join >> .bench/raw.txt 2>> .bench/prism.log
	$(GO) test -run '^$$' -bench '^BenchmarkHotKeyAmongOrdinary$$' -benchtime 1x -timeout 60m ./transforms/join >> .bench/raw.txt 2>> .bench/prism.log
	$(GO) test -run '^$$' -bench '^BenchmarkHotKeyState$$/./^buffered=(1000|10000|100000)$$' -benchtime 1x -timeout 30m ./transforms/join/internal/interval >> .bench/raw.txt
	$(GO) test -run '^$$' -bench '^(BenchmarkOrdinaryKeysState|BenchmarkHotKeyAmongOrdinaryState)$$' -benchtime 1x -timeout 30m ./transforms/join/internal/interval >> .bench/raw.txt
	$(GO) test -run '^$$' -bench 'BenchmarkMulti/' -benchtime 1x -timeout 30m ./transforms/join >> .bench/raw.txt 2>> .bench/prism.log
	$(GO) test -run '^$$' -bench 'BenchmarkRead' -benchtime 1x -count 3 -timeout 30m ./pipelines/pubsubio >> .bench/raw.txt 2>> .bench/prism.log
	$(GO) test -run '^$$' -bench 'BenchmarkBounded/^(interval-bounded-inner|interval-bounded-left-final|window-tumbling)$$/^N=100000$$' -benchtime 1x -count 3 -timeout 30m ./transforms/join >> .bench/raw.txt 2>> .bench/prism.log
	$(GO) test -run '^$$' -bench 'BenchmarkBounded/^interval-inner$$/^N=100000$$' -benchtime 1x -timeout 30m ./transforms/join >> .bench/raw.txt 2>> .bench/prism.log
	$(GO) test -run '^$$' -bench 'BenchmarkBoundedHotKey' -benchtime 1x -timeout 60m ./transforms/join >> .bench/raw.txt 2>> .bench/prism.log
	$(GO) test -run '^$$' -bench 'BenchmarkBatchInterval' -benchtime 1x -timeout 60m ./pipelines/jsonjoin >> .bench/raw.txt 2>> .bench/prism.log
	$(GO) test -run '^$$' -bench 'BenchmarkReplay' -benchmem -benchtime 1x -timeout 30m ./pipelines/jsonl >> .bench/raw.txt 2>> .bench/prism.log
	$(GO) test -run '^$$' -bench 'BenchmarkReplayInterval' -benchtime 1x -timeout 60m ./pipelines/jsonjoin >> .bench/raw.txt 2>> .bench/prism.log
	for i in 1 2 3; do $(GO) test -run '^$$' -bench 'BenchmarkWindowLate/.*/N=100000$$' -benchtime 1x -timeout 30m ./transforms/join >> .bench/raw.txt 2>> .bench/prism.log || exit 1; done
	$(GO) test -run '^$$' -bench 'BenchmarkBatchWindow' -benchtime 1x -count 2 -timeout 60m ./pipelines/jsonjoin >> .bench/raw.txt 2>> .bench/prism.log
	$(GO) test -run '^$$' -bench 'BenchmarkIntervalBundleCache' -benchmem -benchtime 1x -timeout 30m ./transforms/join/internal/interval >> .bench/raw.txt
	for i in 1 2 3 4 5; do $(GO) test -run '^$$' -bench 'BenchmarkResultDecode' -benchmem ./transforms/join >> .bench/raw.txt || exit 1; done
	for i in 1 2 3; do $(GO) test -run '^$$' -bench 'BenchmarkAsOfPipeline/.*/N=100000$$' -benchmem -benchtime 1x -timeout 30m ./transforms/join >> .bench/raw.txt 2>> .bench/prism.log || exit 1; done
	$(GO) test -run '^$$' -bench 'BenchmarkAsOfSteadyKey' -benchtime 1x ./transforms/join/internal/asof >> .bench/raw.txt
	$(GO) test ./cmd/beamjoin/e2e -run '^TestE2EAsOfAgainstSQLite$$' -count=1 -v -timeout 60m -asof-lines 100000 > .bench/asof-sqlite.txt
	$(GO) run ./cmd/benchtable .bench/raw.txt

# beamjoin on a real Flink against what a team on Flink would pick instead
# (issue 49; docs/performance.md, "On Flink"): Interval, the hand-written
# Beam join and the bag-append floor on Flink streaming beside Flink's own
# DataStream intervalJoin (peers/flink), with the Fn API's state calls per
# element; Nexmark Q3, Q8 and winning bids against Beam Java's Nexmark on
# the classic and the portable Flink runner; peak memory of every JVM and
# Go worker. BENCH_FLINK_ROUNDS rounds (default 2) of BENCH_FLINK_N
# elements and BENCH_FLINK_EVENTS events (default 50,000 each), in
# alternating order, one table of ratios from the same run in
# .bench-flink/table.txt (scripts/bench-flink.sh); BENCH_FLINK_PROFILE=1
# adds a profiled round. About 12 minutes a round on 2 shared cores,
# once the test binaries are built; Maven fetches about 700 MB the first
# time. Not part of make test.
bench-flink:
	GO=$(GO) scripts/bench-flink.sh

# A longer fuzz run of the matching core against its brute-force oracle, then
# the interval join on Prism against the SPEC oracle on 1000 random cases
# (a failure prints its seed and a command that replays the case), then the
# runner-model harness on 50,000 generated cases (make test runs 1,000-2,000).
fuzz:
	$(GO) test ./transforms/internal/match -run '^$$' -fuzz FuzzBuffer -fuzztime 60s
	BEAMJOIN_DIFF_SEED=random BEAMJOIN_DIFF_CASES=1000 $(GO) test ./transforms/join -run '^TestDifferential$$' -count=1 -timeout 60m
	BEAMJOIN_MODEL_CASES=50000 $(GO) test ./transforms/join -run '^TestRunnerModel(UniqueLeft|Monotone)?$$' -count=1 -timeout 60m

# Issue 9's check of late data as a user would make it, at its size: 2 x
# 12,500 shuffled orders and payments replayed through `beamjoin interval
# --watermark-lag 10m`, against SQLite on the same input less the late
# elements (sqlite3 needed; `make test` runs the same check on 2 x 2,000
# lines). About a minute.
sqlite-late: tools
	$(GO) test ./cmd/beamjoin/e2e -run '^TestE2EReplayAgainstSQLite$$' -count=1 -v -sqlite-lines 12500

# Every test package, one at a time and each with -count=2, while busy
# loops occupy every core (scripts/stress.sh; STRESS_RUNS=1 pass by
# default): how the suite is checked to repeat and to assert only on what
# the runner guarantees. Not part of `make test`.
stress:
	GO=$(GO) scripts/stress.sh

# Nexmark's join queries (docs/nexmark.md): Q3, Q8 and winning
# bids on NEXMARK_EVENTS generated events (default 100,000, about two
# minutes once built), each checked against SQLite, then beamjoin vs the
# SDK-only versions and the streaming peak RSS at 10k and 100k events
# (scripts/nexmark.sh). NEXMARK_EVENTS=1000000 NEXMARK_RSS_EVENTS=100000,1000000
# for the 1M figures (about 16 minutes on 2 cores once built).
nexmark: tools
	GO=$(GO) scripts/nexmark.sh
