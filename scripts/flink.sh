#!/usr/bin/env bash
# scripts/flink.sh: Beam's Flink job server for beamjoin's Flink suite.
#
#   scripts/flink.sh classpath   resolve the job server's classpath with
#                                Maven (scripts/flink/pom.xml) and print the
#                                file that holds it
#   scripts/flink.sh peers       build the Java peers of make bench-flink
#                                (peers/flink: Flink's own interval join,
#                                Beam Java's Nexmark) with Maven and print
#                                the file that holds their classpath
#   scripts/flink.sh test [ARGS] run the Flink suite: go test -run '^TestFlink'
#                                ARGS on the packages that hold it, with
#                                that classpath
#
# The classpath is kept in .flink/ (git-ignored) and reused while the pom is
# unchanged; the jars stay in Maven's local repository (~/.m2). Each suite
# package starts its own job server on free loopback ports and stops it when
# it ends (internal/flinkrun): the JVM is killed with the test process, so an
# interrupted or failed run leaves none behind. Where Java or Maven is missing
# and cannot be installed (scripts/tools.sh java), this fails at once with one
# line that says what is missing and how to get it.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
# The packages that hold TestFlink tests; each starts its own job server
# (flinkrun.Shared) and stops it when its tests end.
FLINK_PKGS=${FLINK_PKGS:-./internal/flinkrun ./transforms/join ./cmd/beamjoin/e2e ./examples/quickstart ./pipelines/pubsubio}

need() {
	if ! command -v "$1" >/dev/null 2>&1; then
		scripts/tools.sh java >&2 || true
	fi
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "scripts/flink.sh: $1 is missing: the Flink suite needs a JDK 17 and Maven 3.8 (Debian: apt-get install openjdk-17-jdk-headless maven)" >&2
		exit 1
	fi
}

classpath() {
	need java
	need mvn
	local pom=scripts/flink/pom.xml
	local sum
	sum=$(sha256sum "$pom" | cut -c1-16)
	local dir=.flink/$sum
	local out=$dir/classpath.txt
	if [ ! -s "$out" ] || ! all_present "$out"; then
		mkdir -p "$dir"
		echo "scripts/flink.sh: resolving Beam's Flink job server with Maven (first time: about 400 MB from Maven Central)" >&2
		if ! mvn -B -q -f "$pom" dependency:build-classpath -Dmdep.outputFile="$PWD/$out.tmp" >"$dir/mvn.log" 2>&1; then
			echo "scripts/flink.sh: Maven could not resolve the job server (scripts/flink/pom.xml); its log: $dir/mvn.log" >&2
			tail -20 "$dir/mvn.log" >&2
			exit 1
		fi
		mv "$out.tmp" "$out"
	fi
	echo "$PWD/$out"
}

# peers compiles peers/flink and writes its classpath, its classes first,
# to .flink/peers-SUM/classpath.txt; the dependencies' part is kept while
# the pom is unchanged.
peers() {
	need java
	need mvn
	local pom=peers/flink/pom.xml
	local sum
	sum=$(sha256sum "$pom" | cut -c1-16)
	local dir=.flink/peers-$sum
	local deps=$dir/dependencies.txt
	mkdir -p "$dir"
	if [ ! -s "$deps" ] || ! all_present "$deps"; then
		echo "scripts/flink.sh: resolving the Java peers' dependencies with Maven (first time: about 270 MB from Maven Central)" >&2
		if ! mvn -B -q -f "$pom" dependency:build-classpath -Dmdep.outputFile="$PWD/$deps.tmp" >"$dir/mvn.log" 2>&1; then
			echo "scripts/flink.sh: Maven could not resolve the Java peers (peers/flink/pom.xml); its log: $dir/mvn.log" >&2
			tail -20 "$dir/mvn.log" >&2
			exit 1
		fi
		mv "$deps.tmp" "$deps"
	fi
	if ! mvn -B -q -f "$pom" compile >"$dir/compile.log" 2>&1; then
		echo "scripts/flink.sh: the Java peers do not compile; the log: $dir/compile.log" >&2
		tail -20 "$dir/compile.log" >&2
		exit 1
	fi
	echo "$PWD/peers/flink/target/classes:$(cat "$deps")" >"$dir/classpath.txt"
	echo "$PWD/$dir/classpath.txt"
}

# all_present checks that every jar of a classpath file is still there
# (~/.m2 may have been cleaned since).
all_present() {
	local IFS=:
	for jar in $(cat "$1"); do
		[ -e "$jar" ] || return 1
	done
}

case "${1:-}" in
classpath)
	classpath
	;;
peers)
	peers
	;;
test)
	shift
	cp=$(classpath)
	BEAMJOIN_FLINK_CLASSPATH=$cp exec "$GO" test -count=1 -timeout 25m -run "${FLINK_RUN:-^TestFlink}" "$@" $FLINK_PKGS
	;;
*)
	echo "usage: scripts/flink.sh classpath | peers | test [go test flags]" >&2
	exit 2
	;;
esac
