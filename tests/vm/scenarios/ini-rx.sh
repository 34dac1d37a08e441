# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# A receive buffer for every response: our initiator posts one small
# buffer per task plus 16 (drivers/initiator/rx.c, isi_rx_count():
# min(cmds_max, 128) + 16 of 512 bytes, each followed by the shared spill
# buffer), so with 64 commands in flight no response finds the receive queue
# empty.  fio keeps 64 commands in flight: the crc32c verification must
# pass, the rxe counters must show no RNR NAK received by the target's QP
# and no exhausted RNR retry, and the kernel log stay clean.

vm_rxe_up
vm_load_roles
vm_target_setup
vm_iscsid_start
vm_node_new
vm_node_set node.session.queue_depth 64

counters() {
	local d f
	for d in /sys/class/infiniband/rxe*/ports/1/hw_counters; do
		for f in "$d"/*rnr*; do
			[ -r "$f" ] && printf '%s=%s ' "${f#/sys/class/infiniband/}" "$(cat "$f")"
		done
	done
}

dev=$(vm_login_disk) || exit 1
mode=$(cat /sys/kernel/debug/ib_iser/host*/conn)
echo "$mode"
cmds_max=$(iscsiadm -m node -T "$VM_TARGET_IQN" -p "$VM_TGT_IP:$VM_ISER_PORT" -I iser |
	awk '$1 == "node.session.cmds_max" { print $3 }')
[ -n "$cmds_max" ] || vm_fail "no node.session.cmds_max in the node record"
rx_want=$((cmds_max < 128 ? cmds_max + 16 : 128 + 16))
[ "$rx_want" -gt 64 ] || vm_fail "cmds_max $cmds_max: fewer buffers than 64 commands in flight"
echo "$mode" | grep -qx "rx_buffers: $rx_want" ||
	vm_fail "expected $rx_want receive buffers: $(echo "$mode" | grep rx_)"
before=$(counters)
vm_fio "$dev" rnr <<-EOF
	[rand-4k-qd64]
	rw=randwrite
	bs=4k
	iodepth=64
	size=16M
	[rand-512-qd64]
	rw=randwrite
	bs=512
	iodepth=64
	size=2M
	offset=32M
EOF
after=$(counters)
vm_log "RNR counters before: $before"
vm_log "RNR counters after:  $after"
sum() { # NAME: sum of that counter over the rxe devices in "$1"
	echo "$1" | tr ' ' '\n' | awk -F= -v n="$2" '$1 ~ "/" n "$" { s += $2 } END { print s + 0 }'
}
echo "$after" | grep -q rcvd_rnr_err ||
	vm_fail "rxe shows no rcvd_rnr_err counter: cannot tell RNR NAKs"
[ "$(sum "$after" rcvd_rnr_err)" = "$(sum "$before" rcvd_rnr_err)" ] ||
	vm_fail "$(($(sum "$after" rcvd_rnr_err) - $(sum "$before" rcvd_rnr_err))) RNR NAKs: a response found no receive buffer"
[ "$(sum "$after" retry_rnr_exceeded_err)" = "$(sum "$before" retry_rnr_exceeded_err)" ] ||
	vm_fail "a Send ran out of RNR retries"
vm_logout_check "$dev"
