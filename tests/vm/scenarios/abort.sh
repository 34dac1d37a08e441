# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# A command timeout that forces an ABORT TASK, then a target reset:
#  1. the LUN is a block backstore on a dm-delay device (over a loop device
#     on tmpfs), with no delay at first; a fio verify job passes;
#  2. the disk's SCSI timeout is set to 5 s and the delay to 60 s; a read
#     times out, the SCSI midlayer sends ABORT TASK, LIO finds the task
#     ("ABORT_TASK: Found referenced"); the delay is then removed, the
#     aborted command completes in the backend, the abort completes and
#     the read is retried and succeeds; the disk's iotmo_cnt counts it;
#  3. "sg_reset -t" (TARGET WARM RESET): LIO refuses it (its node attribute
#     tmr_warm_reset cannot be set; it logs "TMR Opcode TARGET_WARM_RESET
#     authorization failed"), so the initiator escalates to a session
#     reset (libiscsi's iscsi_eh_recover_target()), which must succeed:
#     sg_reset returns 0, LIO accepts a new login (its login statistics'
#     "accepts" grows), the session is LOGGED_IN again;
#  4. a fio verify job passes afterwards, logout, modules unload.
# Step 2 is also done with a 4 KiB WRITE (2b): with our target, the
# receive buffer that holds its immediate data, used in place, is held
# while the aborted command is in the backend and given back after.

vm_rxe_up
vm_load_roles
vm_target_setup
vm_slow_lun 0
trap vm_slow_lun_remove EXIT
vm_iscsid_start
vm_discover >/dev/null 2>&1 || vm_fail "SendTargets discovery failed"
vm_node_new
vm_node_set node.session.timeo.replacement_timeout 120
vm_login || vm_fail "login failed"
vm_check_iser_session
slow_disk() { # the disk of LUN 1
	local b
	for b in /sys/class/iscsi_session/session*/device/target*/*:1/block/*; do
		[ -e "$b" ] && echo "/dev/$(basename "$b")" && return 0
	done
	return 1
}
vm_wait 30 slow_disk || vm_fail "no disk for LUN 1"
dev=$(slow_disk)
sd=${dev#/dev/}
vm_wait 10 test -b "$dev" || vm_fail "$dev did not appear"

# 1. no delay: verified I/O
printf '%s\n' '[before]' 'rw=randwrite' 'bs=16k' 'iodepth=8' 'size=8M' |
	vm_fio "$dev" before || exit 1

# 2. a read that outlives the SCSI timeout
vm_must sh -c "echo 5 >/sys/block/$sd/device/timeout"
tmo0=$(($(cat "/sys/block/$sd/device/iotmo_cnt")))
vm_slow_lun_delay 60000
vm_log "dm-delay: 60 s, SCSI timeout 5 s"
dd if="$dev" of=/dev/null bs=4k count=1 skip=4000 iflag=direct 2>/tmp/dd.err &
ddpid=$!
task_found() { vm_scen_dmesg | grep -q 'ABORT_TASK: Found referenced'; }
vm_wait 50 task_found ||
	vm_fail "no ABORT TASK reached the target within 50 s"
vm_scen_dmesg | grep -E 'ABORT_TASK' | head -n 2
# remove the delay: the backend completes the aborted read, LIO answers
# the abort, the midlayer retries the read
vm_slow_lun_delay 0
vm_wait 60 sh -c "! kill -0 $ddpid" || vm_fail "the read did not finish 60 s after the delay was removed"
wait "$ddpid" || vm_fail "the read failed after the abort: $(cat /tmp/dd.err)"
vm_scen_dmesg | grep -E 'ABORT_TASK: Sending' | head -n 1
tmo1=$(($(cat "/sys/block/$sd/device/iotmo_cnt")))
[ "$tmo1" -gt "$tmo0" ] || vm_fail "iotmo_cnt did not grow ($tmo0 -> $tmo1): no command timed out"
vm_log "read timed out ($((tmo1 - tmo0)) timeout(s)), was aborted and retried successfully"

# 2b. the same for a 4 KiB WRITE, which carries its data as immediate
# data: our target hands it to LIO in place, in the receive buffer, and
# the aborted command must give that buffer back; the retried write lands
head -c 4096 /dev/urandom >/tmp/w.blk
ab0=$(vm_scen_dmesg | grep -c 'ABORT_TASK: Found referenced')
vm_slow_lun_delay 60000
dd if=/tmp/w.blk of="$dev" bs=4k count=1 seek=4100 oflag=direct 2>/tmp/ddw.err &
ddpid=$!
write_aborted() { [ "$(vm_scen_dmesg | grep -c 'ABORT_TASK: Found referenced')" -gt "$ab0" ]; }
vm_wait 50 write_aborted ||
	vm_fail "no ABORT TASK for the WRITE reached the target within 50 s"
held=$(vm_ist_sum rx_held)
[ -z "$held" ] || [ "$held" -ge 1 ] ||
	vm_fail "our target holds no receive buffer for the aborted WRITE still in the backend"
vm_slow_lun_delay 0
vm_wait 60 sh -c "! kill -0 $ddpid" || vm_fail "the write did not finish 60 s after the delay was removed"
wait "$ddpid" || vm_fail "the write failed after the abort: $(cat /tmp/ddw.err)"
dd if="$dev" of=/tmp/r.blk bs=4k count=1 skip=4100 iflag=direct 2>/dev/null
cmp -s /tmp/r.blk /tmp/w.blk || vm_fail "the aborted and retried WRITE's data is not on the disk"
vm_ist_rx_check
vm_log "write timed out, was aborted and retried; its data is on the disk${held:+ (our target held $held receive buffer(s) meanwhile)}"
vm_must sh -c "echo 30 >/sys/block/$sd/device/timeout"

# 3. target warm reset (LIO refuses it; the initiator resets the session)
stats=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/fabric_statistics/iscsi_login_stats
accepts0=$(cat "$stats/accepts") || vm_fail "no LIO login statistics in $stats"
vm_run timeout 120 sg_reset -t "$dev"
rc=$?
vm_log "sg_reset -t returned $rc"
[ "$rc" = 0 ] ||
	vm_fail "sg_reset -t failed (status $rc): the target reset and the session reset it escalates to did not succeed"
vm_scen_dmesg | grep -E 'TARGET_WARM_RESET|isert.*closing' | tail -n 3
vm_scen_dmesg | grep -q 'TMR Opcode TARGET_WARM_RESET authorization failed' ||
	vm_fail "LIO did not refuse a TARGET WARM RESET: the reset did not reach it as a task management request"
vm_wait 60 sh -c "iscsiadm -m session -P 1 | grep -q 'iSCSI Session State: LOGGED_IN'" ||
	vm_fail "session not logged in after the target reset"
[ "$(vm_session_count)" = 1 ] || vm_fail "expected 1 session after the target reset"
accepts1=$(cat "$stats/accepts")
[ "$accepts1" -gt "$accepts0" ] ||
	vm_fail "LIO accepted no login after the target reset ($accepts0, then $accepts1): the session was not reset"
vm_log "session reset after the refused TARGET WARM RESET: LIO accepted $((accepts1 - accepts0)) new login(s)"

# 4. verified I/O again
vm_wait 30 test -b "$dev" || vm_fail "$dev gone after the target reset"
printf '%s\n' '[after]' 'rw=randwrite' 'bsrange=4k-64k' 'blockalign=4k' \
	'iodepth=16' 'size=12M' 'offset=16M' | vm_fio "$dev" after || exit 1
vm_logout_check "$dev"
