#!/usr/bin/env bash
# make stress: run every test package, one at a time and each with
# -count=2 (so package-level state left by a first run fails the second),
# while CPU hogs keep every core busy, and count the runs that pass. It is how beamjoin checks
# that its tests assert only on what the runner guarantees (README,
# "Tested under load"). Not part of `make test`.
#
#   STRESS_RUNS   how many passes over the packages (default 1)
#   STRESS_HOGS   busy loops per core (default 2)
#   STRESS_PKGS   the packages (default: every package of the module)
set -uo pipefail
cd "$(dirname "$0")/.."

runs=${STRESS_RUNS:-1}
per_core=${STRESS_HOGS:-2}
pkgs=${STRESS_PKGS:-./...}
go=${GO:-go}
cores=$(getconf _NPROCESSORS_ONLN)
hogs=$((cores * per_core))
log=.stress
mkdir -p "$log"

# Compile first, so the hogs load the tests, not the compiler.
$go test -count=1 -run '^$' $pkgs >/dev/null || exit 1

pids=()
stop() { kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null; }
trap stop EXIT
for _ in $(seq "$hogs"); do
	(while :; do :; done) &
	pids+=($!)
done
list=$($go list $pkgs) || exit 1
echo "stress: $runs passes of go test -count=2, package by package, over $pkgs with $hogs busy loops on $cores cores"

passed=0
for i in $(seq "$runs"); do
	start=$(date +%s)
	ok=1
	: >"$log/run-$i.txt"
	for p in $list; do
		$go test -count=2 -timeout 60m "$p" >>"$log/run-$i.txt" 2>&1 || ok=0
	done
	if [ "$ok" -eq 1 ]; then
		passed=$((passed + 1))
		echo "stress: run $i passed in $(($(date +%s) - start)) s (load $(cut -d' ' -f1 /proc/loadavg))"
	else
		echo "stress: run $i FAILED in $(($(date +%s) - start)) s; output in $log/run-$i.txt:"
		grep -E '^(--- FAIL|FAIL|panic:)' "$log/run-$i.txt" | head -20
	fi
done
echo "stress: $passed of $runs runs passed"
[ "$passed" -eq "$runs" ]
