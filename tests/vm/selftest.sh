#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The rig's self-test: proves that the gates of tests/vm/vm-check.sh cannot
# pass a broken kernel.  Runs vm-check.sh with a scenario list of its own
# (the body scenarios/selftest.sh does on purpose what a broken kernel
# would) and checks that every row is judged as it must be, plus the
# runner's refusals of bad input (exit status 2) and its --describe
# (both before any boot), and the rig run from copies of the tree under
# /tmp and /dev/shm (clone-check.sh).  One kernel
# (default 6.1, --kernel K for another); five short boots.  Prints PASS/FAIL per check and
# "N passed, N failed".  See Documentation/testing-vm.md.

set -u
here=$(cd "$(dirname "$0")" && pwd)
kernel=6.1
while [ $# -gt 0 ]; do
	case $1 in
	--kernel | -k) [ $# -ge 2 ] || { echo "usage: selftest.sh [--kernel K]" >&2; exit 2; }; kernel=$2; shift ;;
	*) echo "selftest: unknown argument '$1'" >&2; echo "usage: selftest.sh [--kernel K]" >&2; exit 2 ;;
	esac
	shift
done
out=$here/../../build/vm/selftest
rm -rf "$out"
mkdir -p "$out" || exit 2
passed=0
failed=0
# the boots' logs, apart from vm-check's own
export ISER_VM_LOGS=$out/logs

check() { # NAME CONDITION-TEXT: PASS when the command after them succeeds
	local name=$1 what=$2
	shift 2
	if "$@"; then
		echo "PASS selftest $name"
		passed=$((passed + 1))
	else
		echo "FAIL selftest $name: $what"
		failed=$((failed + 1))
	fi
}

# has LOG REGEX: a line of the vm-check output matches
has() {
	grep -qE "$2" "$1"
}

# --- the runner refuses bad input with status 2, before any boot
status_of() { # expected-status LOG CMD...
	local want=$1 log=$2
	shift 2
	"$@" >"$log" 2>&1
	[ $? = "$want" ] && [ -s "$log" ] && ! grep -qE '^[0-9]+ passed' "$log"
}
printf 'bogus none none yes 60 no-such-body\n' >"$out/bad-body.list"
: >"$out/empty.list"
printf 'x none none yes sixty selftest ok\n' >"$out/bad-timeout.list"
printf 'x none none maybe 60 selftest ok\n' >"$out/bad-default.list"
other=6.12
[ "$kernel" != 6.12 ] || other=6.1
printf 'x none none yes:%s 60 selftest ok\n' "$other" >"$out/other-kernel.list"
check usage-unknown-scenario "an unknown scenario name is an error (status 2)" \
	status_of 2 "$out/u1.log" "$here/vm-check.sh" --kernel "$kernel" --scenario no-such-scenario
check usage-unknown-kernel "a kernel that is not installed is an error (status 2)" \
	status_of 2 "$out/u2.log" "$here/vm-check.sh" --kernel 9.99 --scenario ours-load-unload
check usage-missing-list "a missing scenario list is an error (status 2)" \
	env ISER_VM_LIST="$out/no-such.list" bash -c "$(declare -f status_of); status_of 2 '$out/u3.log' '$here/vm-check.sh' --kernel $kernel"
check usage-empty-list "an empty scenario list is an error (status 2), not 0 passed" \
	env ISER_VM_LIST="$out/empty.list" bash -c "$(declare -f status_of); status_of 2 '$out/u4.log' '$here/vm-check.sh' --kernel $kernel"
check usage-missing-body "a row whose body does not exist is an error (status 2)" \
	env ISER_VM_LIST="$out/bad-body.list" bash -c "$(declare -f status_of); status_of 2 '$out/u5.log' '$here/vm-check.sh' --kernel $kernel"
# a body outside scenarios/ through a relative name, so the tree stays clean
printf 'f() {\n' >"$out/broken.sh"
printf 'bogus none none yes 60 ../../../build/vm/selftest/broken\n' >"$out/broken-body.list"
check usage-body-syntax "a row whose body does not parse is an error (status 2)" \
	env ISER_VM_LIST="$out/broken-body.list" bash -c "$(declare -f status_of); status_of 2 '$out/u5b.log' '$here/vm-check.sh' --kernel $kernel"
check usage-body-syntax-says "...naming the body" grep -q "broken.sh does not parse" "$out/u5b.log"
check usage-bad-timeout "a row with a bad timeout is an error (status 2)" \
	env ISER_VM_LIST="$out/bad-timeout.list" bash -c "$(declare -f status_of); status_of 2 '$out/u6.log' '$here/vm-check.sh' --kernel $kernel"
check usage-bad-default "a row with a bad DEFAULT is an error (status 2)" \
	env ISER_VM_LIST="$out/bad-default.list" bash -c "$(declare -f status_of); status_of 2 '$out/u9.log' '$here/vm-check.sh' --kernel $kernel"
check usage-other-kernel "a default set with no row for the kernel is an error (status 2), not 0 passed" \
	env ISER_VM_LIST="$out/other-kernel.list" bash -c "$(declare -f status_of); status_of 2 '$out/u10.log' '$here/vm-check.sh' --kernel $kernel"
check usage-logs-outside "logs outside the repository are an error (status 2)" \
	env ISER_VM_LOGS=/nonexistent/logs bash -c "$(declare -f status_of); status_of 2 '$out/u8.log' '$here/vm-check.sh' --kernel $kernel"
check usage-bad-option "an unknown option is an error (status 2)" \
	status_of 2 "$out/u7.log" "$here/vm-check.sh" --no-such-option

# --- --describe: every row with its body's description, boots nothing
# describe_all LOG: every row of the list is printed once, in a block of
# its own (the name alone on an unindented line), with at least one line
# of description (indented by four spaces), and no other row
describe_all() {
	"$here/vm-check.sh" --describe >"$1" 2>&1 || return 1
	"$here/vm-check.sh" --list >"$1.list" 2>&1 || return 1
	awk 'NR == FNR { want[$1] = 1; n++; next }
		/^[^ ]/ { cur = $0; rows++
			if (!(cur in want) || (cur in seen)) { print "unexpected row: " cur; bad = 1 }
			seen[cur] = 1; next }
		/^    [^ ]/ { desc[cur]++ }
		END { for (w in want) if (!desc[w]) { print "no description: " w; bad = 1 }
			if (n == 0 || rows != n) bad = 1
			exit bad }' "$1.list" "$1"
}
# describe_one LOG: a named row prints that row only, with the header of
# its body (fio.sh's first line) and its arguments
describe_one() {
	"$here/vm-check.sh" --describe ours-pair-fio >"$1" 2>&1 || return 1
	[ "$(grep -c '^[^ ]' "$1")" = 1 ] && grep -qx 'ours-pair-fio' "$1" &&
		grep -qx '  body: fio --matrix (tests/vm/scenarios/fio.sh)' "$1" &&
		grep -qx '    fio with crc32c verification over an iSER session.' "$1"
}
# describe_siw LOG: another list (ISER_VM_LIST), named rows in the order
# given, and a "siw:BODY" row described by BODY's header
describe_siw() {
	printf '%s\n' 'x-login intree ours no 60 siw:login' 'x-ok none none no 60 selftest ok' >"$out/describe.list"
	ISER_VM_LIST=$out/describe.list "$here/vm-check.sh" --describe x-ok,x-login >"$1" 2>&1 || return 1
	[ "$(grep '^[^ ]' "$1" | paste -sd ' ' -)" = "x-ok x-login" ] &&
		grep -qx '  body: siw:login (tests/vm/scenarios/login.sh)' "$1" &&
		grep -q '^    Login over iSER after TCP discovery' "$1" &&
		grep -q "^    The rig's own gates, tried on purpose" "$1"
}
check describe-all "--describe prints every row of scenarios.list once, each with a description ($out/d1.log)" \
	describe_all "$out/d1.log"
check describe-one "--describe NAME prints that row only, with its body's header ($out/d2.log)" \
	describe_one "$out/d2.log"
check describe-list "--describe reads ISER_VM_LIST, keeps the order of the names, describes a siw: row by its body ($out/d3.log)" \
	describe_siw "$out/d3.log"
check describe-unknown "--describe with an unknown name is an error (status 2)" \
	status_of 2 "$out/d4.log" "$here/vm-check.sh" --describe ours-pair-fio no-such-scenario

# --- boots: the gates, tried on purpose
cat >"$out/gates.list" <<LIST
selftest-ok       none none yes 60 selftest ok
selftest-warn     none none yes 60 selftest warn
selftest-taint    none none yes 60 selftest taint
selftest-console  none none yes 60 selftest console
selftest-hang     none none yes 10 selftest hang
selftest-crash    none none yes 90 selftest crash
selftest-late     none none yes 60 selftest late
LIST
ISER_VM_LIST=$out/gates.list "$here/vm-check.sh" --kernel "$kernel" >"$out/gates.log" 2>&1
rc=$?
g=$out/gates.log
check gates-status "vm-check exits 1 when rows fail (status $rc)" [ $rc = 1 ]
check gate-ok "a clean row passes" has "$g" "^PASS $kernel selftest-ok \\([0-9]+ s\\)\$"
check gate-warn "a WARNING in the window fails the row" \
	has "$g" "^FAIL $kernel selftest-warn: kernel log: WARNING: iser-vm selftest"
check gate-taint "a new taint flag fails the row" \
	has "$g" "^FAIL $kernel selftest-taint: the kernel was tainted: W\\(bit 9\\)"
check gate-console "a bad line only on the console fails the row" \
	has "$g" "^FAIL $kernel selftest-console: console: BUG: iser-vm selftest"
check gate-hang "a row past its timeout fails" \
	has "$g" "^FAIL $kernel selftest-hang: timed out after 10s"
check gate-hang-dump "a row past its timeout leaves its tasks in the kernel log" \
	has "$out/logs/$kernel/selftest-hang/dmesg" "iser-vm: pid [0-9]+ dd S"
check gate-crash "a guest that crashes fails the running row" \
	has "$g" "^FAIL $kernel selftest-crash: guest stopped unexpectedly"
check gate-crash-where "a crash's result names the function that died" \
	has "$g" "^FAIL $kernel selftest-crash: guest stopped unexpectedly.*; frames [^;]*sysrq_handle_crash\\+0x[0-9a-f]+"
check gate-after-crash "the rows after a crash run in a new boot" \
	has "$g" "^PASS $kernel selftest-late \\([0-9]+ s\\)\$"
check gate-late "a bad line after the last END fails the boot" \
	has "$g" "^FAIL $kernel boot2: final check: kernel log after the last scenario: BUG: iser-vm selftest: a late oops"
check gate-late-console "the host sees the late line on the console too" \
	has "$g" "^FAIL $kernel boot2: kernel log outside every scenario: BUG: iser-vm selftest: a late oops"
check gates-count "the summary counts every row and boot failure" \
	has "$g" "^2 passed, 7 failed\$"

# a small log ring (Debian's default 128 KiB) and a flood: the lost BEGIN
# marker must fail the row, not leave an empty window that passes
printf 'selftest-flood none none yes 120 selftest flood\n' >"$out/flood.list"
ISER_VM_LIST=$out/flood.list ISER_VM_LOG_BUF_LEN=128k \
	"$here/vm-check.sh" --kernel "$kernel" >"$out/flood.log" 2>&1
check gate-flood "a BEGIN marker pushed out of the log ring fails the row" \
	has "$out/flood.log" "^FAIL $kernel selftest-flood: .*BEGIN marker is no longer in the log buffer"

# a guest kernel that never reaches the rig's init (here: a boot time
# limit shorter than any boot) ran no row: the job boots once more, and a
# second such boot fails the row with the boot's reason
printf 'selftest-noup none none yes 60 selftest ok\n' >"$out/noup.list"
ISER_VM_LIST=$out/noup.list ISER_VM_BOOT_TIMEOUT=3 \
	"$here/vm-check.sh" --kernel "$kernel" >"$out/noup.log" 2>&1
check gate-noup-retry "a boot that never came up is booted once more ($out/noup.log)" \
	has "$out/noup.log" "^vm-check: $kernel: boot1 never came up, no row ran"
check gate-noup-fail "a second boot that never came up fails the row" \
	has "$out/noup.log" "^FAIL $kernel selftest-noup: guest did not come up within 3s"

# a clone anywhere: the rig run from copies under /tmp and /dev/shm, where
# the guest mounts tmpfs of its own, must still see the repository share
"$here/clone-check.sh" --kernel "$kernel" >"$out/clone.log" 2>&1
for d in tmp dev-shm; do
	check "clone-$d" "the rig runs from a copy under /${d/-//} ($out/clone.log)" \
		has "$out/clone.log" "^PASS $kernel clone-$d: "
done

echo "# logs: $out"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
