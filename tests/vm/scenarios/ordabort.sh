# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# ORDERED tasks and ABORT TASK on a slow LUN: LUN 1 is a block backstore
# on dm-delay (vm_slow_lun, every I/O 2 s late). iser_ffp (tests/vm/tools/ffp/)
# -m ordabort sends a SIMPLE READ, an ORDERED READ behind it (LIO holds it
# on the LUN's delayed list while the SIMPLE one runs), an ABORT TASK for
# the ORDERED one, then a second ORDERED READ. LIO's core runs the aborted
# ORDERED READ once the SIMPLE one is done and completes it without its
# task-attribute bookkeeping (target_abort_work()), which would leave the
# LUN's ordered flag set and every later command of the LUN waiting for
# ever; the target does that bookkeeping in its abort callback
# (Documentation/target.md). Every READ must end GOOD, the abort must be
# answered "function complete" (first=0x00 abort=0x00 second=0x00), a new
# login must work and no session be left. The target decides whether to
# do the bookkeeping by what the core did with the first aborted command,
# not by the kernel's version: on 6.1 and 6.12 it must have learned that
# the core skips it (debugfs lio_abort_task_attr 1, and its log line). Our target only: the in-tree
# one has the same limit and would hang the guest.
#   ordabort [--moddir DIR]   (DIR: our modules from another build)

while [ $# -gt 0 ]; do
	case $1 in
	--moddir) export VM_MODDIR=$2; shift ;;
	*) vm_fail "ordabort: bad argument $1" ;;
	esac
	shift
done
vm_rxe_up
vm_load_roles
[ "$VM_TARGET" = ours ] || vm_fail "ordabort.sh: our target only (the in-tree one hangs on this)"
vm_target_setup
vm_slow_lun 2000
trap vm_slow_lun_remove EXIT

ffp=$VM_REPO/build/vm/tools/iser_ffp
out=$("$ffp" -m ordabort -n "$VM_TARGET_IQN" -i "$VM_INITIATOR_IQN" \
	"$VM_TGT_IP" "$VM_ISER_PORT" 2>&1) || vm_fail "iser_ffp -m ordabort did not run: $out"
vm_log "iser_ffp -m ordabort: $out"
vm_scen_dmesg | grep -E 'ABORT_TASK|task order' | head -n 4
echo "$out" | grep -qE 'login=ok .* first=0x00 abort=0x00 second=0x00' ||
	vm_fail "expected first=0x00 abort=0x00 second=0x00 (each READ GOOD, the abort complete), got: $out"
# what the target learned of the running core from the aborted ORDERED
# READ (not from the kernel's version): 6.1's and 6.12's cores skip the
# bookkeeping of an aborted command, so ib_isert does it (1); a core that
# did it itself would show 2, and ib_isert would leave it alone
ta=$(cat /sys/kernel/debug/ib_isert/lio_abort_task_attr 2>/dev/null || echo absent)
vm_log "lio_abort_task_attr: $ta; $(vm_scen_dmesg | grep -F 'task-attribute bookkeeping of aborted commands' | head -n 1)"
[ "$ta" = 1 ] ||
	vm_fail "the target did not learn that this kernel's core skips the task-attribute bookkeeping of aborted commands (lio_abort_task_attr $ta, not 1)"

# the LUN serves again, on a new connection, and no session is left
out=$("$ffp" -m nop -n "$VM_TARGET_IQN" -i "$VM_INITIATOR_IQN" \
	"$VM_TGT_IP" "$VM_ISER_PORT" 2>&1) || vm_fail "iser_ffp -m nop did not run: $out"
echo "$out" | grep -q 'login=ok .*nop_in=yes' || vm_fail "no new session after ordabort: $out"
vm_wait 30 vm_acl_idle ||
	vm_fail "a session is left 30 s after the last connection: $(tr '\n' ' ' <"/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/acls/$VM_INITIATOR_IQN/info")"
vm_log "ordabort: every READ GOOD, the abort complete, a new login works, no session left"
