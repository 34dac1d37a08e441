# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# T10 protection information on the wire from a target that makes its own
# tuples: tests/vm/tools/iser_tgt -P -I serves a 1 MiB LUN of a pattern
# formatted with protection type 1 (512-byte blocks) to our initiator
# (pi_enable=1); block 1000 has a wrong guard (-G), block 1500 a wrong
# reference tag (-Q), and their data is right.
#   - the disk has the integrity profile T10-DIF-TYPE1-CRC;
#   - with the block layer's read_verify on (READ_PASS: our initiator
#     splits the wire layout, the block layer checks the tuples), a direct
#     read of block 1000 fails with the block layer's "guard tag error at
#     sector 1000", and one of block 1500 with its "ref tag error";
#   - with read_verify off (READ_STRIP: sd asks the host to check the
#     reference tag only), the read of block 1500 fails on our initiator's
#     own check ("READ at sector 1500: reference tag mismatch"), while
#     block 1000 reads back right: its data is good, and the guard is the
#     target's to check when nothing above asks for it;
#   - every other block reads back equal to the pattern (iser_tgt -P -D),
#     with read_verify on: the tuples of good blocks pass;
#   - the session stays up and logs out cleanly.
# With --type 2 the LUN has protection type 2 (iser_tgt -T 2), which LIO
# does not offer: sd enables DIF type 2 and reads with READ(32) (SBC-3
# 5.15), a 32-byte CDB whose last 16 bytes our initiator sends in an
# extended CDB AHS (RFC 7143 11.2.1.2); the same checks hold, the block
# layer's profile is the one of types 1 and 2 (T10-DIF-TYPE1-CRC), and
# iser_tgt must have served READ(32)s (read32= on its line).

type=1
case $* in
'') ;;
'--type 2') type=2 ;;
*) vm_fail "ini-pi-wire.sh: bad arguments '$*' (none, or --type 2)" ;;
esac
tgt=$VM_REPO/build/vm/tools/iser_tgt
vm_rxe_up
vm_load_roles
vm_module_params ib_iser.pi_enable=1
img=$VM_SCEN_DIR/lun.img
"$tgt" -P -D >"$img" || vm_fail "iser_tgt -D failed"
out=$VM_SCEN_DIR/iser_tgt.out
vm_iser_tgt_start "$out" good -P -T "$type" -G 1000 -Q 1500 -w 120
vm_iscsid_start
dev=$(vm_iser_tgt_login) || exit 1
sd=${dev#/dev/}
fmt=$(cat "/sys/block/$sd/integrity/format" 2>/dev/null)
vm_log "$dev: integrity profile '${fmt:-?}'"
[ "$fmt" = T10-DIF-TYPE1-CRC ] || vm_fail "$dev has the integrity profile '${fmt:-?}', not T10-DIF-TYPE1-CRC"
dmesg | grep -q "\[$sd\] Enabling DIF Type $type protection" ||
	vm_fail "sd did not enable DIF type $type for $dev"
iv=/sys/block/$sd/integrity/read_verify

# block LBA: one block read directly; 0 when the read succeeded
block() {
	dd if="$dev" of="$VM_SCEN_DIR/block" bs=512 skip="$1" count=1 \
		iflag=direct status=none 2>/dev/null
}
# range FIRST COUNT: blocks read directly must equal the pattern's
range() {
	cmp <(dd if="$dev" bs=512 skip="$1" count="$2" iflag=direct status=none) \
		<(dd if="$img" bs=512 skip="$1" count="$2" status=none) ||
		vm_fail "blocks $1 to $(($1 + $2 - 1)) did not read back as the pattern"
}

echo 1 >"$iv"
block 1000 && vm_fail "block 1000, with a wrong guard, read without error (read_verify on)"
vm_wait 10 sh -c "dmesg | grep -q '$sd: guard tag error at sector 1000'" ||
	vm_fail "no guard tag error of the block layer for block 1000"
vm_log "block 1000: $(dmesg | grep -m1 "$sd: guard tag error at sector 1000" | sed 's/^\[[^]]*\] *//')"
block 1500 && vm_fail "block 1500, with a wrong reference tag, read without error (read_verify on)"
vm_wait 10 sh -c "dmesg | grep -q '$sd: ref tag error at location 1500'" ||
	vm_fail "no reference tag error of the block layer for block 1500"
vm_log "block 1500: $(dmesg | grep -m1 "$sd: ref tag error at location 1500" | sed 's/^\[[^]]*\] *//')"
range 0 1000
range 1001 499
range 1501 547

echo 0 >"$iv"
block 1500 && vm_fail "block 1500, with a wrong reference tag, read without error (read_verify off)"
vm_wait 10 sh -c "dmesg | grep -q 'READ at sector 1500: reference tag mismatch'" ||
	vm_fail "our initiator did not report the reference tag of block 1500"
vm_log "block 1500: $(dmesg | grep -m1 'READ at sector 1500: reference tag mismatch' | sed 's/^\[[^]]*\] *//')"
block 1000 || vm_fail "block 1000 failed with read_verify off (its data is right)"
cmp "$VM_SCEN_DIR/block" <(dd if="$img" bs=512 skip=1000 count=1 status=none) ||
	vm_fail "block 1000 read back wrong"
echo 1 >"$iv"

vm_iser_tgt_logout
if [ "$type" = 2 ]; then
	n=$(sed -n 's/.* read32=\([0-9]*\).*/\1/p' "$out" | sort -n | tail -n 1)
	[ "${n:-0}" -gt 0 ] || vm_fail "iser_tgt served no READ(32): $(cat "$out")"
	vm_log "iser_tgt served $n READ(32) commands, each with an extended CDB AHS"
fi
vm_log "ini-pi-wire: bad tuples from the wire refused, every good block read back"
