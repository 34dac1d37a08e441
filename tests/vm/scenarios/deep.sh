# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Queue depth 128: the ACL's CmdSN window (cmdsn_depth) is raised to 128 in
# configfs, the initiator's node.session.queue_depth to 128 (cmds_max 256);
# the disk's queue_depth must be 128 and fio verify jobs run at iodepth
# 128 (4 KiB random, 64 KiB random, 256 KiB sequential). With our target
# the log line of the session shows the receive buffers sized from that
# window (128 + 16).

acl=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/acls/$VM_INITIATOR_IQN
vm_rxe_up
vm_load_roles
vm_target_setup
vm_must sh -c "echo 128 >$acl/cmdsn_depth"
[ "$(cat "$acl/cmdsn_depth")" = 128 ] || vm_fail "cmdsn_depth of the ACL is $(cat "$acl/cmdsn_depth"), not 128"
vm_iscsid_start
vm_node_new
vm_node_set node.session.cmds_max 256
vm_node_set node.session.queue_depth 128
dev=$(vm_login_disk) || exit 1
qd=$(cat "/sys/block/${dev#/dev/}/device/queue_depth")
[ "$qd" = 128 ] || vm_fail "queue_depth of $dev is $qd, not 128"
line=$(vm_scen_dmesg | grep -E 'ib_isert: normal session' | tail -n 1)
echo "$line"
if [ "$VM_TARGET" = ours ]; then
	# drivers/target/login.c, ist_rx_count(): the ACL's queue depth (its
	# cmdsn_depth) times the PDUs per command (1, plus
	# FirstBurstLength / TargetRecvDataSegmentLength unsolicited Data-Outs
	# when InitialR2T=No) plus IST_EXTRA_SENDS (16, drivers/target/ist.h)
	info=$(iscsiadm -m session -P 3 2>&1)
	neg() { echo "$info" | awk -v k="$1:" '$1 == k { print $2 }'; }
	per_cmd=1
	if [ "$(neg InitialR2T)" = No ]; then
		# MaxXmitDataSegmentLength: the target's receive length
		per_cmd=$((1 + ($(neg FirstBurstLength) + $(neg MaxXmitDataSegmentLength) - 1) / $(neg MaxXmitDataSegmentLength)))
	fi
	want=$(($(cat "$acl/cmdsn_depth") * per_cmd + 16))
	echo "$line" | grep -q " $want receive buffers" ||
		vm_fail "the session did not size $want receive buffers for a window of $(cat "$acl/cmdsn_depth"): ${line:-no 'normal session' line}"
fi

vm_fio "$dev" deep <<-EOF
	[rand-4k-qd128]
	rw=randwrite
	bs=4k
	iodepth=128
	size=16M
	[rand-64k-qd128]
	rw=randwrite
	bs=64k
	iodepth=128
	size=24M
	offset=16M
	[seq-256k-qd128]
	rw=write
	bs=256k
	iodepth=128
	size=24M
	offset=40M
EOF
vm_logout_check "$dev"
