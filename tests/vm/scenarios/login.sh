# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Login over iSER after TCP discovery: an iSER session, a disk of the right
# size that answers INQUIRY and reads back what was written, logout (session
# and disk gone), and a second login/logout cycle.

vm_rxe_up
vm_load_roles
vm_target_setup
vm_iscsid_start
vm_discover >/dev/null 2>&1 || vm_fail "SendTargets discovery failed"
vm_node_new

for round in 1 2; do
	dev=$(vm_login_disk) || exit 1
	vm_log "round $round: logged in, disk $dev"
	vm_check_disk "$dev"
	# 4 MiB of random data written directly and read back
	head -c 4M /dev/urandom >/tmp/pattern
	vm_must dd if=/tmp/pattern of="$dev" bs=1M oflag=direct status=none
	cmp <(dd if="$dev" bs=1M count=4 iflag=direct status=none) /tmp/pattern ||
		vm_fail "round $round: data read back from $dev differs from what was written"
	vm_logout_check "$dev"
done
