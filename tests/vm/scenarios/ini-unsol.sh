# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Unsolicited Data-Outs at full queue depth: a SCSI Command whose
# Data-Outs cannot all be posted must not be sent a second time under the
# same CmdSN. The session negotiates ImmediateData=Yes, InitialR2T=No,
# FirstBurstLength=MaxBurstLength=262144 (TargetRecvDataSegmentLength stays
# 8192 with LIO), so each 256 KiB WRITE is one Send with 8 KiB of immediate
# data and 31 unsolicited Data-Out Sends. The ACL's CmdSN window
# (cmdsn_depth) is 128 and four fio jobs of verified 256 KiB random writes
# at queue depth 128 each keep it full: up to 128 x 32 Sends for the 512
# receive buffers our target posts at most (ist_rx_count(),
# drivers/target/login.c), so Sends wait in RNR retry, the initiator's
# send queue (504 slots) fills, and it fills in the middle of a command's
# Data-Outs again and again.
#
# Judged:
#  - the verified I/O passes;
#  - the target logs none of what a SCSI Command sent twice under one
#    CmdSN leaves: the copy ignored ("is less than ExpCmdSN"), the
#    requeued command's Data-Outs out of sequence ("higher than expected",
#    "outside of Unsolicited Sequence"), a Data-Out timeout;
#  - every connection failure (libiscsi's "detected conn error") is one
#    soft-RoCE caused itself: its requester, after an RNR NAK, executes
#    again the REG_MRs it had already executed behind the retried Send
#    (rxe_requester() and req_retry() of Debian's 6.1, where a local
#    operation's WQE is not skipped on the second pass), the MR is valid,
#    "rxe_reg_fast_mr: mr->lkey = ... not free", and the QP fails. 6.1
#    prints that line as a warning, 6.12 as a dynamic debug message, which
#    the row turns on for rxe_reg_fast_mr() alone: the rest of rdma_rxe's
#    debug messages (a line per packet and state) would go to the serial
#    console at this rate and stall the guest. A failure with fewer such
#    lines than failures fails the row;
#  - the target receives no Data-Out that no WRITE waits for: LIO looks
#    the Data-Out's ITT up and dumps it when the command it finds is not a
#    WRITE ("received DataOUT for a NON-WRITE command") or when it finds
#    none ("Unable to locate ITT"). Either is data sent for a command the
#    target does not have, or a WRITE's data lost. LIO's Data-Out timer
#    lines ("Starting DataOUT timer for ITT", "Stopped DataOUT Timer for
#    ITT", dynamic debug, one pair per WRITE) show which WRITEs of that
#    ITT the target had and when they got their data.
# Our target, when it is the target, sends every Send signaled here
# (ib_isert signal_every=1). Either side may be the in-tree module (rows
# ours-target-unsol-qd128, ours-initiator-unsol-qd128).
#
# On a slow kernel (VM_TIMEOUT_SCALE above 1: the debug kernel) the NOP-Out
# interval and timeout grow by that factor, because a ping waits behind
# hundreds of Sends in RNR retry, and the session keeps 32 commands in
# flight instead of 128. That is still 1,024 Sends against the target's
# 512 receive buffers and the initiator's 504 send queue slots, so the
# send queue still fills in the middle of a command's Data-Outs; but
# soft-RoCE's REG_MR fault above, which every RNR NAK can trigger, no
# longer fails the same requeued commands five times in a row (the SCSI
# midlayer's retry limit), as it does at 128 on that kernel. LIO's
# Data-Out timeout of the ACL (dataout_timeout, 3 s by default; with
# ERL=0 its expiry closes the connection) becomes 60 s, its maximum: on
# that kernel the target at times receives nothing for over 3 s while
# Sends wait out RNR NAKs, and LIO then closed the connection of a WRITE
# whose Data-Outs were still coming. A SCSI Command sent twice under one
# CmdSN still shows: the target's "is less than ExpCmdSN" for the copy at
# once, the first one's Data-Out timeout a minute later.

vm_rxe_up
vm_load_roles
[ "$VM_TARGET" = ours ] && vm_module_params ib_isert.signal_every=1
dd=/sys/kernel/debug/dynamic_debug/control
[ -w $dd ] && { echo 'module rdma_rxe func rxe_reg_fast_mr +p' >$dd; } 2>/dev/null
timers='func iscsit_start_dataout_timer +p; func iscsit_stop_dataout_timer +p'
[ -w $dd ] && { echo "$timers" >$dd; } 2>/dev/null
[ -r $dd ] && vm_log "rdma_rxe debug messages on: $(grep -c 'rxe_reg_fast_mr.*=p' $dd) (rxe_reg_fast_mr only)"
vm_target_setup
acl=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/acls/$VM_INITIATOR_IQN
vm_must sh -c "echo 128 >$acl/cmdsn_depth"
scale=${VM_TIMEOUT_SCALE:-1}
[ "$scale" -gt 1 ] && vm_must sh -c "echo 60 >$acl/attrib/dataout_timeout"
params="ImmediateData=Yes InitialR2T=No FirstBurstLength=262144 MaxBurstLength=262144"
# shellcheck disable=SC2086
vm_tcli "/iscsi/$VM_TARGET_IQN/tpg1 set parameter $params"
vm_iscsid_start
vm_node_new
for kv in $params; do
	vm_node_set "node.session.iscsi.${kv%%=*}" "${kv#*=}"
done
depth=128
[ "$scale" -gt 1 ] && depth=32
vm_node_set node.session.queue_depth $depth
vm_node_set node.session.cmds_max $depth
vm_node_set "node.conn[0].timeo.noop_out_interval" $((5 * scale))
vm_node_set "node.conn[0].timeo.noop_out_timeout" $((5 * scale))

dev=$(vm_login_disk) || exit 1
info=$(iscsiadm -m session -P 3 2>&1)
for kv in $params; do
	echo "$info" | grep -qx "[[:space:]]*${kv%%=*}: ${kv#*=}" ||
		vm_fail "session did not negotiate $kv: $(echo "$info" | grep "${kv%%=*}:")"
done
sid0=$(iscsiadm -m session | sed -n 's/^[^[]*\[\([0-9]*\)\].*/\1/p')
echo $depth >"/sys/block/${dev#/dev/}/device/queue_depth" 2>/dev/null
vm_log "session $sid0, queue depth $(cat "/sys/block/${dev#/dev/}/device/queue_depth")"

vm_fio "$dev" unsol <<-EOF
	[w256k-qd128]
	rw=randwrite
	bs=256k
	iodepth=$depth
	iodepth_batch_submit=32
	numjobs=4
	size=12M
	offset_increment=14M
	loops=3
EOF
[ -w $dd ] && { echo 'module rdma_rxe func rxe_reg_fast_mr -p' >$dd; } 2>/dev/null
[ -w $dd ] && { echo "${timers//+p/-p}" >$dd; } 2>/dev/null

sid1=$(iscsiadm -m session | sed -n 's/^[^[]*\[\([0-9]*\)\].*/\1/p')
errs=$(vm_scen_dmesg | grep -cE 'detected conn error')
rxe=$(vm_scen_dmesg | grep -cE 'rxe_reg_fast_mr: .*not free')
dup=$(vm_scen_dmesg | grep -cE 'is less than ExpCmdSN|higher than expected|outside of Unsolicited Sequence|DataOut timeout|Data-Out timeout')
stray=$(vm_scen_dmesg | grep -cE 'received DataOUT for a NON-WRITE command|Unable to locate ITT')
vm_log "after the I/O: session $sid0 -> $sid1; $errs connection failure(s), $rxe soft-RoCE REG_MR re-execution(s), $dup line(s) of a duplicate CmdSN, $stray Data-Out(s) no WRITE waited for"
vm_scen_dmesg | grep -E 'detected conn error|not free|less than ExpCmdSN|higher than expected|outside of Unsolicited|DataOut timeout|Data-Out timeout|NON-WRITE|Unable to locate ITT' | head -n 12
[ "$dup" = 0 ] || vm_fail "the target saw a SCSI Command twice under one CmdSN ($dup line(s))"
[ "$stray" = 0 ] || vm_fail "the target received $stray Data-Out(s) that no WRITE waited for"
[ "$errs" -le "$rxe" ] ||
	vm_fail "the session failed $errs time(s), soft-RoCE's REG_MR fault explains $rxe"
vm_logout_check "$dev"
