# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Fewer receive buffers than outstanding responses: with rx_budget_kb=1 our
# initiator posts its minimum of 16 full-size receive buffers (debugfs),
# while fio keeps 64 commands in flight.  Responses that find no buffer are
# NAKed (RNR) and retried by the target's QP; the crc32c verification must
# pass, the rxe counters must show RNR NAKs and no exhausted RNR retries,
# and the kernel log stay clean.
# The 16: drivers/initiator/io.c, isi_rx_count(), posts rx_budget_kb * 1024
# / PAGE_ALIGN(28 + 48 + data) buffers on InfiniBand/RoCE, at least
# ISI_RX_MIN (16, drivers/initiator/isi.h); 1 KiB holds none, so the
# minimum applies whatever the negotiated data size.

vm_rxe_up
vm_load_roles
[ -w /sys/module/ib_iser/parameters/rx_budget_kb ] ||
	vm_fail "ib_iser has no writable rx_budget_kb parameter"
budget_kb=1
rx_min=16	# ISI_RX_MIN
echo "$budget_kb" >/sys/module/ib_iser/parameters/rx_budget_kb ||
	vm_fail "ib_iser refused rx_budget_kb=$budget_kb"
vm_target_setup
vm_iscsid_start
vm_node_new
vm_node_set node.session.queue_depth 64
mountpoint -q /sys/kernel/debug || vm_must mount -t debugfs debugfs /sys/kernel/debug

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
rx_data=$(echo "$mode" | awk '$1 == "rx_data_bytes:" { print $2 }')
page=$(getconf PAGESIZE)
[ -n "$rx_data" ] || vm_fail "no rx_data_bytes in debugfs"
[ $((budget_kb * 1024 / ((28 + 48 + rx_data + page - 1) / page * page))) -lt "$rx_min" ] ||
	vm_fail "rx_budget_kb $budget_kb holds $rx_min buffers of $rx_data bytes: no shortage to test"
echo "$mode" | grep -qx "rx_buffers: $rx_min" ||
	vm_fail "expected $rx_min receive buffers (ISI_RX_MIN): $(echo "$mode" | grep rx_)"
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
[ "$(sum "$after" rcvd_rnr_err)" -gt "$(sum "$before" rcvd_rnr_err)" ] ||
	vm_fail "no RNR NAK seen: the test did not run short of receive buffers"
[ "$(sum "$after" retry_rnr_exceeded_err)" = "$(sum "$before" retry_rnr_exceeded_err)" ] ||
	vm_fail "a Send ran out of RNR retries"
vm_logout_check "$dev"
