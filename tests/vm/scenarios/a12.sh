# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# One cell of the IBTA Annex A12 matrix: what each side offers in the CM
# exchange, what the connection must then use, and verified I/O in that
# mode.
#   ini_zbva=auto|off ini_sie=on|off tgt_zbva=auto|off tgt_sie=on|off
#       the switches of our modules (ib_iser.zbva, ib_iser.send_inv,
#       ib_isert.zbva, ib_isert.send_inv; default auto/on). The in-tree
#       modules have no such switches: the in-tree initiator always
#       declares the ZBVA exception and declares the Send-with-Invalidate
#       exception only when loaded with always_register=N (ini_sie=off
#       loads it so); the in-tree target always declares the ZBVA
#       exception and grants Send with Invalidate when offered
#       (drivers/infiniband/ulp/iser/iser_verbs.c,
#       isert/ib_isert.c of 6.1 and 6.12). ini_zbva=auto and tgt_sie=off
#       cannot be had from them and are refused as bad arguments.
#   hello=auto|on|off
#       our initiator's Hello switch (ib_iser.hello, default auto: only
#       over iWARP to a target without the A12 header, so never here).
#       on with the in-tree target is refused: Linux's isert
#       misreads a Hello (Documentation/interop.md).
# The expected mode is derived from the offers by A12's rules in
# a12_expect() (CA12-11, -13: Send with Invalidate only when both offer it;
# CA12-14, -16: ZBVA only when both do; CA12-17: the 12-byte header with
# ZBVA, else the 28-byte one), and compared with what our modules report:
# the initiator's debugfs (/sys/kernel/debug/ib_iser/hostN/conn: header,
# zbva, send_with_invalidate), the target's (the normal session's block of
# /sys/kernel/debug/ib_isert/connections, same keys) and the target's
# session log line ("12-byte (ZBVA)|28-byte header, Send with
# Invalidate|no Send with Invalidate"). Whether a Hello was exchanged is
# derived by a12_hello() from the switch and the transport, and compared
# with the initiator's debugfs (hello: 0|1) and our target's (hellos: N,
# the Hellos it answered on the connection). The scenario logs one table
# row, which vm-check.sh gathers into the kernel's matrix table after
# its results:
#   a12: cell ... expected ... seen ... PASS|FAIL
# Then fio with verification over the whole LUN: random writes of 512 B to
# 1 MiB at 512-byte boundaries, from buffers 512 bytes past a page boundary
# (fio's iomem_align offsets the page-aligned buffer base), queue depth 16,
# every block read back and checked.

ini_zbva=auto ini_sie=on tgt_zbva=auto tgt_sie=on hello=auto
while [ $# -gt 0 ]; do
	case $1 in
	hello=auto | hello=on | hello=off) hello=${1#*=} ;;
	ini_zbva=auto | ini_zbva=off) ini_zbva=${1#*=} ;;
	ini_sie=on | ini_sie=off) ini_sie=${1#*=} ;;
	tgt_zbva=auto | tgt_zbva=off) tgt_zbva=${1#*=} ;;
	tgt_sie=on | tgt_sie=off) tgt_sie=${1#*=} ;;
	*) vm_fail "a12.sh: bad argument $1" ;;
	esac
	shift
done
if [ "$VM_INITIATOR" = intree ] && [ "$ini_zbva" = auto ]; then
	ini_zbva=off	# the in-tree initiator never offers ZBVA
fi
[ "$VM_TARGET" != intree ] || [ "$tgt_zbva" = auto ] ||
	vm_fail "a12.sh: the in-tree target has no ZBVA switch (it always declines)"
[ "$VM_TARGET" != intree ] || [ "$tgt_sie" = on ] ||
	vm_fail "a12.sh: the in-tree target cannot decline Send with Invalidate"
[ "$VM_INITIATOR" = ours ] || [ "$hello" = auto ] ||
	vm_fail "a12.sh: the in-tree initiator has no Hello switch (it never sends one)"
[ "$VM_TARGET" != intree ] || [ "$hello" != on ] ||
	vm_fail "a12.sh: hello=on with the in-tree target (it misreads a Hello)"

# a12_expect INI_ZBVA INI_SIE TGT_ZBVA TGT_SIE (1: offered, 0: declined):
# "header=H zbva=Z send_with_invalidate=S"
a12_expect() {
	local zbva=$(($1 && $3)) sie=$(($2 && $4))
	echo "header=$((zbva ? 12 : 28)) zbva=$zbva send_with_invalidate=$sie"
}
offer() { [ "$1" = auto ] || [ "$1" = on ] && echo 1 || echo 0; }
# a12_hello SWITCH TRANSPORT: 1 when our initiator sends a Hello (RFC 5046
# 5.1.1) with that switch over that transport (infiniband, roce, iwarp):
# auto only over iWARP, where no Annex A12 exchange carries IRD and ORD
# a12_hello SWITCH TRANSPORT A12REP: 1 when our initiator sends a Hello.
# auto: over iWARP to a target whose reply carries no Annex A12 header
# (A12REP 0); both targets here, the in-tree one and ours, always send it.
a12_hello() {
	case $1 in
	on) echo 1 ;;
	off) echo 0 ;;
	*) [ "$2" = iwarp ] && [ "$3" = 0 ] && echo 1 || echo 0 ;;
	esac
}
# what each side offers: ours as switched, the in-tree target never ZBVA
t_zbva=$(offer "$tgt_zbva")
[ "$VM_TARGET" != intree ] || t_zbva=0
want=$(a12_expect "$(offer "$ini_zbva")" "$(offer "$ini_sie")" "$t_zbva" "$(offer "$tgt_sie")")
# soft-RoCE: RoCE v2; soft-iWARP (a "siw:a12" row): iWARP
transport=roce
[ "$VM_RDMA" != siw ] || transport=iwarp
want_hello=0
[ "$VM_INITIATOR" != ours ] || want_hello=$(a12_hello "$hello" "$transport" 1)
cell="ini=$VM_INITIATOR(zbva=$ini_zbva,sie=$ini_sie,hello=$hello) tgt=$VM_TARGET(zbva=$tgt_zbva,sie=$tgt_sie)"
vm_log "a12: $cell: expected $want hello=$want_hello"

vm_rxe_up
if [ "$VM_INITIATOR" = intree ]; then
	if [ "$ini_sie" = off ]; then
		vm_modprobe_intree ib_iser always_register=N
	else
		vm_modprobe_intree ib_iser
	fi
	VM_INITIATOR=none vm_load_roles
else
	vm_load_roles
	echo "$ini_zbva" >/sys/module/ib_iser/parameters/zbva ||
		vm_fail "cannot set ib_iser's zbva"
	echo "$ini_sie" >/sys/module/ib_iser/parameters/send_inv ||
		vm_fail "cannot set ib_iser's send_inv"
	echo "$hello" >/sys/module/ib_iser/parameters/hello ||
		vm_fail "cannot set ib_iser's hello"
	# a word the switch does not know is refused
	! echo maybe 2>/dev/null >/sys/module/ib_iser/parameters/zbva ||
		vm_fail "ib_iser.zbva accepted 'maybe'"
fi
if [ "$VM_TARGET" = ours ]; then
	echo "$tgt_zbva" >/sys/module/ib_isert/parameters/zbva ||
		vm_fail "cannot set ib_isert's zbva"
	echo "$tgt_sie" >/sys/module/ib_isert/parameters/send_inv ||
		vm_fail "cannot set ib_isert's send_inv"
fi
vm_log "switches: $(grep -H . /sys/module/ib_iser*/parameters/{zbva,send_inv} 2>/dev/null | paste -sd ' ' -)"
vm_target_setup
vm_iscsid_start
vm_node_new
dev=$(vm_login_disk) || exit 1

seen="" bad=""
if [ "$VM_INITIATOR" = ours ]; then
	host=$(basename "$(readlink -f /sys/class/iscsi_session/session*/device/..)")
	mode=$(cat "/sys/kernel/debug/ib_iser/$host/conn") ||
		vm_fail "no debugfs mode for $host"
	ini_seen=$(for k in header zbva send_with_invalidate; do
		echo "$mode" | awk -v k="$k:" '$1 == k { printf "%s=%s ", substr(k, 1, length(k) - 1), $2 }'
	done)
	ini_seen=${ini_seen% }
	seen="initiator: $ini_seen"
	[ "$ini_seen" = "$want" ] || bad="initiator reports $ini_seen"
	h=$(echo "$mode" | awk '$1 == "hello:" { print $2 }')
	seen="$seen hello=$h"
	[ "$h" = "$want_hello" ] || bad="${bad:+$bad; }initiator reports hello=$h, expected $want_hello"
fi
if [ "$VM_TARGET" = ours ]; then
	# the normal session's block of the target's debugfs view
	blk=$(awk -v RS= '/(^|\n)session: normal(\n|$)/' /sys/kernel/debug/ib_isert/connections) ||
		vm_fail "no debugfs view of our target"
	[ -n "$blk" ] || vm_fail "our target's debugfs shows no normal session"
	vm_log "target debugfs: $(echo "$blk" | paste -sd ' ' -)"
	tgt_seen=$(for k in header zbva send_with_invalidate; do
		echo "$blk" | awk -v k="$k:" '$1 == k { printf "%s=%s ", substr(k, 1, length(k) - 1), $2 }'
	done)
	tgt_seen=${tgt_seen% }
	seen="${seen:+$seen; }target: $tgt_seen"
	[ "$tgt_seen" = "$want" ] || bad="${bad:+$bad; }target reports $tgt_seen"
	h=$(echo "$blk" | awk '$1 == "hellos:" { print $2 }')
	seen="$seen hellos=$h"
	[ "$h" = "$want_hello" ] || bad="${bad:+$bad; }target answered $h Hello(s), expected $want_hello"
	# and its log line says the same
	h=${want#header=}
	h=${h%% *}
	s=${want##*send_with_invalidate=}
	twant="$([ "$h" = 12 ] && echo '12-byte (ZBVA)' || echo 28-byte) header, $([ "$s" = 1 ] && echo 'Send with Invalidate' || echo 'no Send with Invalidate')"
	line=$(vm_scen_dmesg | grep -o 'normal session from [^ ]*: [^,]*, [^,]*' | tail -n 1)
	[ "${line#*: }" = "$twant" ] ||
		bad="${bad:+$bad; }target logged '${line#*: }', expected '$twant'"
fi
verdict=PASS
[ -z "$bad" ] || verdict=FAIL
vm_log "a12: cell $cell | expected $want hello=$want_hello | seen $seen | $verdict"
[ -z "$bad" ] || vm_fail "a12 $cell: $bad"

# the whole LUN, every size from 512 B to 1 MiB, buffers off page alignment
size=$(blockdev --getsize64 "$dev")
vm_fio "$dev" a12 <<-EOF
	[mixed-512-1m-qd16]
	rw=randwrite
	bsrange=512-1m
	blockalign=512
	iomem_align=512
	iodepth=16
	size=$size
EOF
vm_logout_check "$dev"
