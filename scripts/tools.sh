#!/usr/bin/env bash
# make tools: the programs beyond Go that the tests use, installed from
# Debian's packages when missing (as root, or through sudo).
#
#   scripts/tools.sh        sqlite3, the SQL engine the end-to-end and
#                           Nexmark tests check beamjoin's records against;
#                           when it cannot be installed, those tests are
#                           skipped and say so, and this script says why
#   scripts/tools.sh java   a JDK 17 and Maven, which the Flink suite needs
#                           (scripts/flink.sh); when they cannot be
#                           installed, this says what is missing and fails
set -uo pipefail

# install PKG... installs Debian packages, or says why it cannot.
install() {
	local as_root=()
	if [ "$(id -u)" -ne 0 ]; then
		if command -v sudo >/dev/null 2>&1; then
			as_root=(sudo -n)
		else
			echo "make tools: cannot install $* (not root, no sudo)" >&2
			return 1
		fi
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "make tools: cannot install $* (no apt-get)" >&2
		return 1
	fi
	echo "make tools: installing $* from Debian's packages" >&2
	export DEBIAN_FRONTEND=noninteractive
	if ! "${as_root[@]}" apt-get install -y -qq "$@" >/dev/null 2>&1; then
		"${as_root[@]}" apt-get update -qq >/dev/null 2>&1
		if ! "${as_root[@]}" apt-get install -y -qq "$@" >/dev/null 2>&1; then
			echo "make tools: could not install $*" >&2
			return 1
		fi
	fi
}

case "${1:-sqlite}" in
java)
	missing=()
	command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
	command -v mvn >/dev/null 2>&1 || missing+=(maven)
	if [ ${#missing[@]} -gt 0 ]; then
		install "${missing[@]}" || exit 1
	fi
	;;
*)
	if command -v sqlite3 >/dev/null 2>&1; then
		exit 0
	fi
	if ! install sqlite3; then
		echo "make tools: the SQLite comparisons will be skipped" >&2
		exit 0
	fi
	sqlite3 --version >&2
	;;
esac
