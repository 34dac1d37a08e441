# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Login and verified I/O under non-default session parameters, set on both
# sides: each argument KEY=VALUE goes to the TPG (targetcli "set parameter")
# and, for the keys open-iscsi proposes, to the node record.
#   ImmediateData=No            all write data by RDMA Read
#   InitialR2T=No               unsolicited Data-Out PDUs (Sends)
#   FirstBurstLength=N, MaxBurstLength=N
# (LIO does not let targetcli change TargetRecvDataSegmentLength: it stays
# at 8192 on the target side.)
# The negotiated values are checked in "iscsiadm -m session -P 3". With
# our target, its debugfs imm_in_place must be 0 under ImmediateData=No
# and above 0 otherwise (the 4 KiB writes' immediate data used in place).

[ $# -gt 0 ] || vm_fail "params.sh: no KEY=VALUE given"
vm_rxe_up
vm_load_roles
vm_target_setup
vm_tcli "/iscsi/$VM_TARGET_IQN/tpg1 set parameter $*"
vm_iscsid_start
vm_node_new
for kv in "$@"; do
	k=${kv%%=*}
	v=${kv#*=}
	case $k in
	ImmediateData | InitialR2T | FirstBurstLength | MaxBurstLength)
		vm_node_set "node.session.iscsi.$k" "$v" ;;
	esac
done

dev=$(vm_login_disk) || exit 1
info=$(iscsiadm -m session -P 3 2>&1)
for kv in "$@"; do
	k=${kv%%=*}
	v=${kv#*=}
	case $k in
	ImmediateData | InitialR2T | FirstBurstLength | MaxBurstLength)
		echo "$info" | grep -qx "[[:space:]]*$k: $v" ||
			vm_fail "session did not negotiate $k=$v: $(echo "$info" | grep "$k:")" ;;
	esac
done
vm_log "negotiated: $(echo "$info" | grep -E 'ImmediateData|InitialR2T|FirstBurstLength|MaxBurstLength|DataSegmentLength' | tr -s ' \t' ' ' | paste -sd ';' -)"
vm_scen_dmesg | grep -E 'ib_isert: normal session' | tail -n 1

vm_fio "$dev" params <<-EOF
	[seq-256k-qd8]
	rw=write
	bs=256k
	iodepth=8
	size=24M
	[rand-4k-64k-qd16]
	rw=randwrite
	bsrange=4k-64k
	blockalign=4k
	iodepth=16
	size=16M
	offset=32M
	[seq-1m-qd2]
	rw=write
	bs=1M
	iodepth=2
	size=16M
	offset=48M
EOF
# our target uses a WRITE's data in place when it all came as immediate
# data: never without ImmediateData, always some with it (the 4k writes)
ipl=$(vm_ist_sum imm_in_place)
if [ -n "$ipl" ]; then
	case " $* " in
	*" ImmediateData=No "*)
		[ "$ipl" = 0 ] || vm_fail "our target used immediate data in place $ipl time(s) under ImmediateData=No" ;;
	*)
		[ "$ipl" -gt 0 ] || vm_fail "our target used no WRITE's immediate data in place" ;;
	esac
fi
vm_logout_check "$dev"
