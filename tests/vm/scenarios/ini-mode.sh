# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What our initiator shows of a connection: the iSER mode in debugfs
# (/sys/kernel/debug/ib_iser/host<N>/conn) and the negotiated iSCSI values
# in "iscsiadm -m session -P 3", both checked against what was configured.
#   KEY=VALUE   a line "KEY: VALUE" expected in the debugfs file (e.g.
#               header=28 zbva=0 send_with_invalidate=1)
#   --max-io-kb N[:E]  set ib_iser's max_io_kb to N before the login (after
#               checking that out-of-range values are refused); the
#               session must then transfer E KiB per command (default N;
#               less when the device bounds it) and a fio job with E KiB
#               blocks must verify
# The iSCSI side is fixed: the node record asks for MaxRecvDataSegmentLength
# (InitiatorRecvDataSegmentLength with iSER) 131072, FirstBurstLength 32768,
# MaxBurstLength 131072, ImmediateData Yes, InitialR2T No; the TPG allows
# InitialR2T=No and keeps its defaults otherwise (FirstBurstLength 65536,
# MaxBurstLength 262144, TargetRecvDataSegmentLength 8192).  The receive
# buffers in debugfs must hold exactly the declared 131072 bytes, and with
# the default rx_budget_kb (16384) on RoCE there are 124 of them (33 pages
# each), fewer than the 144 of a full ring.

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
io_kb=${max_io%%:*}
io_want=${max_io##*:}

vm_rxe_up
vm_load_roles
if [ -n "$max_io" ]; then
	p=/sys/module/ib_iser/parameters/max_io_kb
	[ "$(cat $p)" = 512 ] || vm_fail "max_io_kb is $(cat $p), not the default 512"
	for bad in 0 63 16385 x; do
		if echo "$bad" >"$p" 2>/dev/null; then
			vm_fail "max_io_kb accepted $bad"
		fi
	done
	echo "$io_kb" >"$p" || vm_fail "max_io_kb refused $io_kb"
	vm_log "max_io_kb: $(cat $p) (out-of-range values refused)"
fi
vm_target_setup
vm_tcli "/iscsi/$VM_TARGET_IQN/tpg1 set parameter InitialR2T=No"
vm_iscsid_start
vm_node_new
vm_node_set node.conn[0].iscsi.MaxRecvDataSegmentLength 131072
vm_node_set node.session.iscsi.FirstBurstLength 32768
vm_node_set node.session.iscsi.MaxBurstLength 131072
vm_node_set node.session.iscsi.ImmediateData Yes
vm_node_set node.session.iscsi.InitialR2T No
mountpoint -q /sys/kernel/debug || vm_must mount -t debugfs debugfs /sys/kernel/debug

dev=$(vm_login_disk) || exit 1

# iscsiadm -m session -P 3: negotiated = configured, combined per RFC 7143
info=$(iscsiadm -m session -P 3 2>&1)
echo "$info" | sed -n '/Negotiated iSCSI params/,$p'
for kv in MaxRecvDataSegmentLength=131072 MaxXmitDataSegmentLength=8192 \
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
for kv in state=up connections_started=1 rx_data_bytes=131072 rx_buffers=124 "${expect[@]}"; do
	echo "$mode" | grep -q "^${kv%%=*}: ${kv#*=}\( \|\$\)" ||
		vm_fail "$f: expected ${kv%%=*}: ${kv#*=}, have: $(echo "$mode" | grep "^${kv%%=*}:")"
done
max_io=$(echo "$mode" | awk '/^max_io_bytes:/ { print $2 }')
[ "$((max_io / 1024))" = "$(cat "/sys/block/${dev#/dev/}/queue/max_hw_sectors_kb")" ] ||
	vm_fail "max_io_bytes $max_io does not match max_hw_sectors_kb $(cat "/sys/block/${dev#/dev/}/queue/max_hw_sectors_kb")"
vm_log "mode: $(echo "$mode" | paste -sd ';' -)"
big=""
if [ -n "$max_io" ]; then
	[ "$max_io" = "$((io_want * 1024))" ] ||
		vm_fail "max_io_kb $io_kb: the session transfers $((max_io / 1024)) KiB per command, expected $io_want"
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
