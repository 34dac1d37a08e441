# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The initiator's iSER Hello (ib_iser hello=on) against tests/vm/tools/
# iser_tgt, a userspace target that answers or mistreats it, one case per
# connection (see the tool's header):
#   itt-bogus   the Hello answered properly; the first READ of block 1000
#               gets a response for an ITT never issued, which closes the
#               connection and starts the session's recovery
#   hello-rej   a HelloReply with the reject bit
#   hello-ver   a HelloReply accepting iSER version 2
#   hello-len   a HelloReply of 16 bytes
#   hello-none  no HelloReply (ib_iser waits 5 s)
#   hello-pdu   a NOP-In where the HelloReply must come
#   hello-drop  the tool disconnects when the Hello comes: ib_iser must
#               stop waiting at once (only hello-none may log the 5 s
#               timeout)
#   good        the Hello answered properly: the session recovers
# Each bad case must end its connection before the full feature phase
# starts, with the kernel log line that says why; the good connection must
# show the exchange in debugfs (hello: 1, the HelloReply's iSER-ORD, which
# the tool sets to min(iSER-IRD, 16), and the Hello's iSER-IRD is the QP's
# IRD that debugfs shows as ird) and read back the LUN's zeros. Then
# hello=off: a new session sends no Hello (the tool sees none), and a word
# the parameter does not know is refused. The case of a HelloReply that
# comes unasked (hello-unasked) is in ini-hostile.sh.

cases=(
	"itt-bogus|login=ok sent=yes closed=yes hello=yes|PDU 0x21 for ITT 0xbadf00d, no live task: refused"
	"hello-rej|login=ok sent=yes closed=yes hello=yes|the target rejected our iSER Hello \\(its version 1, iSER-ORD [0-9]+\\); closing"
	"hello-ver|login=ok sent=yes closed=yes hello=yes|HelloReply names iSER version 2, we speak only 1; closing"
	"hello-len|login=ok sent=yes closed=yes hello=yes|expected a HelloReply, got 16 bytes \\(iSER byte 0x30\\): -7; closing"
	"hello-none|login=ok sent=yes closed=yes hello=yes|no HelloReply within 5000 ms"
	"hello-pdu|login=ok sent=yes closed=yes hello=yes|expected a HelloReply, got 76 bytes \\(iSER byte 0x10\\): -7; closing"
	"hello-drop|login=ok sent=no closed=self hello=yes|the connection ended before the HelloReply came; closing"
	"good|login=ok sent=no closed=yes hello=yes|"
)
names=()
for c in "${cases[@]}"; do
	names+=("${c%%|*}")
done
n=${#names[@]}

vm_rxe_up
vm_load_roles
[ "$VM_INITIATOR" = ours ] || vm_fail "ini-hello.sh: only our initiator has the hello switch"
param=/sys/module/ib_iser/parameters/hello
[ "$(cat "$param")" = auto ] || vm_fail "ib_iser hello is '$(cat "$param")' by default, not auto"
! echo maybe 2>/dev/null >"$param" || vm_fail "ib_iser hello accepted 'maybe'"
echo on >"$param" || vm_fail "cannot set ib_iser hello=on"

out=$VM_SCEN_DIR/iser_tgt.out
vm_iser_tgt_start "$out" "$(IFS=,; echo "${names[*]}")" -t 1000 -w 150
tpid=$VM_ISER_TGT_PID
vm_iscsid_start
dev=$(vm_iser_tgt_login node.session.timeo.replacement_timeout=120) || exit 1

served() {
	grep -c '^case=' "$out"
}

ini_logged_in() {
	iscsiadm -m session -P 1 2>/dev/null | grep -q 'iSCSI Session State: LOGGED_IN'
}

# the trigger of the first case; the others act on the Hellos of the
# connections the session's recovery makes
end=$((SECONDS + 150))
dds=()
while [ "$(served)" -lt $((n - 1)) ] && [ $SECONDS -lt $end ]; do
	kill -0 "$tpid" 2>/dev/null || break
	timeout 60 dd if="$dev" of=/dev/null bs=4096 count=1 skip=125 \
		iflag=direct status=none 2>/dev/null &
	dds+=($!)
	sleep 2
done
vm_log "iser_tgt served $(served) of $n cases:"
cat "$out"
[ "$(served)" -ge $((n - 1)) ] ||
	vm_fail "iser_tgt served $(served) of $n cases in 150 s ($(tail -n 3 "$out.err" | tr '\n' ' '))"
vm_wait 60 ini_logged_in || vm_fail "no session after the last Hello case"
# the triggers only: iser_tgt serves the good case until its own time limit
[ ${#dds[@]} -eq 0 ] || wait "${dds[@]}"

# what the good connection reports
host=$(basename "$(readlink -f /sys/class/iscsi_session/session*/device/..)")
mode=$(cat "/sys/kernel/debug/ib_iser/$host/conn") || vm_fail "no debugfs view for $host"
vm_log "debugfs: $(echo "$mode" | paste -sd ' ' -)"
ird=$(echo "$mode" | awk '$1 == "ird:" { print $2 }')
[ -n "$ird" ] || vm_fail "debugfs shows no ird"
want_ord=$((ird < 16 ? ird : 16))
echo "$mode" | grep -qx 'hello: 1' || vm_fail "debugfs does not show the Hello exchange"
echo "$mode" | grep -qx "hello_reply: version 1 ord $want_ord" ||
	vm_fail "debugfs: expected 'hello_reply: version 1 ord $want_ord' (IRD $ird)"
cmp <(dd if="$dev" bs=4096 count=256 iflag=direct status=none) \
	<(head -c 1M /dev/zero) || vm_fail "the good connection did not read back zeros"
vm_iser_tgt_logout

klog=$(vm_scen_dmesg)
bad=""
for c in "${cases[@]}"; do
	IFS='|' read -r name want line <<<"$c"
	got=$(grep -m1 "^case=$name " "$out")
	echo "$got" | grep -q "$want" || bad="$bad; $name: expected '$want', got '$got'"
	if [ -n "$line" ]; then
		echo "$klog" | grep -qE "$line" ||
			bad="$bad; $name: no kernel log line /$line/"
	fi
done
timeouts=$(echo "$klog" | grep -c 'no HelloReply within')
[ "$timeouts" = 1 ] ||
	bad="$bad; $timeouts 'no HelloReply within' lines, not 1 (hello-none's): a connection the target dropped waited for the timeout"
[ -z "$bad" ] || vm_fail "${bad#; }"
vm_log "every bad HelloReply ended its connection with its log line"

# hello=off: no Hello on a new session
echo off >"$param" || vm_fail "cannot set ib_iser hello=off"
vm_must iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$VM_TGT_IP:$VM_ISER_TGT_PORT" -I iser -o delete
vm_iser_tgt_start "$out.off" good -w 60
dev=$(vm_iser_tgt_login) || exit 1
cmp <(dd if="$dev" bs=4096 count=16 iflag=direct status=none) \
	<(head -c 64K /dev/zero) || vm_fail "hello=off: the LUN did not read back zeros"
mode=$(cat /sys/kernel/debug/ib_iser/host*/conn)
echo "$mode" | grep -qx 'hello: 0' || vm_fail "hello=off: debugfs shows a Hello exchange"
vm_iser_tgt_logout
cat "$out.off"
grep -q 'hello=yes' "$out.off" && vm_fail "hello=off: iser_tgt received a Hello"
vm_log "hello=off: no Hello sent"

vm_iscsid_stop
vm_must rmmod ib_iser
vm_log "ib_iser unloaded"
