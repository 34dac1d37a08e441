#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: install what is missing, then build for both kernels (W=1
# and sparse in one build), run checkpatch, the package and initramfs
# checks, the unit tests, the fuzzers and the guest scenarios. Every stage counts as tests; the last
# line is the total, "N passed, N failed". Logs: build/logs/.

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
logs=$top/build/logs
mkdir -p "$logs"
passed=0
failed=0
failures=

# A stage that is one test: PASS or FAIL by its exit status.
one() {
	local name=$1
	shift
	local log=$logs/$name.log
	local t0=$SECONDS

	if "$@" >"$log" 2>&1; then
		echo "PASS $name ($((SECONDS - t0)) s)"
		passed=$((passed + 1))
	else
		echo "FAIL $name: exit status $? (log: $log)"
		tail -n 15 "$log" | sed 's/^/    /'
		failed=$((failed + 1))
		failures="$failures $name"
	fi
}

# the lines of a stage's output that make check shows
shown='^(PASS|FAIL)|passed, [0-9]+ failed'

# tally NAME LOG RC SECONDS: count a stage that ran many tests, from its
# log's last "N passed, N failed" line and its exit status RC.
tally() {
	local name=$1 log=$2 rc=$3 secs=$4 line p f

	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL $name: no summary line (exit status $rc, log: $log)"
		tail -n 15 "$log" | sed 's/^/    /'
		failed=$((failed + 1))
		failures="$failures $name"
		return
	fi
	p=${line%% passed*}
	f=${line#*passed, }
	f=${f%% failed*}
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "FAIL $name: exit status $rc (log: $log)"
		failed=$((failed + 1))
	fi
	[ "$f" != 0 ] || [ "$rc" != 0 ] && failures="$failures $name"
	echo "     $name: $line ($secs s)"
}

# A stage that runs many tests and ends with "N passed, N failed".
many() {
	local name=$1
	shift
	local log=$logs/$name.log
	local t0=$SECONDS rc

	echo "---- $name"
	"$@" 2>&1 | tee "$log" | grep --line-buffered -E "$shown"
	rc=${PIPESTATUS[0]}
	tally "$name" "$log" "$rc" $((SECONDS - t0))
}

# many_bg NAME CMD...: start a stage of many tests in the background, on
# the core the stages in front of many_wait leave idle (they run one
# process at a time); many_wait NAME prints and counts it.
declare -A bg_pid bg_t0
many_bg() {
	local name=$1
	shift
	bg_t0[$name]=$SECONDS
	"$@" >"$logs/$name.log" 2>&1 &
	bg_pid[$name]=$!
}
many_wait() {
	local name=$1 rc=0

	wait "${bg_pid[$name]}" || rc=$?
	echo "---- $name"
	grep -E "$shown" "$logs/$name.log"
	tally "$name" "$logs/$name.log" "$rc" $((SECONDS - bg_t0[$name]))
}

echo "==== installing missing packages (scripts/packages.txt)"
if ! "$top/scripts/deps.sh"; then
	echo "deps: could not install the packages the tests need"
	echo "0 passed, 1 failed"
	exit 1
fi
. "$top/scripts/kernels.sh"

echo "==== kernel modules ($KREL_61, $KREL_612)"
# one build per kernel, W=1 and sparse together; the guests load its
# objects
for krel in "$KREL_61" "$KREL_612"; do
	one "build-$krel-W1-sparse" "$top/scripts/build-modules.sh" \
		"/usr/src/linux-headers-$krel" --strict --sparse
done
# the fuzzers, one process at a time, beside checkpatch and the package
# checks
many_bg fuzz make -s -C "$top/tests/fuzz" run FUZZ_SECONDS="${FUZZ_SECONDS:-20}"
one checkpatch "$top/scripts/checkpatch.sh"

echo "==== packaging (Debian package, DKMS build in a scratch tree)"
many deb-check "$top/tests/pkg/deb-check.sh"
many initramfs-check "$top/tests/pkg/initramfs-check.sh"

echo "==== userspace"
many unit make -s -C "$top/tests/unit" run
many_wait fuzz
many bench-report /usr/bin/python3 "$top/tests/vm/bench-report-test.py"
many profile-report /usr/bin/python3 "$top/tests/vm/profile-report-test.py"

echo "==== guests"
one vm-tools make -s -C "$top/tests/vm/tools"
# the rig's gates tried on purpose first: a green guest set means little
# if a broken kernel could pass them
many vm-selftest "$top/tests/vm/selftest.sh" --kernel 6.1
many vm "$top/tests/vm/vm-check.sh"

echo
[ -n "$failures" ] && echo "failed stages:$failures"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
