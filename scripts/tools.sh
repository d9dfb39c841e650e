#!/usr/bin/env bash
# make tools: the programs beyond Go that the tests compare against. Today
# that is sqlite3, the SQL engine the end-to-end and Nexmark tests check
# beamjoin's records against. It is installed from Debian's packages when
# missing (as root, or through sudo); when it cannot be installed, the
# tests that need it are skipped and say so, and this script says why.
set -uo pipefail

if command -v sqlite3 >/dev/null 2>&1; then
	exit 0
fi
as_root=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		as_root=(sudo -n)
	else
		echo "make tools: sqlite3 is missing and this user cannot install it (not root, no sudo); the SQLite comparisons will be skipped" >&2
		exit 0
	fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "make tools: sqlite3 is missing and there is no apt-get; install sqlite3 to run the SQLite comparisons" >&2
	exit 0
fi
echo "make tools: installing sqlite3 from Debian's packages (the SQL engine the tests compare against)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! "${as_root[@]}" apt-get install -y -qq sqlite3 >/dev/null 2>&1; then
	"${as_root[@]}" apt-get update -qq >/dev/null 2>&1
	if ! "${as_root[@]}" apt-get install -y -qq sqlite3 >/dev/null 2>&1; then
		echo "make tools: could not install sqlite3; the SQLite comparisons will be skipped" >&2
		exit 0
	fi
fi
sqlite3 --version >&2
