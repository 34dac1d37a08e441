# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Queue depth 128: the ACL's CmdSN window (cmdsn_depth) is raised to 128 in
# configfs, the initiator's node.session.queue_depth to 128 (cmds_max 256);
# the disk's queue_depth must be 128 and fio verify jobs run at iodepth
# 128 (4 KiB random, 64 KiB random, 256 KiB sequential). With our target
# the log line of the session shows the receive buffers sized from that
# window (128 + 16).
#   --big   instead, a window of 512 (cmdsn_depth, queue_depth; cmds_max
#           1024: the in-tree initiator, ours queues at most 128) and
#           sequential writes of 1 MiB at iodepth 128 and 512 on a LUN of
#           448 MiB, each verified. Over soft-iWARP every RDMA Read takes
#           an MR of the QP's pool (256 MRs of up to 256 pages), and
#           commands that waited for send queue room kept theirs: more
#           than 256 WRITEs fetched at once would exhaust the pool, and a
#           target must then wait for MRs, not close the connection
#           (judged by its log and the initiator's: no "cannot fetch a
#           WRITE's data", no connection error). The log names the most
#           WRITEs in flight at once: so far about 100 at most, short of
#           the pool, so this does not reach that limit yet

big=""
depth=128
case ${1:-} in
--big) big=1; depth=512; VM_LUN_SIZE=448M ;;
"") ;;
*) vm_fail "deep.sh: bad argument $1" ;;
esac
acl=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/acls/$VM_INITIATOR_IQN
vm_rxe_up
vm_load_roles
vm_target_setup
vm_must sh -c "echo $depth >$acl/cmdsn_depth"
[ "$(cat "$acl/cmdsn_depth")" = "$depth" ] || vm_fail "cmdsn_depth of the ACL is $(cat "$acl/cmdsn_depth"), not $depth"
vm_iscsid_start
vm_node_new
vm_node_set node.session.cmds_max $((2 * depth))
vm_node_set node.session.queue_depth "$depth"
dev=$(vm_login_disk) || exit 1
qd=$(cat "/sys/block/${dev#/dev/}/device/queue_depth")
[ "$qd" = "$depth" ] || vm_fail "queue_depth of $dev is $qd, not $depth"
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
	[ "$want" -le 512 ] || want=512		# IST_MAX_RX
	echo "$line" | grep -q " $want receive buffers" ||
		vm_fail "the session did not size $want receive buffers for a window of $(cat "$acl/cmdsn_depth"): ${line:-no 'normal session' line}"
fi

if [ -n "$big" ]; then
	# no I/O scheduler: its request limit (about 100 here) would keep
	# the window from filling
	q=/sys/block/${dev#/dev/}/queue
	echo none >"$q/scheduler" 2>/dev/null
	echo "$depth" >"$q/nr_requests" 2>/dev/null
	echo "$dev: max_sectors_kb $(cat "$q/max_sectors_kb"), scheduler $(cat "$q/scheduler"), nr_requests $(cat "$q/nr_requests")"
	# the most WRITEs in flight at once, sampled every 0.2 s (inflight:
	# reads, writes), for the log
	peak=$VM_SCEN_DIR/inflight-peak
	echo 0 >"$peak"
	(
		max=0
		while :; do
			read -r _ w <"/sys/block/${dev#/dev/}/inflight"
			[ "$w" -le "$max" ] || { max=$w; echo "$max" >"$peak"; }
			sleep 0.2
		done
	) &
	sampler=$!
	trap 'kill "$sampler" 2>/dev/null' EXIT
	vm_fio "$dev" deepbig <<-EOF
		[seq-1m-qd128]
		rw=write
		bs=1M
		iodepth=128
		size=128M
		[seq-1m-qd512]
		rw=write
		bs=1M
		iodepth=512
		size=448M
	EOF
	kill "$sampler" 2>/dev/null
	wait "$sampler" 2>/dev/null
	vm_log "at most $(cat "$peak") WRITEs of $dev in flight at once"
	klog=$(vm_scen_dmesg)
	resets=$(echo "$klog" | grep -E "cannot fetch a WRITE's data|posting RDMA Reads failed|conn error|detected conn error" | head -n 5)
	[ -z "$resets" ] || vm_fail "connections reset under deep large writes: $resets"
else
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
fi
vm_logout_check "$dev"
