#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh SECONDS NAME...: run out/fuzz-NAME for SECONDS each, on a corpus
# in out/corpus/NAME/ seeded from seeds/NAME/. One line per fuzzer, then
# "N passed, N failed".

set -u
here=$(cd "$(dirname "$0")" && pwd)
out=$here/out
secs=$1
shift
passed=0
failed=0

# inputs stay small: the decoders look at a few hundred bytes at most
max_len() {
	case $1 in
	hello) echo 24 ;;
	cm | cmd | hdr) echo 96 ;;
	rx) echo 320 ;;
	keys) echo 640 ;;
	*) echo 256 ;;
	esac
}

for name in "$@"; do
	bin=$out/fuzz-$name
	log=$out/fuzz-$name.log
	corpus=$out/corpus/$name
	crash=$out/crash/$name
	mkdir -p "$corpus" "$crash"
	"$bin" -max_total_time="$secs" -max_len="$(max_len "$name")" \
		-timeout=10 -print_final_stats=1 \
		-artifact_prefix="$crash/" \
		"$corpus" "$here/seeds/$name" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" |
		tail -n 1)
	if [ "$rc" = 0 ] && [ -n "$execs" ]; then
		echo "PASS fuzz-$name ($execs execs)"
		passed=$((passed + 1))
		continue
	fi
	reason=$(grep -m 1 -E 'invariant failed|runtime error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)' "$log")
	[ -n "$reason" ] || reason="exit status $rc"
	unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | head -n 1)
	echo "FAIL fuzz-$name: $reason${unit:+ (input: $unit)} (log: $log)"
	failed=$((failed + 1))
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
