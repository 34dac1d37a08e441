# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Login over iSER after TCP discovery: an iSER session, a disk of the right
# size that answers INQUIRY and reads back what was written, logout (session
# and disk gone), and a second login/logout cycle: a new session (another
# session id) on a new connection, which must first read back what the
# first session wrote (the data survives a new login), then write and read
# its own. In each round the rig's runtime-PM guard
# (vm_scsi_target_pm_guard in guest/lib/boot.sh) must have reached the
# session's SCSI target within 5 s of the login.

vm_setup_node

sid_of() { # the (only) session's id
	iscsiadm -m session 2>/dev/null | sed -n 's/^iser: \[\([0-9]*\)\].*/\1/p'
}
prev_sid=""
for round in 1 2; do
	dev=$(vm_login_disk) || exit 1
	sid=$(sid_of)
	vm_log "round $round: logged in, session $sid, disk $dev"
	[ -n "$sid" ] || vm_fail "round $round: no session id"
	[ "$sid" != "$prev_sid" ] || vm_fail "round $round: the session id $sid did not change"
	vm_check_disk "$dev"
	# the rig's runtime PM guard (vm_scsi_target_pm_guard) reached the
	# session's SCSI target
	vm_wait 5 vm_targets_pm_on ||
		vm_fail "round $round: runtime PM of the session's SCSI target is not forbidden (power/control: $(cat /sys/class/iscsi_session/session*/device/target*/power/control 2>&1 | paste -sd ' ' -))"
	if [ "$round" = 2 ]; then
		# the first session's data, read by the new session
		cmp <(dd if="$dev" bs=1M count=4 iflag=direct status=none) /tmp/pattern ||
			vm_fail "round 2: what round 1 wrote did not survive the new login"
		vm_log "round 2: the first session's 4 MiB read back"
	fi
	prev_sid=$sid
	# 4 MiB of random data written directly and read back
	head -c 4M /dev/urandom >/tmp/pattern
	vm_must dd if=/tmp/pattern of="$dev" bs=1M oflag=direct status=none
	cmp <(dd if="$dev" bs=1M count=4 iflag=direct status=none) /tmp/pattern ||
		vm_fail "round $round: data read back from $dev differs from what was written"
	vm_logout_check "$dev"
done
