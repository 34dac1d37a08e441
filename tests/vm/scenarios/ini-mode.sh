# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What our initiator shows of a connection: the iSER mode in debugfs
# (/sys/kernel/debug/ib_iser/host<N>/conn) and the negotiated iSCSI values
# in "iscsiadm -m session -P 3", both checked against what was configured.
#   KEY=VALUE   a line "KEY: VALUE" expected in the debugfs file (e.g.
#               header=28 zbva=0 send_with_invalidate=1)
#   --max-io-kb N  set ib_iser's max_io_kb to N before the login (after
#               checking that out-of-range values are refused); the
#               session must then transfer E KiB per command, and a fio job
#               with E KiB blocks must verify.  E is derived as the
#               initiator derives it (drivers/initiator/mr.c,
#               isi_io_pages(): N / 4 pages of 4 KiB, at most one page
#               less than the device's max_fast_reg_page_list_len):
#                 E = 4 * min(N / 4, FRPL - 1)
#               with FRPL = 512 for soft-RoCE (RXE_MAX_FMR_PAGE_LIST_LEN,
#               drivers/infiniband/sw/rxe/rxe_param.h, the same in 6.1 and
#               6.12; userspace cannot read the attribute), so 1024 -> 1024
#               and 16384 -> 2044
# The iSCSI side is fixed: the node record asks for MaxRecvDataSegmentLength
# (InitiatorRecvDataSegmentLength with iSER) 131072, FirstBurstLength 32768,
# MaxBurstLength 131072, ImmediateData Yes, InitialR2T No; the TPG allows
# InitialR2T=No and keeps its defaults otherwise (FirstBurstLength 65536,
# MaxBurstLength 262144, TargetRecvDataSegmentLength 8192).  The receive
# buffers in debugfs follow drivers/initiator/rx.c, isi_rx_count() and
# isi_rx_ffp_post(): one per task plus 16 (min(cmds_max, 128) + 16;
# ISI_CMDS_MAX, ISI_RX_EXTRA in drivers/initiator/isi.h) of 512 bytes each
# (ISI_RX_SMALL), and one spill buffer for a message of the declared 131072
# data bytes with the longer iSER header: 28 + 48 + 131072 bytes
# (ISDM_HDR_LEN_EXT + ISDM_BHS_LEN, include/isdm/iser_wire.h).

max_io=""
expect=()
while [ $# -gt 0 ]; do
	case $1 in
	--max-io-kb) max_io=$2; shift ;;
	*=*) expect+=("$1") ;;
	*) vm_fail "ini-mode.sh: bad argument $1" ;;
	esac
	shift
done
case $max_io in
'' | *[!0-9]*) [ -z "$max_io" ] || vm_fail "ini-mode.sh: --max-io-kb needs a number of KiB, not '$max_io'" ;;
esac
# soft-RoCE's max_fast_reg_page_list_len (see above)
rxe_frpl=512
mrdsl=131072

vm_rxe_up
vm_load_roles
p=/sys/module/ib_iser/parameters/max_io_kb
if [ -n "$max_io" ]; then
	# default and range: ISI_MAX_IO_KB_DEF, _MIN and _MAX of
	# drivers/initiator/isi.h (512, 64-16384)
	[ "$(cat $p)" = 512 ] || vm_fail "max_io_kb is $(cat $p), not the default 512"
	for bad in 0 63 16385 x; do
		if echo "$bad" >"$p" 2>/dev/null; then
			vm_fail "max_io_kb accepted $bad"
		fi
	done
	echo "$max_io" >"$p" || vm_fail "max_io_kb refused $max_io"
	vm_log "max_io_kb: $(cat $p) (out-of-range values refused)"
fi
# what one command may transfer, as isi_io_pages() computes it (see above)
io_kb=$(cat $p) || vm_fail "ib_iser has no max_io_kb parameter"
io_pages=$((io_kb / 4))
[ "$io_pages" -le $((rxe_frpl - 1)) ] || io_pages=$((rxe_frpl - 1))
io_want=$((io_pages * 4))
vm_log "max_io_kb $io_kb: expected $io_want KiB per command (4 * min($io_kb / 4, $rxe_frpl - 1))"
vm_target_setup
vm_tcli "/iscsi/$VM_TARGET_IQN/tpg1 set parameter InitialR2T=No"
vm_iscsid_start
vm_node_new
vm_node_set node.conn[0].iscsi.MaxRecvDataSegmentLength $mrdsl
vm_node_set node.session.iscsi.FirstBurstLength 32768
vm_node_set node.session.iscsi.MaxBurstLength 131072
vm_node_set node.session.iscsi.ImmediateData Yes
vm_node_set node.session.iscsi.InitialR2T No

dev=$(vm_login_disk) || exit 1

# iscsiadm -m session -P 3: negotiated = configured, combined per RFC 7143
info=$(iscsiadm -m session -P 3 2>&1)
echo "$info" | sed -n '/Negotiated iSCSI params/,$p'
for kv in MaxRecvDataSegmentLength=$mrdsl MaxXmitDataSegmentLength=8192 \
	FirstBurstLength=32768 MaxBurstLength=131072 ImmediateData=Yes \
	InitialR2T=No HeaderDigest=None DataDigest=None; do
	echo "$info" | grep -qx "[[:space:]]*${kv%%=*}: ${kv#*=}" ||
		vm_fail "iscsiadm -P 3: expected ${kv%%=*}: ${kv#*=}, have: $(echo "$info" | grep "${kv%%=*}:" | tr -s ' \t' ' ')"
done
vm_log "iscsiadm -P 3 shows the configured values"

# debugfs: the connection's iSER mode
host=$(basename "$(readlink -f /sys/class/iscsi_session/session*/device/..)")
f=/sys/kernel/debug/ib_iser/$host/conn
[ -r "$f" ] || vm_fail "no $f (debugfs: $(ls /sys/kernel/debug/ib_iser 2>&1))"
mode=$(cat "$f")
echo "$mode"
# the receive buffers as isi_rx_count() sizes them (see the top)
cmds_max=$(iscsiadm -m node -T "$VM_TARGET_IQN" -p "$VM_TGT_IP:$VM_ISER_PORT" -I iser |
	awk '$1 == "node.session.cmds_max" { print $3 }')
[ -n "$cmds_max" ] || vm_fail "no node.session.cmds_max in the node record"
rx_want=$((cmds_max < 128 ? cmds_max + 16 : 128 + 16))
vm_log "expected receive buffers: $rx_want (cmds_max $cmds_max) of 512 bytes, spill $((28 + 48 + mrdsl)) bytes"
for kv in state=up connections_started=1 rx_data_bytes=$mrdsl rx_buffers=$rx_want \
	rx_buffer_bytes=512 rx_spill_bytes=$((28 + 48 + mrdsl)) "${expect[@]}"; do
	echo "$mode" | grep -q "^${kv%%=*}: ${kv#*=}\( \|\$\)" ||
		vm_fail "$f: expected ${kv%%=*}: ${kv#*=}, have: $(echo "$mode" | grep "^${kv%%=*}:")"
done
io_bytes=$(echo "$mode" | awk '/^max_io_bytes:/ { print $2 }')
[ "$((io_bytes / 1024))" = "$(cat "/sys/block/${dev#/dev/}/queue/max_hw_sectors_kb")" ] ||
	vm_fail "max_io_bytes $io_bytes does not match max_hw_sectors_kb $(cat "/sys/block/${dev#/dev/}/queue/max_hw_sectors_kb")"
[ "$io_bytes" = "$((io_want * 1024))" ] ||
	vm_fail "max_io_kb $io_kb: the session transfers $((io_bytes / 1024)) KiB per command, expected $io_want"
vm_log "mode: $(echo "$mode" | paste -sd ';' -)"
big=""
if [ -n "$max_io" ]; then
	# one command per I/O: let the block layer send what the host takes
	echo "$io_want" >"/sys/block/${dev#/dev/}/queue/max_sectors_kb" ||
		vm_fail "cannot raise max_sectors_kb of $dev to $io_want"
	big="[big-${io_want}k-qd4]
rw=randwrite
bs=${io_want}k
iodepth=4
size=24M
offset=32M"
fi

# unsolicited Data-Out up to FirstBurstLength, then the rest by RDMA Read
vm_fio "$dev" mode <<-EOF
	[seq-128k-qd4]
	rw=write
	bs=128k
	iodepth=4
	size=8M
	[rand-4k-64k-qd16]
	rw=randwrite
	bsrange=4k-64k
	blockalign=4k
	iodepth=16
	size=8M
	offset=16M
	$big
EOF
vm_logout_check "$dev"
[ ! -e "/sys/kernel/debug/ib_iser/$host" ] ||
	vm_fail "debugfs directory of $host left after logout"
