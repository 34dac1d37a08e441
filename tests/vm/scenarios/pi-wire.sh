# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# T10 protection information on the wire from a peer that makes its own
# tuples: iser_ffp -m piguard (tests/vm/tools/ffp/pi.c) against our target,
# on LIO's ramdisk backstore formatted with protection type 1 (512-byte
# blocks) behind a TPG with t10_pi. No initiator module takes part.
#   - a protected WRITE(10) with correct tuples completes GOOD;
#   - one with a wrong guard, and one with a wrong reference tag, get
#     CHECK CONDITION, ABORTED COMMAND, LOGICAL BLOCK GUARD CHECK FAILED
#     (10/01) or LOGICAL BLOCK REFERENCE TAG CHECK FAILED (10/03): LIO's
#     pi_prot_verify checks what our target split off the wire;
#   - one whose EDTL leaves the tuples out is refused by our target before
#     any data moves: ILLEGAL REQUEST, INVALID FIELD IN CDB (05/24/00),
#     with its log line;
#   - a protected READ(10) returns the good WRITE's data and tuples, byte
#     for byte: the refused WRITEs changed nothing;
#   - the connection stays up through all of it (a ping after), and LIO
#     shows no session once the tool has gone.

[ $# -eq 0 ] || vm_fail "pi-wire.sh: no arguments"
ffp=$VM_REPO/build/vm/tools/iser_ffp
[ -x "$ffp" ] || vm_fail "$ffp is not built (make vm-tools)"
vm_rxe_up
vm_load_roles
vm_target_setup --pi 1

out=$("$ffp" -m piguard -W "$((60 * ${VM_TIMEOUT_SCALE:-1}))" \
	-n "$VM_TARGET_IQN" -i "$VM_INITIATOR_IQN" "$VM_TGT_IP" "$VM_ISER_PORT" 2>&1) ||
	vm_fail "iser_ffp -m piguard did not run: $out"
vm_log "iser_ffp -m piguard: $out"
want='login=ok .*nop_in=yes closed=no .* pi good=0x00 guard=0x02/0b/10/01 ref=0x02/0b/10/03 notuple=0x02/05/24/00 read=0x00 readback=ok'
echo "$out" | grep -qE "$want" || vm_fail "iser_ffp -m piguard: expected /$want/"
dmesg | grep -q 'EDTL 4096 is not 4096 bytes of data with a tuple per 512-byte block (4160 bytes); refused' ||
	vm_fail "our target did not log why it refused the WRITE without tuples"
vm_log "target: $(dmesg | grep -m1 'EDTL 4096 is not' | sed 's/^\[[^]]*\] *//')"
vm_wait 30 vm_acl_idle || vm_fail "LIO still shows a session 30 s after the tool left"
vm_log "pi-wire: every bad tuple refused with its sense, the good data kept"
