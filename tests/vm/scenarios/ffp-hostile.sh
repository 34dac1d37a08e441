# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Bad input after login: tests/vm/tools/iser_ffp logs in to a discovery
# session over iSER (a userspace initiator, 28-byte headers) and then sends
# what the target must refuse. Each line is one connection:
#  1. nop: a NOP-Out ping is answered (the tool's login works);
#  2. hello: an iSER Hello as the first full-feature message gets a
#     HelloReply that accepts it, and the connection goes on;
#  3. snack, login: a SNACK and a Login Request in full feature phase,
#     which iSER forbids, get a Reject (reason 0x04, protocol error) and
#     the connection goes on (the ping after it is answered);
#  4. scsi: a SCSI Command in a discovery session gets a Reject;
#  5. baddlen: a Text Request whose DataSegmentLength claims more than
#     the Send carries closes the connection;
#  6. bigsend: a 64 KiB Send, larger than the target's receive buffers,
#     closes the connection;
# the target names each in its log, and a normal login with verified data
# works afterwards.

ffp=$VM_REPO/build/vm/tools/iser_ffp
[ -x "$ffp" ] || vm_fail "$ffp is not built (make vm-tools)"
vm_rxe_up
vm_load_roles
vm_target_setup

ffp_run() { # MODE REGEX: one connection; its summary must match REGEX
	local out
	out=$("$ffp" -m "$1" "$VM_TGT_IP" "$VM_ISER_PORT" 2>&1) ||
		vm_fail "iser_ffp -m $1 did not run: $out"
	vm_log "iser_ffp -m $1: $out"
	echo "$out" | grep -qE "$2" ||
		vm_fail "iser_ffp -m $1: expected /$2/, got: $out"
}
ffp_run nop 'login=ok hello_reply=none reject=none nop_in=yes closed=no'
ffp_run hello 'login=ok hello_reply=ok reject=none nop_in=yes closed=no'
ffp_run snack 'login=ok hello_reply=none reject=0x04 nop_in=yes closed=no'
ffp_run login 'login=ok hello_reply=none reject=0x04 nop_in=yes closed=no'
ffp_run scsi 'login=ok hello_reply=none reject=0x04 nop_in=yes closed=no'
ffp_run baddlen 'login=ok .* closed=yes'
ffp_run bigsend 'login=ok .* closed=yes'

klog=$(vm_scen_dmesg)
for line in 'PDU 0x10 not allowed with iSER here' \
	'PDU 0x03 not allowed with iSER here' \
	'opcode 0x01 in a discovery session' 'malformed PDU' \
	'receive failed'; do
	echo "$klog" | grep -q "$line" ||
		vm_fail "the target did not log \"$line\""
done
vm_log "the target logged every refusal"

# the target still serves a normal initiator
vm_iscsid_start
vm_node_new
dev=$(vm_login_disk) || exit 1
printf '%s\n' '[after-hostile]' 'rw=randwrite' 'bs=16k' 'iodepth=8' 'size=8M' |
	vm_fio "$dev" after-hostile || exit 1
vm_logout_check "$dev"
