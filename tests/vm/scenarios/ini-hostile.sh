# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# A hostile target against the initiator: tests/vm/tools/iser_tgt, a
# userspace iSER target (no LIO), lets iscsid log in to a normal session
# over iSER (a 1 MiB LUN of zeros; the scan is answered properly) and gives
# each connection one case: a full-feature case acts on the first READ of
# block 1000 (the trigger), a login case on the first Login Request, and
# iscsid's session recovery brings the next connection and the next case.
# The cases (see the tool's header): bad data segment lengths, padding, a
# short Send, an AHS, an ITT of no live task, Send with Invalidate of the
# wrong rkey or on a PDU that must not carry one or when it was not
# negotiated, opcodes wrong for the phase, a reserved iSER opcode, a Send
# larger than the receive buffers, a HelloReply when no Hello was sent
# (ini-hello.sh has the Hello cases); a TMF, Text or Logout Response, a
# NOP-In or a Reject of a ping naming a READ's ITT (a response to a
# request that READ never was: libiscsi of Debian's 6.12.107 completes
# the READ with it, as a success without data); and reserved bits
# everywhere, which must be ignored. The scenario reads block 1000 in a
# loop until every case is served. Each case must end the connection (the tool sees the
# initiator disconnect) with the kernel log line that names it, and only
# that one: the PDUs the tool sent behind the failing one (one per READ
# in flight) are dropped unread, not refused one by one; and
# nothing worse (run-job.sh fails on WARNING, BUG, Oops). The last
# connection is served properly (and any after it, should the session
# recover once more): 1 MiB reads back as zeros, logout works and the
# initiator module unloads.
#
# The initiator column decides what is tested: ours (the default row) or
# the in-tree ib_iser (a reference row, not in the default set): its
# summary lines are checked, its log lines are not.

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
	"itt-bogus|$ffp|PDU 0x21 for ITT 0xbadf00d, no live task: refused"
	"inv-rkey|$ffp|receive completion failed: remote invalid request error"
	"inv-other|$ffp|remote invalidation of 0x[0-9a-f]+ does not match the task"
	"inv-nop|$ffp|remote invalidation with opcode 0x20"
	"login-op|login=no sent=yes closed=yes|opcode 0x20\\): opcode not allowed in this phase"
	"inv-unneg|$ffp|remote invalidation of 0x[0-9a-f]+ not negotiated"
	"op-login|$ffp|opcode 0x23\\): opcode not allowed in this phase"
	"op-r2t|$ffp|opcode 0x31\\): PDU iSER never carries in a Send"
	"op-datain|$ffp|opcode 0x25\\): PDU iSER never carries in a Send"
	"op-unknown|$ffp|opcode 0x28\\): opcode the peer never sends"
	"iser-op|$ffp|iSER 0x40, opcode 0x21\\): not an iSCSI control-type iSER message"
	"bigsend|$ffp|receive completion failed"
	"hello-unasked|$ffp|bad PDU received \\(12 bytes\\): shorter than iSER header and BHS"
	"kind-tmf|$ffp|PDU 0x22 for ITT 0x[0-9a-f]+, no task it answers: refused"
	"kind-text|$ffp|PDU 0x24 for ITT 0x[0-9a-f]+, no task it answers: refused"
	"kind-logout|$ffp|PDU 0x26 for ITT 0x[0-9a-f]+, no task it answers: refused"
	"kind-nop|$ffp|PDU 0x20 for ITT 0x[0-9a-f]+, no task it answers: refused"
	"kind-reject|$ffp|PDU 0x3f for ITT 0x[0-9a-f]+, no task it answers: refused"
	"good|login=ok sent=no closed=yes|"
)
names=()
for c in "${cases[@]}"; do
	names+=("${c%%|*}")
done
n=${#names[@]}

# seconds for all cases (the debug kernel reconnects about 3 times slower)
limit=$((240 * ${VM_TIMEOUT_SCALE:-1}))

vm_rxe_up
vm_load_roles
out=$VM_SCEN_DIR/iser_tgt.out
vm_iser_tgt_start "$out" "$(IFS=,; echo "${names[*]}")" -t 1000 -w "$limit"
tpid=$VM_ISER_TGT_PID
vm_iscsid_start
dev=$(vm_iser_tgt_login) || exit 1

served() {
	grep -c '^case=' "$out"
}

ini_logged_in() {
	iscsiadm -m session -P 1 2>/dev/null | grep -q 'iSCSI Session State: LOGGED_IN'
}

# A 12 KiB read from block 1000 once a second, each in the background:
# inv-other holds the trigger and needs another command soon, which a read
# waiting for the held one would not send (at 4 KiB per command, each read
# is three commands in flight at once).
echo 4 >"/sys/block/${dev#/dev/}/queue/max_sectors_kb" ||
	vm_fail "cannot set max_sectors_kb of $dev"
end=$((SECONDS + limit))
reads=()
while [ "$(served)" -lt $((n - 1)) ] && [ $SECONDS -lt $end ]; do
	kill -0 "$tpid" 2>/dev/null || break
	timeout 60 dd if="$dev" of=/dev/null bs=4096 count=3 skip=125 \
		iflag=direct status=none 2>/dev/null &
	reads+=("$!")
	sleep 1
done
wait "${reads[@]}"
vm_log "iser_tgt served $(served) of $n cases:"
cat "$out"
[ "$(served)" -ge $((n - 1)) ] ||
	vm_fail "iser_tgt served $(served) of $n cases in $limit s"

# what the tool, the session and iscsid last said, for a failure reason
state() {
	printf 'iser_tgt: %s; session: %s; iscsid: %s' \
		"$(tail -n 2 "$out" "$out.err" 2>&1 | grep -v '^$' | tr '\n' ' ')" \
		"$(iscsiadm -m session -P 1 2>&1 | grep -E 'State' | tr -s ' \t\n' ' ')" \
		"$(grep -iE 'reopen|login|error|fail|conn' "$VM_SCEN_DIR/iscsid.log" 2>/dev/null | tail -n 4 | tr '\n' ' ')"
}

# the last connection is a well-behaved one
vm_wait 60 ini_logged_in || vm_fail "no session after the last hostile case ($(state))"
cmp <(dd if="$dev" bs=4096 count=256 iflag=direct status=none) \
	<(head -c 1M /dev/zero) || vm_fail "the good connection did not read back zeros"
vm_iser_tgt_logout
# more than one means the session recovered once more after the last
# hostile case (the tool serves good connections until the logout)
vm_log "iser_tgt served $(grep -c '^case=good ' "$out") good connection(s)"

klog=$(vm_scen_dmesg)

# the kernel lines between the tool's mark of case $1 and the next mark,
# without their timestamps, joined by " | "
case_klog() {
	echo "$klog" | awk -v m="iser_tgt: case $1\$" '
		/iser_tgt: case / { p = ($0 ~ m); next }
		p { sub(/^\[[^]]*\] */, ""); printf "%s | ", $0 }'
}
# the tool's summary lines per case, and the refusals our initiator
# logged per case, each in one pass (a process per case and check would
# take seconds under TCG)
declare -A got_of refused_of
while read -r l; do
	[[ $l == case=* ]] || continue
	l2=${l#case=}
	got_of[${l2%% *}]+="$l"$'\n'
done <"$out"
while read -r name cnt; do
	refused_of[$name]=$cnt
done < <(echo "$klog" | awk '
	/iser_tgt: case / { c = $NF; next }
	c != "" { k[c] += gsub(/bad PDU received|refused/, "&") }
	END { for (c in k) print c, k[c] }')
bad=""
for c in "${cases[@]}"; do
	IFS='|' read -r name want line <<<"$c"
	got=${got_of[$name]:-}
	[[ $got == *"$want"* ]] || bad="$bad; $name: expected '$want', got '${got%$'\n'}'"
	if [ "$VM_INITIATOR" = ours ] && [ -n "$line" ]; then
		[[ $klog =~ $line ]] ||
			bad="$bad; $name: no kernel log line /$line/ (its kernel lines: $(case_klog "$name"))"
		# what arrives behind the failing PDU is dropped unread
		n=${refused_of[$name]:-0}
		[ "$n" -le 1 ] ||
			bad="$bad; $name: $n PDUs refused on one connection: those behind the failing one were read too"
	fi
done
[ -z "$bad" ] || vm_fail "${bad#; }"
vm_log "every case failed the connection with its log line"

vm_iscsid_stop
vm_must rmmod ib_iser
vm_log "ib_iser unloaded"
