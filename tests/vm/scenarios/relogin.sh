# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Data survives a new login:
#  1. login; fio writes a crc32c-verified pattern: 64 KiB blocks, one at
#     the start of every MiB of the 64 MiB LUN (4 MiB of data spread over
#     the whole LUN; each block carries fio's verify header: offset, length,
#     seed, crc32c of the block), without reading it back;
#  2. logout: the session, the disk and LIO's session are gone;
#  3. with --reload: the iSER portal is disabled (it holds a reference on
#     the target transport module), the initiator and target modules of
#     the row are unloaded (ours: ib_iser, ib_isert, iser_dm) and loaded
#     again (vm_load_roles), and the portal is enabled again.  The rest of
#     the LIO configuration (ramdisk backstore, target, LUN, ACL) is kept:
#     it belongs to target_core_mod and iscsi_target_mod, which stay
#     loaded, and the ramdisk's contents live in its backstore, so the
#     pattern must survive the transport modules' reload as it survives a
#     logout;
#  4. login again: a new session (another iSCSI session in sysfs on the
#     initiator, another LIO session ID and TSIH on the target) and a new
#     disk; fio re-runs the same job with verify_only=1: it reads every
#     block the first job wrote and checks header and crc32c, so data lost,
#     misplaced or stale after the new login fails the scenario;
#  5. logout; modules unload in teardown.
#   --reload   step 3

reload=0
for a in "$@"; do
	case $a in
	--reload) reload=1 ;;
	*) vm_fail "relogin.sh: bad argument $a" ;;
	esac
done

tpgdir=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1
np=$VM_TGT_IP:$VM_ISER_PORT

# the iSCSI session of the (only) session in sysfs, e.g. session3
ini_session() {
	local s
	for s in /sys/class/iscsi_session/session*; do
		[ -e "$s" ] && basename "$s" && return 0
	done
	return 1
}

# LIO's "LIO Session ID: N ... TSIH: N" of our initiator's session (ACL info)
lio_session() {
	sed -n 's/.*LIO Session ID: \([0-9]*\) .*TSIH: \([0-9]*\).*/sid \1 tsih \2/p' \
		"$tpgdir/acls/$VM_INITIATOR_IQN/info" 2>/dev/null
}

lio_no_session() {
	grep -q 'No active iSCSI Session' "$tpgdir/acls/$VM_INITIATOR_IQN/info"
}

# relogin_fio DEV write|verify: the pattern job; "write" writes it (no
# read-back), "verify" runs the same job with verify_only=1, which reads
# what the first run wrote and checks it.  Fails the scenario unless fio
# wrote (write) or read and verified (verify) all 4 MiB without an error.
relogin_fio() {
	local dev=$1 phase=$2 jobf json rc what
	jobf=$VM_SCEN_DIR/fio-$phase.fio
	json=$VM_SCEN_DIR/fio-$phase.json
	if [ "$phase" = write ]; then
		what=do_verify=0
	else
		what=verify_only=1
	fi
	# 64 KiB at the start of each 1 MiB zone (zonesize + zoneskip) of the
	# 64 MiB LUN: io_size = 64 zones * 64 KiB = 4 MiB, each block once
	cat >"$jobf" <<-EOF
		[global]
		filename=$dev
		ioengine=libaio
		direct=1
		verify=crc32c
		verify_fatal=1
		verify_state_save=0
		[pattern]
		rw=write
		bs=64k
		iodepth=8
		size=$VM_LUN_SIZE
		zonemode=strided
		zonesize=64k
		zoneskip=960k
		io_size=4M
		$what
	EOF
	vm_log "fio $phase on $dev"
	fio --output-format=json --output="$json" "$jobf"
	rc=$?
	/usr/bin/python3 - "$json" "$rc" "$phase" <<-'EOF' ||
		import json, sys
		path, rc, phase = sys.argv[1], int(sys.argv[2]), sys.argv[3]
		want = 4 << 20
		err = open(path[:-5] + ".err", "w")
		try:
		    text = open(path).read()
		    data = json.loads(text[text.index("{"):])
		except Exception as e:
		    err.write("fio exit %d, no JSON output (%s)" % (rc, e)); sys.exit(1)
		j = data["jobs"][0]
		w, r = j["write"]["io_bytes"], j["read"]["io_bytes"]
		print("%s: err=%d write=%dKiB read=%dKiB" % (phase, j["error"], w // 1024, r // 1024))
		if j["error"]:
		    # fio's own message (bad magic, crc32c mismatch) is in its output
		    bad = "error %d" % j["error"]
		elif phase == "write" and w != want:
		    bad = "wrote %d bytes, expected %d" % (w, want)
		elif phase == "verify" and r != want:
		    bad = "read back and verified %d bytes, expected %d" % (r, want)
		elif rc != 0:
		    bad = "fio exit status %d" % rc
		else:
		    sys.exit(0)
		err.write(bad)
		sys.exit(1)
	EOF
		vm_fail "fio $phase of the pattern on $dev: $(cat "$VM_SCEN_DIR/fio-$phase.err" 2>/dev/null)$(grep -am1 -E 'verify failed|bad magic|verify: ' "$json" | sed 's/^/: /')"
}

vm_rxe_up
vm_load_roles
vm_target_setup
vm_iscsid_start
vm_node_new

# 1. first session: write the pattern
dev=$(vm_login_disk) || exit 1
vm_check_disk "$dev"
s1=$(ini_session) || vm_fail "no iSCSI session in sysfs after login"
l1=$(lio_session)
[ -n "$l1" ] || vm_fail "LIO shows no session of $VM_INITIATOR_IQN: $(cat "$tpgdir/acls/$VM_INITIATOR_IQN/info")"
vm_log "first session: initiator $s1, LIO $l1"
relogin_fio "$dev" write

# 2. logout: nothing of the session is left on either side
vm_logout_check "$dev"
vm_wait 15 lio_no_session ||
	vm_fail "LIO still has a session after logout: $(lio_session)"

# 3. reload the iSER modules with the LIO configuration kept
if [ "$reload" = 1 ]; then
	vm_tcli "/iscsi/$VM_TARGET_IQN/tpg1/portals/$np enable_iser false"
	[ "$(cat "$tpgdir/np/$np/iser" 2>/dev/null)" = 1 ] &&
		vm_fail "the iSER portal $np is still enabled in configfs"
	for m in ib_iser ib_isert iser_dm; do
		vm_loaded "$m" || continue
		vm_must rmmod "$m"
		! vm_loaded "$m" || vm_fail "$m still loaded after rmmod"
	done
	vm_loaded target_core_mod || vm_fail "target_core_mod went away with the iSER modules"
	vm_loaded iscsi_target_mod || vm_fail "iscsi_target_mod went away with the iSER modules"
	[ -d "$tpgdir/lun/lun_0" ] || vm_fail "LUN 0 missing in configfs after the unload"
	vm_log "iSER modules unloaded; kept: $(lsmod | awk 'NR > 1 && $1 ~ /^(target_core|iscsi_target)/ {print $1}' | tr '\n' ' ')"
	vm_load_roles
	vm_tcli "/iscsi/$VM_TARGET_IQN/tpg1/portals/$np enable_iser true"
	[ "$(cat "$tpgdir/np/$np/iser" 2>/dev/null)" = 1 ] ||
		vm_fail "the iSER portal $np is not enabled again in configfs"
	vm_log "iSER modules reloaded, portal $np enabled again"
fi

# 4. a new session reads the pattern back
dev=$(vm_login_disk) || exit 1
vm_check_disk "$dev"
s2=$(ini_session) || vm_fail "no iSCSI session in sysfs after the second login"
l2=$(lio_session)
[ -n "$l2" ] || vm_fail "LIO shows no session of $VM_INITIATOR_IQN after the second login"
vm_log "second session: initiator $s2, LIO $l2"
[ "$s2" != "$s1" ] || vm_fail "the second login reused the initiator's $s1: not a new session"
[ "$l2" != "$l1" ] || vm_fail "LIO reports the same session after the second login ($l2): not a new session"
relogin_fio "$dev" verify
vm_log "the pattern written in $s1 read back and verified in $s2"
vm_logout_check "$dev"
