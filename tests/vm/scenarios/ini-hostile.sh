# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# A hostile target against the initiator: tests/vm/tools/iser_tgt, a
# userspace iSER target, lets iscsid log in to a normal session over iSER
# (a 1 MiB LUN of zeros) and gives each connection one case: the first
# connection's READ of block 1000 (the trigger) gets a Send with a bad
# DataSegmentLength, the next connection (iscsid's session recovery) the
# next case, and so on: bad lengths, an ITT of no live task, Send with
# Invalidate of the wrong rkey or on a PDU that must not carry one,
# opcodes wrong for the phase, a reserved iSER opcode, a Send larger than
# the receive buffers, and two login-phase cases (see the list below and
# the tool's header). The scenario reads block 1000 in a loop until every
# case is served. Each case must fail the connection (the tool sees the
# disconnect) with the kernel log line that names it, and nothing worse
# (run-job.sh fails on WARNING, BUG, Oops). The last connection is served
# properly: the data reads back as zeros, logout works and the initiator
# module unloads.
#
# The initiator column decides what is tested: ours (the default row) or
# the in-tree ib_iser (a reference row, not in the default set). The log
# lines are checked for ours only.

tgt=$VM_REPO/build/vm/tools/iser_tgt
[ -x "$tgt" ] || vm_fail "$tgt is not built (make vm-tools)"
port=3262
iqn=iqn.2003-01.org.linux-iscsi.iser-vm:hostile
portal=$VM_TGT_IP:$port

# CASE|expected summary line|kernel log line of our initiator (ERE); the
# full-feature cases must fail the connection after the login
ffp='login=ok sent=yes closed=yes'
cases=(
	"reserved|login=ok sent=yes closed=self|"
	"dlen|$ffp|\\(76 bytes, iSER 0x10, opcode 0x21\\): DataSegmentLength beyond the bytes received"
	"login-dlen|login=no sent=yes closed=yes|\\(76 bytes, iSER 0x10, opcode 0x23\\): DataSegmentLength beyond the bytes received"
	"dlen-big|$ffp|opcode 0x21\\): DataSegmentLength above our receive length"
	"pad|$ffp|\\(84 bytes, iSER 0x10, opcode 0x21\\): bytes past the padded data segment"
	"short|$ffp|\\(40 bytes\\): shorter than iSER header and BHS"
	"ahs|$ffp|PDU 0x21 with an AHS refused"
	"itt|$ffp|PDU 0x21 for ITT 0x[0-9a-f]+, no live task: refused"
	"itt-bogus|$ffp|PDU 0x21 for ITT 0x0badf00d, no live task: refused"
	"inv-rkey|$ffp|receive completion failed: remote invalid request error"
	"inv-other|$ffp|remote invalidation of 0x[0-9a-f]+ does not match the task"
	"inv-nop|$ffp|remote invalidation with opcode 0x20"
	"login-op|login=no sent=yes closed=yes|opcode 0x20\\): opcode not allowed in this phase"
	"inv-unneg|$ffp|remote invalidation of 0x[0-9a-f]+ not negotiated"
	"op-login|$ffp|opcode 0x23\\): opcode not allowed in this phase"
	"op-r2t|$ffp|opcode 0x31\\): PDU iSER never carries in a Send"
	"op-datain|$ffp|opcode 0x25\\): PDU iSER never carries in a Send"
	"op-unknown|$ffp|opcode 0x28\\): opcode no target sends"
	"iser-op|$ffp|iSER 0x40, opcode 0x21\\): not an iSCSI control-type iSER message"
	"bigsend|$ffp|receive completion failed"
	"good|login=ok sent=no closed=yes|"
)
names=()
for c in "${cases[@]}"; do
	names+=("${c%%|*}")
done
n=${#names[@]}

vm_rxe_up
vm_load_roles
out=$VM_SCEN_DIR/iser_tgt.out
list=$(IFS=,; echo "${names[*]}")
vm_log "+ iser_tgt -c $list -t 1000 $VM_TGT_IP $port"
"$tgt" -c "$list" -t 1000 -w 150 "$VM_TGT_IP" "$port" >"$out" \
	2>"$VM_SCEN_DIR/iser_tgt.err" &
tpid=$!
vm_iscsid_start
vm_must iscsiadm -m node -T "$iqn" -p "$portal" -I iser -o new
for kv in node.conn[0].timeo.noop_out_interval=5 \
	node.conn[0].timeo.noop_out_timeout=5 \
	node.session.timeo.replacement_timeout=20 \
	node.conn[0].iscsi.MaxRecvDataSegmentLength=8192; do
	vm_must iscsiadm -m node -T "$iqn" -p "$portal" -I iser -o update \
		-n "${kv%%=*}" -v "${kv#*=}"
done
vm_run timeout 60 iscsiadm -m node -T "$iqn" -p "$portal" -I iser --login ||
	vm_fail "the first login to iser_tgt failed: $(cat "$VM_SCEN_DIR/iser_tgt.err")"
dev=/dev/$(vm_wait 30 vm_disk_sysfs && vm_disk_sysfs) ||
	vm_fail "no disk for the iser_tgt session"
vm_wait 10 test -b "$dev" || vm_fail "$dev did not appear"
vm_log "logged in to iser_tgt, disk $dev"

served() {
	grep -c '^case=' "$out"
}

ini_logged_in() {
	iscsiadm -m session -P 1 2>/dev/null | grep -q 'iSCSI Session State: LOGGED_IN'
}

# two reads of the trigger block at once (inv-other needs a second command)
end=$((SECONDS + 150))
while [ "$(served)" -lt $((n - 1)) ] && [ $SECONDS -lt $end ]; do
	kill -0 "$tpid" 2>/dev/null || break
	timeout 30 dd if="$dev" of=/dev/null bs=512 skip=1000 count=1 \
		iflag=direct status=none 2>/dev/null &
	r1=$!
	timeout 30 dd if="$dev" of=/dev/null bs=512 skip=1000 count=1 \
		iflag=direct status=none 2>/dev/null &
	r2=$!
	wait "$r1" "$r2"
	sleep 0.5
done
vm_log "iser_tgt served $(served) of $n cases:"
cat "$out"
[ "$(served)" -ge $((n - 1)) ] ||
	vm_fail "iser_tgt served $(served) of $n cases in 150 s"

# the last connection is a well-behaved one
vm_wait 60 ini_logged_in || vm_fail "no session after the last hostile case"
cmp <(dd if="$dev" bs=4096 count=256 iflag=direct status=none) \
	<(head -c 1M /dev/zero) || vm_fail "the good connection did not read back zeros"
vm_run timeout 60 iscsiadm -m node -T "$iqn" -p "$portal" -I iser --logout ||
	vm_fail "logout from iser_tgt failed"
vm_wait 15 vm_no_sessions || vm_fail "session still present after logout"
vm_wait 30 sh -c "! kill -0 $tpid" || vm_fail "iser_tgt did not finish"
wait "$tpid" || vm_fail "iser_tgt failed: $(cat "$VM_SCEN_DIR/iser_tgt.err")"

klog=$(vm_scen_dmesg)
bad=""
for c in "${cases[@]}"; do
	IFS='|' read -r name want line <<<"$c"
	got=$(grep "^case=$name " "$out")
	echo "$got" | grep -q "$want" || bad="$bad; $name: expected '$want', got '$got'"
	if [ "$VM_INITIATOR" = ours ] && [ -n "$line" ]; then
		echo "$klog" | grep -qE "$line" ||
			bad="$bad; $name: no kernel log line /$line/"
	fi
done
[ -z "$bad" ] || vm_fail "${bad#; }"
vm_log "every case failed the connection with its log line"

vm_iscsid_stop
vm_must rmmod ib_iser
vm_log "ib_iser unloaded"
