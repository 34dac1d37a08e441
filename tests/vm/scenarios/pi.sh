# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# T10 protection information carried in software. The LUN is formatted
# with protection type TYPE (LIO's pi_prot_type, pi_prot_format) and the
# TPG has t10_pi set; our initiator has pi_enable=1.
#   --type N    protection type 1 or 3 (default 1)
#   --fileio    LIO's fileio backstore (default: the ramdisk); the checks
#               that change the backing files behind LIO's back need it
#   --fallback  a pairing with an in-tree module, which carries no PI on
#               soft-RoCE: the disk gets no integrity profile, verified
#               I/O works, and where our target offers PI to the in-tree
#               initiator, sd says that it disables it
# With PI:
#   - sd enables DIF type TYPE and the disk has the integrity profile
#     T10-DIF-TYPE<TYPE>-CRC;
#   - verified fio from 512 B to 1 MiB, QD1 and QD32, buffers aligned and
#     512 bytes into a page (every command bounced in the wire layout;
#     the mixed sizes are written in sequence, since random writes of
#     varying size overwrite each other and fio then verifies only part);
#   - with the block layer's write_generate off, sd sends WRITE_INSERT and
#     the initiator makes the tuples; read back, the block layer checks
#     them;
#   - with --fileio: a byte of a block's data changed in the backing file
#     makes the read of that block fail, checked by LIO (the backstore's
#     pi_prot_verify) and by the block layer (read_verify on: READ_PASS);
#     for type 1, a block's data and tuple copied to another LBA fails the
#     initiator's own check on its reference tag (read_verify off:
#     READ_STRIP, where sd asks the host for the reference tag check and
#     leaves the guard to the target). No read returns the changed data. Past the block layer (sg_raw): a WRITE with a bad guard fails
#     on LIO's check; one without its tuple (a length that does not match
#     the tuple count) is refused by our target with INVALID FIELD IN CDB
#     and its log line, before any data moves.

type=1
bs=()
fallback=0
while [ $# -gt 0 ]; do
	case $1 in
	--type) type=$2; shift ;;
	--fileio) bs=(--fileio) ;;
	--fallback) fallback=1 ;;
	*) vm_fail "pi.sh: bad argument $1" ;;
	esac
	shift
done
case $type in 1 | 3) ;; *) vm_fail "pi.sh: protection type $type (1 or 3)" ;; esac

vm_rxe_up
vm_load_roles
[ "$VM_INITIATOR" = ours ] && vm_module_params ib_iser.pi_enable=1
vm_target_setup "${bs[@]}" --pi "$type"
vm_iscsid_start
vm_node_new
dev=$(vm_login_disk) || exit 1
sd=${dev#/dev/}
fmt=$(cat "/sys/block/$sd/integrity/format" 2>/dev/null)
vm_log "$dev: integrity profile '${fmt:-?}'"

if [ $fallback = 1 ]; then
	[ "$fmt" = none ] || vm_fail "$dev has the integrity profile '$fmt' against an in-tree module"
	if [ "$VM_TARGET" = ours ]; then
		dmesg | grep -q "\[$sd\] Disabling DIF Type $type protection" ||
			vm_fail "sd did not say that it disables DIF type $type for $dev"
		vm_log "sd: $(dmesg | grep -m1 "\[$sd\] Disabling DIF" | sed 's/^\[[^]]*\] *//')"
	fi
	vm_fio "$dev" fallback <<-EOF
		[rand-4k-qd32]
		rw=randwrite
		bs=4k
		iodepth=32
		size=8M
		[seq-1m-qd4]
		rw=write
		bs=1M
		iodepth=4
		size=16M
		offset=16M
	EOF
	vm_logout_check "$dev"
	exit 0
fi

[ "$fmt" = "T10-DIF-TYPE$type-CRC" ] ||
	vm_fail "$dev has the integrity profile '$fmt', not T10-DIF-TYPE$type-CRC"
dmesg | grep -q "\[$sd\] Enabling DIF Type $type protection" ||
	vm_fail "sd did not enable DIF type $type for $dev"

vm_fio "$dev" pi <<-EOF
	[seq-512-qd1]
	rw=write
	bs=512
	iodepth=1
	size=256k
	[rand-4k-qd32]
	rw=randwrite
	bs=4k
	iodepth=32
	size=8M
	offset=1M
	[seq-512-64k-qd32-unaligned]
	rw=write
	bsrange=512-64k
	mem_align=512
	iodepth=32
	size=8M
	offset=9M
	[seq-256k-qd1-unaligned]
	rw=write
	bs=256k
	mem_align=512
	iodepth=1
	size=8M
	offset=17M
	[seq-1m-qd32]
	rw=write
	bs=1M
	iodepth=32
	size=24M
	offset=25M
EOF

# WRITE_INSERT: the tuples made by the initiator, checked on the way back
echo 0 >"/sys/block/$sd/integrity/write_generate" ||
	vm_fail "cannot turn write_generate off"
vm_fio "$dev" insert <<-EOF
	[insert-64k-qd8]
	rw=randwrite
	bs=64k
	iodepth=8
	size=8M
	offset=49M
EOF
echo 1 >"/sys/block/$sd/integrity/write_generate"

# read_lba LBA: read one 512-byte block with direct I/O, to stdout
read_lba() {
	dd if="$dev" bs=512 skip="$1" count=1 iflag=direct status=none
}

if [ ${#bs[@]} = 1 ]; then
	img=/tmp/lun0.img
	prot=$img.protection
	[ -f "$prot" ] || vm_fail "no protection file $prot"
	lba=60000
	head -c 512 /dev/urandom >"$VM_SCEN_DIR/block"
	vm_must dd if="$VM_SCEN_DIR/block" of="$dev" bs=512 seek=$lba count=1 oflag=direct status=none
	cmp -s "$VM_SCEN_DIR/block" <(read_lba $lba) || vm_fail "LBA $lba does not read back"
	# one byte of the data changed behind LIO's back
	byte=$(dd if="$img" bs=1 skip=$((lba * 512 + 100)) count=1 status=none | od -An -tu1)
	# shellcheck disable=SC2059
	printf "\\x$(printf %02x $(((byte + 1) % 256)))" |
		dd of="$img" bs=1 seek=$((lba * 512 + 100)) conv=notrunc status=none ||
		vm_fail "cannot change $img"
	cmp -s "$VM_SCEN_DIR/block" <(dd if="$img" bs=512 skip=$lba count=1 status=none) &&
		vm_fail "the change did not reach $img"
	verify=$(ls -d /sys/kernel/config/target/core/fileio_*/lun0/attrib | head -n 1)/pi_prot_verify
	# LIO's check (pi_prot_verify) and the block layer's (read_verify,
	# READ_PASS) must each fail the read
	for who in lio block; do
		case $who in
		lio) pv=1 ;;
		block) pv=0 ;;
		esac
		echo $pv >"$verify" || vm_fail "cannot set $verify to $pv"
		if read_lba $lba >"$VM_SCEN_DIR/got"; then
			vm_fail "the read of the changed LBA $lba succeeded ($who's check)"
		fi
		vm_log "changed LBA $lba: the read fails ($who's check: pi_prot_verify=$pv read_verify=1)"
	done
	dmesg | grep -q "sd[a-z]*: guard tag error at sector $lba" ||
		vm_fail "the block layer did not report the guard error at sector $lba"
	if [ "$type" = 1 ]; then
		# the initiator's own check (READ_STRIP: read_verify off): sd
		# asks it for the reference tag only (the guard is the target's
		# to check then). Block 61000's data and tuple copied to 61001:
		# the guard holds, the reference tag is 61000's.
		vm_must dd if="$VM_SCEN_DIR/block" of="$dev" bs=512 seek=61000 count=1 oflag=direct status=none
		vm_must dd if="$img" of="$img" bs=512 skip=61000 seek=61001 count=1 conv=notrunc status=none
		vm_must dd if="$prot" of="$prot" bs=8 skip=61000 seek=61001 count=1 conv=notrunc status=none
		cmp -s "$VM_SCEN_DIR/block" <(read_lba 61000) || vm_fail "LBA 61000 does not read back"
		echo 0 >"/sys/block/$sd/integrity/read_verify"
		if read_lba 61001 >/dev/null; then
			vm_fail "the read of LBA 61001, which has LBA 61000's tuple, succeeded"
		fi
		dmesg | grep -q "ib_iser: .*READ at sector 61001: reference tag mismatch" ||
			vm_fail "the initiator did not log the reference tag mismatch at sector 61001"
		vm_log "LBA 61000's block at LBA 61001, read_verify off: $(dmesg | grep -m1 "READ at sector 61001" | sed 's/^\[[^]]*\] *//')"
	fi
	echo 1 >"$verify"
	echo 1 >"/sys/block/$sd/integrity/read_verify"

	# the target's side, through SG_IO, past the block layer: a WRITE(10)
	# with WRPROTECT=1 of one block of zeros and a tuple whose guard is
	# 0x1234 must end in LIO's guard check (CHECK CONDITION, 10h/01h)
	head -c 512 /dev/zero >"$VM_SCEN_DIR/badguard"
	printf '\x12\x34\x00\x00\x00\x00\xf2\x30' >>"$VM_SCEN_DIR/badguard"
	out=$(sg_raw -s 520 -i "$VM_SCEN_DIR/badguard" "$dev" 2a 20 00 00 f2 30 00 00 01 00 2>&1) &&
		vm_fail "a WRITE of a block with a bad guard succeeded: $out"
	echo "$out" | grep -qi 'guard check failed' ||
		vm_fail "a WRITE of a block with a bad guard did not fail on the guard: $out"
	vm_log "WRITE with a bad guard: $(echo "$out" | grep -i -m1 'guard check failed')"
	# one block with WRPROTECT=1 but no tuple: a length that does not
	# match the tuple count is refused before any data moves
	out=$(sg_raw -s 512 -i /dev/zero "$dev" 2a 20 00 00 f2 30 00 00 01 00 2>&1) &&
		vm_fail "a protected WRITE without its tuple succeeded: $out"
	echo "$out" | grep -qi 'invalid field in cdb' ||
		vm_fail "a protected WRITE without its tuple was not refused as an invalid CDB: $out"
	dmesg | grep -q "ib_isert: connection from .*: protected SCSI command ITT 0x[0-9a-f]*: EDTL 512 is not 512 bytes of data with a tuple per 512-byte block (520 bytes); refused" ||
		vm_fail "the target did not log the protected WRITE without its tuple"
	vm_log "$(dmesg | grep -m1 'EDTL 512 is not' | sed 's/^\[[^]]*\] *//')"
	head -c 512 /dev/urandom >"$VM_SCEN_DIR/block2"
	vm_must dd if="$VM_SCEN_DIR/block2" of="$dev" bs=512 seek=62000 count=1 oflag=direct status=none
	cmp -s "$VM_SCEN_DIR/block2" <(read_lba 62000) ||
		vm_fail "LBA 62000 does not read back after the refused WRITE"
	vm_log "LBA 62000 written and read back after the refused WRITE"
fi
vm_logout_check "$dev"
