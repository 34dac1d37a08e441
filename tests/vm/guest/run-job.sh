#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the scenarios of a job, one after the other, in the guest:
#   run-job.sh JOBDIR
# JOBDIR/job.list has lines "NAME INITIATOR TARGET DEFAULT TIMEOUT BODY [ARGS]"
# (the format of tests/vm/scenarios.list).  For each scenario this writes
# JOBDIR/NAME/{log,dmesg,result}; result is "PASS" or "FAIL: reason".
# A scenario fails when its body fails or times out, when teardown cannot
# log out or unload a module, or when the kernel log of the scenario has a
# WARNING, BUG, Oops, hung task or the like.

job=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
[ -f "$job/job.env" ] && . "$job/job.env"

progress() {
	echo "@@ $*" >/dev/ttyS1
}

init_err=""
if ! vm_guest_init; then
	init_err="guest set-up failed (configfs, dbus or targetcli); see $job/guest.log"
fi

while read -r name ini tgt _default tmo body args <&3; do
	case $name in '' | '#'*) continue ;; esac
	dir=$job/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	progress "BEGIN $name $tmo"
	vm_kmsg "iser-vm: BEGIN $name"
	reason=""
	start=$(date +%s)
	if [ -n "$init_err" ]; then
		reason=$init_err
	else
		# shellcheck disable=SC2086
		timeout -k 10 "$tmo" bash "$here/run-one.sh" "$dir" "$ini" "$tgt" \
			"$body" $args >"$dir/log" 2>&1 </dev/null
		rc=$?
		if [ $rc = 124 ] || [ $rc = 137 ]; then
			reason="timed out after ${tmo}s"
		elif [ $rc != 0 ]; then
			reason=$(cat "$dir/reason" 2>/dev/null)
			[ -n "$reason" ] || reason="scenario body exited with status $rc"
		elif [ -s "$dir/reason" ]; then
			# vm_fail in a subshell (e.g. "... | vm_fio") ended only that
			reason=$(cat "$dir/reason")
		fi
	fi
	{
		echo "--- teardown"
		problems=$(timeout 90 bash -c ". '$here/lib.sh'; vm_teardown" 2>>"$dir/log") ||
			problems="${problems:+$problems; }teardown timed out"
		echo "${problems:-clean}"
	} >>"$dir/log" 2>&1
	if [ -n "$problems" ]; then
		problems=$(echo "$problems" | paste -sd ';' -)
		reason="${reason:+$reason; }teardown: $problems"
	fi
	vm_kmsg "iser-vm: END $name"
	dmesg | awk -v b="iser-vm: BEGIN $name" -v e="iser-vm: END $name" \
		'index($0, b) { p = 1 } p { print } index($0, e) { exit }' >"$dir/dmesg"
	bad=$(vm_klog_check "$dir/dmesg" | head -n 3 | sed 's/^\[[^]]*\] *//' | paste -sd ';' -)
	[ -n "$bad" ] && reason="${reason:+$reason; }kernel log: $bad"
	secs=$(($(date +%s) - start))
	if [ -z "$reason" ]; then
		echo "PASS" >"$dir/result"
		progress "END $name PASS ${secs}s"
	else
		echo "FAIL: $reason" >"$dir/result"
		progress "END $name FAIL ${secs}s"
	fi
	echo "$secs" >"$dir/seconds"
done 3<"$job/job.list" </dev/null
exit 0
