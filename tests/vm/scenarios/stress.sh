# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The target's teardown paths under I/O:
#  1. a LUN reset (sg_reset -d, a task management request) under I/O;
#  2. the iSER portal disabled and re-enabled under verified writes: the
#     fio job with crc32c verification must still pass;
#  3. logout under I/O: logout completes within 60 s; the I/O on the
#     disk that went away must fail (fio exits with an error, naming it)
#     and end within 60 s of the logout, not hang or complete silently;
#     a new login works with verified data;
#  4. 20 login/logout cycles: unreclaimable slab grows by at
#     most 1 MiB; with our modules iser_dm's rx_ring_bytes (their
#     receive buffer pages) ends where it began; with our initiator
#     MemFree falls by at most 32 MiB.
# The kernel log must stay clean throughout (checked by the runner).

tpg=/iscsi/$VM_TARGET_IQN/tpg1
vm_setup_node
vm_node_set node.session.timeo.replacement_timeout 90
dev=$(vm_login_disk) || exit 1

bg_io() { # DEV SECONDS [OUT]: random I/O without verification, in the background
	fio --name=bg --filename="$1" --rw=randrw --bs=4k --iodepth=16 \
		--direct=1 --ioengine=libaio --time_based --runtime="$2" \
		--output="${3:-/tmp/bg.out}" >/dev/null 2>&1 &
}

# 1. LUN reset under I/O
bg_io "$dev" 15
pid=$!
sleep 4
vm_must sg_reset -d "$dev"
vm_log "LUN reset sent under I/O"
wait "$pid" || vm_fail "I/O failed across a LUN reset: $(tail -n 5 /tmp/bg.out)"

# 2. portal disabled and re-enabled under verified writes
(
	sleep 3
	vm_tcli "$tpg/portals/$VM_TGT_IP:$VM_ISER_PORT enable_iser false" >/dev/null
	sleep 4
	vm_tcli "$tpg/portals/$VM_TGT_IP:$VM_ISER_PORT enable_iser true" >/dev/null
) &
bounce=$!
printf '%s\n' '[verify-across-bounce]' 'rw=randwrite' 'bs=16k' 'iodepth=8' \
	'size=48M' 'rate_iops=300' | vm_fio "$dev" bounce
wait "$bounce" || vm_fail "portal disable/enable failed"
[ "$(cat "/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/np/$VM_TGT_IP:$VM_ISER_PORT/iser")" = 1 ] ||
	vm_fail "iSER portal not enabled again"
vm_log "portal bounced under I/O, data verified"

# 3. logout under I/O
bgout=$VM_SCEN_DIR/bg-logout.out
bg_io "$dev" 30 "$bgout"
pid=$!
sleep 4
start=$(date +%s)
vm_logout_check "$dev"
[ $(($(date +%s) - start)) -le 60 ] || vm_fail "logout under I/O took more than 60 s"
# the disk is gone: fio's I/O must fail and fio must end, not hang
vm_wait 60 sh -c "! kill -0 $pid" ||
	vm_fail "fio still running 60 s after the logout: I/O on the removed disk hangs"
if wait "$pid"; then
	vm_fail "fio saw no error across the logout: I/O to $dev succeeded after its session was gone"
fi
fio_err=$(grep -m1 -E 'err= *[1-9]|error=' "$bgout")
[ -n "$fio_err" ] ||
	vm_fail "fio failed across the logout without naming an I/O error: $(tail -n 3 "$bgout" | paste -sd ' ' -)"
vm_log "I/O failed across the logout as it must: $(echo "$fio_err" | tr -s ' \t' ' ')"
dev=$(vm_login_disk) || exit 1
printf '%s\n' '[after-logout]' 'rw=randwrite' 'bs=4k' 'iodepth=16' 'size=4M' |
	vm_fio "$dev" after-logout
vm_logout_check "$dev"

# 4. login/logout cycles: unreclaimable slab must not grow
for i in 1 2; do # warm-up: caches reach their steady size
	vm_login >/dev/null 2>&1 || vm_fail "warm-up login $i failed"
	vm_logout >/dev/null 2>&1 || vm_fail "warm-up logout $i failed"
done
# pages of receive buffers our modules hold (drivers/core, rx_ring_bytes):
# counted exactly by the core, so a connection leaking them shows at once
rxbytes() {
	cat /sys/kernel/debug/iser_dm/rx_ring_bytes 2>/dev/null
}
rx_before=$(rxbytes)
before=$(vm_meminfo SUnreclaim)
free_before=$(vm_meminfo MemFree)
# the session count is N (a function: vm_wait runs it again each time)
sessions_are() { [ "$(vm_session_count)" = "$1" ]; }
for i in $(seq 20); do
	vm_login >/dev/null 2>&1 || vm_fail "login $i of 20 failed"
	vm_wait 15 sessions_are 1 || vm_fail "no session after login $i"
	if [ "$i" = 1 ] && [ -n "$rx_before" ]; then
		rx_during=$(rxbytes)
		[ "${rx_during:-0}" -gt "$rx_before" ] ||
			vm_fail "rx_ring_bytes did not count the session's receive buffers ($rx_before before login, ${rx_during:-none} after)"
		vm_log "receive buffer pages with one session: $rx_during bytes"
	fi
	vm_logout >/dev/null 2>&1 || vm_fail "logout $i of 20 failed"
	vm_wait 15 sessions_are 0 || vm_fail "session left after logout $i"
done
sleep 2
if [ "$VM_INITIATOR" = ours ] || [ "$VM_TARGET" = ours ]; then
	rx_after=$(rxbytes)
	if [ -z "$rx_before" ] || [ -z "$rx_after" ]; then
		vm_fail "no /sys/kernel/debug/iser_dm/rx_ring_bytes with our modules loaded"
	fi
	vm_log "receive buffer pages of our modules: $rx_before bytes before 20 cycles, $rx_after after"
	[ "$rx_after" = "$rx_before" ] ||
		vm_fail "receive buffer pages grew from $rx_before to $rx_after bytes over 20 login/logout cycles"
fi
after=$(vm_meminfo SUnreclaim)
vm_log "SUnreclaim: $before kB before 20 cycles, $after kB after"
# one connection's buffers (about 1 MiB with 80 receive buffers) leaked per
# cycle would show as 20 MiB; allow 1 MiB of noise from unrelated caches
[ $((after - before)) -le 1024 ] ||
	vm_fail "unreclaimable slab grew by $((after - before)) kB over 20 login/logout cycles"
# our modules' receive buffers are pages, counted exactly above; the QP,
# CQ and MRs' page lists are pages too: 32 MiB of free memory allows for
# noise and catches a leak of those above 1.6 MiB per cycle
if [ "$VM_INITIATOR" = ours ]; then
	free_after=$(vm_meminfo MemFree)
	vm_log "MemFree: $free_before kB before 20 cycles, $free_after kB after"
	[ $((free_before - free_after)) -le 32768 ] ||
		vm_fail "free memory fell by $((free_before - free_after)) kB over 20 login/logout cycles"
fi
