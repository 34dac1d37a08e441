# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Unsolicited NOP-In pings from the target. LIO does not start its NOP-In
# timer for iSER connections at login, but it does when an administrator
# changes the ACL's nopin_timeout from 0 to a value while the session is
# logged in. The pings are commands LIO allocates itself (not the
# transport); each must be sent, stay alive until the initiator's NOP-Out
# answers it (LIO then removes it) and be freed once.
#  1. nopin_timeout 0, then 3 s (nopin_response_timeout 5 s) on a
#     logged-in session, under light verified I/O;
#  2. after 20 s: answers to the pings arrived (LIO's dynamic debug line
#     "Got NOPOUT Ping Response", at least 2), LIO did not time a ping
#     out, the connection was not closed, and the fio job verified.  The
#     answers are only visible through dynamic debug: the scenario fails
#     when it cannot enable the line (no debugfs, no dynamic debug);
#  3. logout with the timer running; modules unload (teardown).

attr=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/acls/$VM_INITIATOR_IQN/attrib
vm_rxe_up
vm_load_roles
vm_target_setup
vm_iscsid_start
vm_node_new
dev=$(vm_login_disk) || exit 1
dyndbg=/sys/kernel/debug/dynamic_debug/control
[ -w "$dyndbg" ] ||
	vm_fail "dynamic debug unavailable ($dyndbg not writable): the answers to the pings cannot be seen"
# "Got NOPOUT Ping Response" is a pr_debug() of iscsit_setup_nop_out()
echo 'func iscsit_setup_nop_out +p' >"$dyndbg" ||
	vm_fail "cannot enable dynamic debug of iscsit_setup_nop_out"
# (its format is "Got NOPOUT Ping %s ITT: ...", %s being "Response")
grep -E 'iscsit_setup_nop_out .*=p' "$dyndbg" | grep -q '"Got NOPOUT Ping ' ||
	vm_fail "dynamic debug: the 'Got NOPOUT Ping' line of iscsit_setup_nop_out is not enabled: $(grep iscsit_setup_nop_out "$dyndbg" | head -n 3 | paste -sd ';' -)"
vm_must sh -c "echo 0 >$attr/nopin_timeout"
vm_must sh -c "echo 5 >$attr/nopin_response_timeout"
vm_must sh -c "echo 3 >$attr/nopin_timeout"
vm_log "nopin_timeout $(cat "$attr/nopin_timeout") s, nopin_response_timeout $(cat "$attr/nopin_response_timeout") s"

printf '%s\n' '[during-nopin]' 'rw=randwrite' 'bs=4k' 'iodepth=4' 'size=4M' \
	'rate_iops=60' | vm_fio "$dev" during-nopin || exit 1
sleep 6	# idle: pings without I/O too
answers=$(vm_scen_dmesg | grep -c 'Got NOPOUT Ping Response')
vm_log "NOP-Out answers to unsolicited NOP-Ins seen by LIO: $answers"
vm_scen_dmesg | grep -E 'Got NOPOUT Ping Response' | tail -n 2
# nopin_timeout 3 s over some 20 s: several pings; 2 leave room for a slow guest
[ "$answers" -ge 2 ] || vm_fail "too few answers to the target's NOP-In pings ($answers, expected 2 or more)"
vm_scen_dmesg | grep -q 'Did not receive response to NOPIN' &&
	vm_fail "LIO timed out a NOP-In ping: $(vm_scen_dmesg | grep -m1 'Did not receive response to NOPIN')"
vm_scen_dmesg | grep -qE 'ib_isert: connection from .*closing' &&
	vm_fail "the connection was closed: $(vm_scen_dmesg | grep -m1 -E 'ib_isert: connection from .*closing')"
[ "$(vm_session_count)" = 1 ] || vm_fail "session lost while the target pinged"
vm_logout_check "$dev"
