# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Device removal must finish on its own, with every resource released,
# even when iscsid does not act: our initiator frees its RDMA resources
# (QP, CQ, MRs, receive buffers, cm_id, its hold on the device's PD) when
# the device goes, keeping only the endpoint iscsid still holds, and the
# datamover core waits (without a time limit) until nothing holds the
# device any more.
#  1. login (our pair, one guest: rxe0 carries both ends), 4 MiB of
#     random data written;
#  2. iscsid stopped (SIGSTOP), then "rdma link delete rxe0": it must
#     return within 20 s, with the core's "iser_dm: rxe0 removed:
#     released" line and without "still hold(s)" or "while still
#     referenced" lines;
#  3. rxe0 added back, iscsid continued: the session recovers (our target
#     listens again by itself), the data reads back, a verified fio job
#     passes, logout, and every module unloads (teardown).

vm_setup_node
vm_node_set node.session.timeo.replacement_timeout 300
dev=$(vm_login_disk) || exit 1
pat=$VM_SCEN_DIR/pattern
head -c 4M /dev/urandom >"$pat"
vm_must dd if="$pat" of="$dev" bs=64k oflag=direct status=none

pid=$(cat /run/iscsid.pid)
kill -STOP "$pid" || vm_fail "cannot stop iscsid"
t0=$(date +%s)
vm_run timeout 150 rdma link delete rxe0
rc=$?
t1=$(date +%s)
kill -CONT "$pid"
vm_log "rdma link delete rxe0 with iscsid stopped: status $rc, $((t1 - t0)) s"
[ $rc = 0 ] || vm_fail "rdma link delete rxe0 failed or hung (status $rc)"
[ $((t1 - t0)) -le 20 ] ||
	vm_fail "the device removal took $((t1 - t0)) s with iscsid stopped (at most 20 s)"
if vm_scen_dmesg | grep -E 'still hold|while still referenced'; then
	vm_fail "the device went away while a module still held it"
fi
vm_scen_dmesg | grep -q 'iser_dm: rxe0 removed: released' ||
	vm_fail "no 'iser_dm: rxe0 removed: released' line: the core did not finish the removal"

vm_must rdma link add rxe0 type rxe netdev veth0
vm_wait 10 vm_rxe_active || vm_fail "rxe0 not ACTIVE after it was added again"
vm_wait 90 vm_logged_in ||
	vm_fail "session not logged in again: $(iscsiadm -m session -P 1 2>&1 | grep -E 'State' | paste -sd ' ' -)"
cmp "$pat" <(dd if="$dev" bs=64k count=64 iflag=direct status=none) ||
	vm_fail "the 4 MiB written before the removal did not read back"
printf '%s\n' '[after-removal]' 'rw=randwrite' 'bsrange=4k-128k' 'blockalign=4k' \
	'iodepth=16' 'size=8M' 'offset=8M' | vm_fio "$dev" after-removal || exit 1
vm_logout_check "$dev"
