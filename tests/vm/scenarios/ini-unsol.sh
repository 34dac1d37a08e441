# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Unsolicited Data-Outs at full queue depth: a SCSI Command whose
# Data-Outs cannot all be posted must not be sent a second time under the
# same CmdSN. The session negotiates ImmediateData=Yes, InitialR2T=No,
# FirstBurstLength=MaxBurstLength=262144 (TargetRecvDataSegmentLength stays
# 8192 with LIO), so each 256 KiB WRITE is one Send with 8 KiB of immediate
# data and 31 unsolicited Data-Out Sends. Four fio jobs of verified 256 KiB
# random writes at queue depth 128 each (the host queues 128 commands)
# keep thousands of Sends in flight: far beyond the send queue's room for
# Data-Outs, so the queue fills in the middle of a command's Data-Outs
# again and again.
# Judged:
#  - the verified I/O passes;
#  - the session never fails: no "detected conn error" of libiscsi, the
#    same session id before and after, and the target logs no CmdSN it
#    ignored and no Data-Out timeout.
# The ACL's CmdSN window (cmdsn_depth) is 128, so all 128 commands of the
# host are in flight at once.

vm_rxe_up
vm_load_roles
vm_target_setup
acl=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/acls/$VM_INITIATOR_IQN
vm_must sh -c "echo 128 >$acl/cmdsn_depth"
params="ImmediateData=Yes InitialR2T=No FirstBurstLength=262144 MaxBurstLength=262144"
# shellcheck disable=SC2086
vm_tcli "/iscsi/$VM_TARGET_IQN/tpg1 set parameter $params"
vm_iscsid_start
vm_node_new
for kv in $params; do
	vm_node_set "node.session.iscsi.${kv%%=*}" "${kv#*=}"
done
vm_node_set node.session.queue_depth 128
vm_node_set node.session.cmds_max 128

dev=$(vm_login_disk) || exit 1
info=$(iscsiadm -m session -P 3 2>&1)
for kv in $params; do
	echo "$info" | grep -qx "[[:space:]]*${kv%%=*}: ${kv#*=}" ||
		vm_fail "session did not negotiate $kv: $(echo "$info" | grep "${kv%%=*}:")"
done
sid0=$(iscsiadm -m session | sed -n 's/^[^[]*\[\([0-9]*\)\].*/\1/p')
echo 128 >"/sys/block/${dev#/dev/}/device/queue_depth" 2>/dev/null
vm_log "session $sid0, queue depth $(cat "/sys/block/${dev#/dev/}/device/queue_depth")"

vm_fio "$dev" unsol <<-EOF
	[w256k-qd128]
	rw=randwrite
	bs=256k
	iodepth=128
	iodepth_batch_submit=32
	numjobs=4
	size=12M
	offset_increment=14M
	loops=3
EOF

sid1=$(iscsiadm -m session | sed -n 's/^[^[]*\[\([0-9]*\)\].*/\1/p')
errs=$(vm_scen_dmesg | grep -cE 'detected conn error')
ign=$(vm_scen_dmesg | grep -cE 'is less than ExpCmdSN|DataOut timeout|Data-Out timeout')
vm_log "after the I/O: session $sid1; $errs connection error(s), $ign CmdSN/Data-Out line(s) of the target"
vm_scen_dmesg | grep -E 'detected conn error|less than ExpCmdSN|DataOut timeout|Data-Out timeout|closing iSCSI connection' | head -n 8
[ "$errs" = 0 ] || vm_fail "the session failed $errs time(s) under unsolicited Data-Outs"
[ "$ign" = 0 ] || vm_fail "the target ignored a CmdSN or timed out waiting for Data-Outs ($ign line(s))"
[ "$sid1" = "$sid0" ] || vm_fail "session id changed: $sid0 -> $sid1"
vm_logout_check "$dev"
