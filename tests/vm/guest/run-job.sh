#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the scenarios of a job, one after the other, in the guest:
#   run-job.sh JOBDIR
# JOBDIR/job.list has lines "NAME INITIATOR TARGET DEFAULT TIMEOUT BODY [ARGS]"
# (the format of tests/vm/scenarios.list).  For each scenario this writes
# JOBDIR/NAME/{log,dmesg,result}; result is "PASS" or "FAIL: reason".
# A scenario fails when its body fails or times out, when teardown cannot
# log out or unload a module, when the kernel log of the scenario has a
# WARNING, BUG, Oops, hung task or the like, when its BEGIN marker is no
# longer in the kernel's log buffer (its window could not be checked), or
# when the kernel gained a taint flag while it ran, or, on a kernel with
# kmemleak, when a scan after teardown finds an unreferenced object
# (JOBDIR/NAME/kmemleak).
#
# After the last scenario a final check waits a few seconds for deferred
# work (an oops after rmmod, a late release) and fails the job when the
# kernel log after the last END marker has a bad line or the kernel gained
# a taint flag; the reason is written to JOBDIR/final and the exit status
# (0 clean, 1 not) is what pid1.sh reports in its "DONE" line.

job=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
[ -f "$job/job.env" ] && . "$job/job.env"

progress() {
	echo "@@ $*" >/dev/ttyS1
}

# stuck_dump NAME: after a scenario timed out, what its processes wait
# on, into the kernel log (the console; nothing here touches the 9p
# shares, which may be what hangs): each task in D state and each
# iscsid, iscsiadm, dd, fio or iser_tgt with its state, wait channel and
# kernel stack, then sysrq w (blocked tasks)
stuck_dump() {
	local d pid comm state stack
	echo "iser-vm: $1 timed out; its tasks:" >/dev/kmsg
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		read -r comm <"$d/comm" 2>/dev/null || continue
		state=$(sed -n 's/^State:[[:space:]]*//p' "$d/status" 2>/dev/null)
		case $state:$comm in
		D*|*:iscsid|*:iscsiadm|*:dd|*:fio|*:iser_tgt) ;;
		*) continue ;;
		esac
		stack=$(tr '\n' ' ' <"$d/stack" 2>/dev/null)
		echo "iser-vm: pid $pid $comm $state wchan $(cat "$d/wchan" 2>/dev/null): $stack" >/dev/kmsg
	done
	echo w >/proc/sysrq-trigger 2>/dev/null
}

# taint bits a scenario may set: O (12, out-of-tree module: ours) and E
# (13, unsigned module: ours, on a kernel that checks signatures)
VM_TAINT_OK=$(((1 << 12) | (1 << 13)))

tainted() {
	cat /proc/sys/kernel/tainted 2>/dev/null || echo 0
}

# taint_reason BEFORE AFTER: a sentence naming the flags set in between
# (other than VM_TAINT_OK), empty when there are none
taint_reason() {
	local new=$(($2 & ~$1 & ~VM_TAINT_OK)) letters=PFSRMBUDAWCIOELKXTN i out=""
	[ "$new" = 0 ] && return 0
	for ((i = 0; i < 32; i++)); do
		[ $((new >> i & 1)) = 1 ] || continue
		out="$out ${letters:i:1}(bit $i)"
	done
	echo "the kernel was tainted:${out} (tainted $1 -> $2)"
}

init_err=""
# kmemleak: what boot and set-up left behind is not the first row's
vm_kmemleak /dev/null >/dev/null
if ! vm_guest_init; then
	init_err="guest set-up failed (configfs, dbus or targetcli); see $job/guest.log"
fi

# the SCSI targets' runtime PM (vm_scsi_target_pm_guard), for the job
vm_scsi_target_pm_guard </dev/null >/dev/null 2>&1 &
pm_guard=$!
trap 'kill "$pm_guard" 2>/dev/null' EXIT

while read -r name ini tgt _default tmo body args <&3; do
	case $name in '' | '#'*) continue ;; esac
	dir=$job/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	progress "BEGIN $name $tmo"
	taint0=$(tainted)
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
			stuck_dump "$name"
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
		# the debug kernel (VM_TIMEOUT_SCALE 3) under load took more
		# than 60 s to clear LIO's configuration after ffp-hostile
		problems=$(timeout $((90 * ${VM_TIMEOUT_SCALE:-1})) bash -c ". '$here/lib.sh'; vm_teardown" 2>>"$dir/log") ||
			problems="${problems:+$problems; }teardown timed out"
		echo "${problems:-clean}"
	} >>"$dir/log" 2>&1
	if [ -n "$problems" ]; then
		problems=$(echo "$problems" | paste -sd ';' -)
		reason="${reason:+$reason; }teardown: $problems"
	fi
	if ! vm_kmemleak "$dir/kmemleak"; then
		leak=$(grep -m 1 -A 12 'unreferenced object' "$dir/kmemleak" |
			grep -m 3 -E 'unreferenced|\[<' | sed 's/^ *//' | paste -sd ';' -)
		reason="${reason:+$reason; }kmemleak: $(grep -c 'unreferenced object' "$dir/kmemleak") unreferenced object(s): $leak"
	fi
	vm_kmsg "iser-vm: END $name"
	dmesg | awk -v b="iser-vm: BEGIN $name" -v e="iser-vm: END $name" \
		'index($0, b) { p = 1 } p { print } index($0, e) { exit }' >"$dir/dmesg"
	# an empty window would pass: the BEGIN marker must still be there
	if ! grep -q "iser-vm: BEGIN $name" "$dir/dmesg" ||
		! grep -q "iser-vm: END $name" "$dir/dmesg"; then
		reason="${reason:+$reason; }kernel log: the scenario's BEGIN marker is no longer in the log buffer (overrun), its kernel log cannot be checked"
	fi
	bad=$(vm_klog_check "$dir/dmesg" | head -n 3 | sed 's/^\[[^]]*\] *//' | paste -sd ';' -)
	[ -n "$bad" ] && reason="${reason:+$reason; }kernel log: $bad"
	taint=$(taint_reason "$taint0" "$(tainted)")
	[ -n "$taint" ] && reason="${reason:+$reason; }$taint"
	last=$name
	last_taint=$(tainted)
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

# the final check: what happened after the last scenario ended
final=""
if [ -n "${last:-}" ]; then
	sleep "${VM_FINAL_WAIT:-5}"
	vm_kmsg "iser-vm: FINAL"
	dmesg | awk -v e="iser-vm: END $last" 'p { print } index($0, e) { p = 1 }' >"$job/final-dmesg"
	grep -q "iser-vm: FINAL" "$job/final-dmesg" ||
		final="the last scenario's END marker is no longer in the log buffer"
	bad=$(vm_klog_check "$job/final-dmesg" | head -n 3 | sed 's/^\[[^]]*\] *//' | paste -sd ';' -)
	[ -n "$bad" ] && final="${final:+$final; }kernel log after the last scenario: $bad"
	taint=$(taint_reason "$last_taint" "$(tainted)")
	[ -n "$taint" ] && final="${final:+$final; }after the last scenario, $taint"
fi
if [ -n "$final" ]; then
	echo "$final" >"$job/final"
	exit 1
fi
echo clean >"$job/final"
exit 0
