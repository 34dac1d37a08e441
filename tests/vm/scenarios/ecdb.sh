# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# A 32-byte CDB from the initiator: WRITE SAME (32) (SBC-3 5.44), the one
# 32-byte command LIO executes, sent with sg_raw to LIO's fileio LUN (the
# ramdisk has no WRITE SAME). The CDB's bytes past the 16th travel in an
# extended CDB AHS behind the BHS (RFC 7143 11.2.1.2); our initiator then
# sends no immediate data, so the target fetches the one block of data by
# RDMA Read. The session has ImmediateData=Yes (the default), so a
# command that still carried immediate data behind its AHS would show.
#   - WRITE SAME (32) of a random block to 64 blocks from LBA 4096
#     completes GOOD, and each of the 64 blocks reads back as that block
#     while the blocks around them keep what was written before;
#   - WRITE SAME (16) with another block over LBA 8192 the same way, as
#     the reference of a 16-byte CDB;
#   - verified fio afterwards, and a clean logout.
# Our initiator, against either target (rows ours-pair-ecdb,
# ours-initiator-ecdb).

[ $# -eq 0 ] || vm_fail "ecdb.sh: no arguments"
vm_rxe_up
vm_load_roles
vm_target_setup --fileio
vm_iscsid_start
vm_node_new
dev=$(vm_login_disk) || exit 1
vm_log "ImmediateData: $(iscsiadm -m session -P 3 | sed -n 's/^[[:space:]]*ImmediateData: //p')"

# be LBA BYTES: LBA as BYTES big-endian bytes, as sg_raw arguments
be() {
	local i out=""
	for ((i = $2 - 1; i >= 0; i--)); do
		out+=" $(printf %02x $((($1 >> (8 * i)) & 0xff)))"
	done
	echo "$out"
}
# same LABEL LBA CDB...: write the block $VM_SCEN_DIR/LABEL to 64 blocks
# from LBA with the CDB, then check those and the two blocks around them
same() {
	local label=$1 lba=$2 out i b
	shift 2
	head -c 512 /dev/urandom >"$VM_SCEN_DIR/$label"
	vm_must dd if=/dev/zero of="$dev" bs=512 seek=$((lba - 1)) count=66 oflag=direct status=none
	# shellcheck disable=SC2068
	out=$(sg_raw -s 512 -i "$VM_SCEN_DIR/$label" "$dev" $@ 2>&1) ||
		vm_fail "$label failed: $out"
	echo "$out" | grep -q "SCSI Status: Good" ||
		vm_fail "$label did not complete GOOD: $out"
	for ((i = 0; i < 64; i++)); do
		cmp -s "$VM_SCEN_DIR/$label" \
			<(dd if="$dev" bs=512 skip=$((lba + i)) count=1 iflag=direct status=none) ||
			vm_fail "$label: block $((lba + i)) does not read back as the block written"
	done
	for b in $((lba - 1)) $((lba + 64)); do
		cmp -s <(head -c 512 /dev/zero) \
			<(dd if="$dev" bs=512 skip="$b" count=1 iflag=direct status=none) ||
			vm_fail "$label: block $b, outside the range, changed"
	done
	vm_log "$label: 64 blocks from LBA $lba written and read back"
}
# WRITE SAME (32): VARIABLE LENGTH 7Fh, additional length 18h, service
# action 000Dh, LBA at bytes 12-19, number of blocks at 28-31
# shellcheck disable=SC2046
same write-same-32 4096 7f 00 00 00 00 00 00 18 00 0d 00 00 $(be 4096 8) \
	00 00 00 00 00 00 00 00 $(be 64 4)
# WRITE SAME (16): 93h, LBA at bytes 2-9, number of blocks at 10-13
# shellcheck disable=SC2046
same write-same-16 8192 93 00 $(be 8192 8) $(be 64 4) 00 00

vm_fio "$dev" after-ecdb <<-EOF
	[rand-4k-qd16]
	rw=randwrite
	bs=4k
	iodepth=16
	size=8M
	offset=16M
EOF
vm_logout_check "$dev"
