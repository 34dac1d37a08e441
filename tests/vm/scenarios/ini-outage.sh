# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Initiator behaviour when the target goes away under I/O.
#   --portal SECONDS  the target's TPG is disabled for SECONDS, longer than
#                     the replacement timeout (10 s): I/O fails with errors
#                     within the timeout plus slack instead of hanging;
#                     after the TPG is enabled again the session comes
#                     back on a new connection, and a new login moves
#                     verified data
# It needs our initiator (its debugfs counts the connections).  Link loss
# is linkflap.sh's, in the two-guest mode.

mode=${1:-}
secs=${2:-}
case $mode in
--portal) [ -n "$secs" ] || vm_fail "ini-outage.sh: $mode needs SECONDS" ;;
*) vm_fail "ini-outage.sh: --portal SECONDS" ;;
esac
tpg=/iscsi/$VM_TARGET_IQN/tpg1
vm_rxe_up
vm_load_roles
vm_target_setup
vm_iscsid_start
vm_node_new
vm_node_set node.conn[0].timeo.noop_out_interval 5
vm_node_set node.conn[0].timeo.noop_out_timeout 5

# --portal: outage longer than the replacement timeout
vm_node_set node.session.timeo.replacement_timeout 10
dev=$(vm_login_disk) || exit 1
head -c 1M /dev/urandom >/tmp/pattern
vm_must dd if=/tmp/pattern of="$dev" bs=1M oflag=direct status=none
vm_tcli "$tpg disable"
down=$(date +%s)
vm_log "TPG disabled for $secs s"
# I/O during the outage must fail, not hang: the replacement timeout (10 s)
# fails the queued commands once the connection is found dead
start=$(date +%s)
if timeout 90 dd if=/tmp/pattern of="$dev" bs=1M oflag=direct status=none; then
	vm_fail "a write during the outage succeeded"
fi
took=$(($(date +%s) - start))
vm_log "write during the outage failed after $took s"
[ "$took" -lt 80 ] || vm_fail "a write during the outage took $took s to fail (hang?)"
if timeout 60 dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct status=none; then
	vm_fail "a read during the outage succeeded"
fi
[ "$(vm_session_count)" = 1 ] || vm_fail "session vanished during the outage"
left=$((secs - ($(date +%s) - down)))
[ "$left" -le 0 ] || sleep "$left"
vm_tcli "$tpg enable"
vm_log "TPG enabled again"
# iscsid keeps reconnecting a session past its replacement timeout
vm_wait 90 vm_logged_in || vm_fail "session did not come back after the outage"
started=$(vm_conns_started)
vm_log "connections started on the session: $started"
[ "${started:-0}" -ge 2 ] ||
	vm_fail "the session came back without a new connection (connections_started ${started:-?})"
vm_logout_check ""
dev=$(vm_login_disk) || exit 1
printf '%s\n' '[after-outage]' 'rw=randwrite' 'bs=64k' 'iodepth=8' 'size=8M' |
	vm_fio "$dev" after-outage
vm_logout_check "$dev"
