# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# ib_iser unloads while an endpoint is still connected. An endpoint holds
# no reference on the module (scsi_transport_iscsi takes one only for the
# duration of a netlink request; a session takes one, an endpoint does
# not), so an endpoint iscsid connected and never disconnected (iscsid
# killed between ep_connect and the session, or a bare netlink client)
# lets rmmod through. tests/vm/tools/iscsi_ep connects one to our target
# as iscsid would (no iscsid runs), then:
#  - ib_iser's use count must be 0 and rmmod must succeed (the path is
#    reachable);
#  - after the unload, the endpoint must be gone from
#    /sys/class/iscsi_endpoint (the module's exit destroys what it
#    created; an endpoint left behind keeps a dd_data that points at the
#    freed connection);
#  - ib_iser loads again, and a poll and a disconnect of the old handle
#    are refused (no such endpoint) rather than reaching the new module
#    with the old connection;
#  - ib_iser then logs in, runs verified I/O and logs out normally.

ep=$VM_REPO/build/vm/tools/iscsi_ep
[ -x "$ep" ] || vm_fail "$ep is not built (make vm-tools)"
vm_rxe_up
vm_load_roles
vm_target_setup
h=$("$ep" iser connect "$VM_TGT_IP" "$VM_ISER_PORT") ||
	vm_fail "iscsi_ep connect failed: $h"
vm_log "endpoint $h connected"
[ -e "/sys/class/iscsi_endpoint/ep-$h" ] ||
	vm_fail "no /sys/class/iscsi_endpoint/ep-$h: $(ls /sys/class/iscsi_endpoint 2>&1)"
p=$("$ep" iser poll "$h")
[ "$p" = 1 ] || vm_fail "poll of endpoint $h answered '$p', not 1 (connected)"
refs=$(cat /sys/module/ib_iser/refcnt)
vm_log "ib_iser use count with the endpoint connected: $refs"
[ "$refs" = 0 ] || vm_fail "ib_iser use count is $refs with only an endpoint: the unload path is not reachable this way"
vm_must rmmod ib_iser
left=$(find /sys/class/iscsi_endpoint -mindepth 1 -maxdepth 1 -printf "%f " 2>/dev/null)
vm_log "after rmmod ib_iser: endpoints left: ${left:-none}"
vm_insmod_ours ib_iser
p=$("$ep" iser poll "$h")
vm_log "poll of the old handle after the reload: $p"
d=$("$ep" iser disconnect "$h")
vm_log "disconnect of the old handle after the reload: $d"
[ -z "$left" ] || vm_fail "endpoint(s) $left outlived ib_iser"
case $p in
"error "*) ;;
*) vm_fail "poll of the old handle reached the new module: '$p'" ;;
esac
case $d in
"error "*) ;;
*) vm_fail "disconnect of the old handle reached the new module: '$d'" ;;
esac

# and the module works after all that
vm_iscsid_start
vm_node_new
dev=$(vm_login_disk) || exit 1
vm_fio "$dev" after-reload <<-EOF
	[rand-4k-qd16]
	rw=randwrite
	bs=4k
	iodepth=16
	size=4M
EOF
vm_logout_check "$dev"
