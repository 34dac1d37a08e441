#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the unit-test binaries given as arguments. Each prints
# "unit-plan: N" before its cmocka group and "unit-result: N F" after it.
# One line per group, the failures' details, then "N passed, N failed".
# A binary that dies before its result line (a sanitizer report, for
# example) counts all of its planned tests as failed.

set -u
passed=0
failed=0

for bin in "$@"; do
	name=unit-${bin##*/test_}
	log=$bin.log
	"$bin" >"$log" 2>&1
	rc=$?
	plan=$(sed -n 's/^unit-plan: \([0-9]*\)$/\1/p' "$log")
	result=$(sed -n 's/^unit-result: \([0-9]* [0-9]*\)$/\1/p' "$log")
	if [ -z "$plan" ]; then
		echo "FAIL $name: did not start (exit status $rc, log: $log)"
		tail -n 10 "$log" | sed 's/^/    /'
		failed=$((failed + 1))
		continue
	fi
	if [ -z "$result" ]; then
		echo "FAIL $name: died with exit status $rc, all $plan counted as failed (log: $log)"
		grep -E '^\[ RUN|ERROR|SUMMARY|runtime error' "$log" | tail -n 10 |
			sed 's/^/    /'
		failed=$((failed + plan))
		continue
	fi
	n=${result% *}
	f=${result#* }
	if [ "$f" = 0 ] && [ "$rc" = 0 ]; then
		echo "PASS $name ($n tests)"
	elif [ "$f" = 0 ]; then
		# every test passed but the process failed (a leak report)
		echo "FAIL $name: exit status $rc after all $n tests passed (log: $log)"
		grep -E 'ERROR|SUMMARY' "$log" | head -n 5 | sed 's/^/    /'
		f=1
	else
		echo "FAIL $name: $f of $n failed (log: $log)"
		grep -E '^ERROR: |^\[  ERROR   \]|^\[  FAILED  \] [A-Za-z0-9_]+$' \
			"$log" | awk '!seen[$0]++' | sed 's/^/    /'
	fi
	passed=$((passed + n - f))
	failed=$((failed + f))
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
