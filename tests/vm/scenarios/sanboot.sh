# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Boot from SAN, the target guest's half (INITIATOR "ours@san", TARGET
# "X@peer" in scenarios.list; host.sh vm_san_boot boots the initiator
# guest, which runs no body of its own):
#   sanboot [--flap SECONDS] [--dracut] [--ibft] [--chap [--mutual]] [--bad CASE,...]
# Serves the root file system image the host put in the signal directory
# (root.img, from tests/vm/sanboot/mkroot.sh) as LUN 0 of a target with an
# iSER portal on the link, signals "ready", and waits until the host
# writes "done" (the initiator guest booted from it twice, or failed).
# Then, unless the boots already failed, judges its side:
#   - the target accepted a login for each boot of the initiator guest
#     (fabric_statistics/iscsi_login_stats/accepts), and with --flap one
#     between the outage and the end of the initiator's writes;
#   - its copy of the image holds the marker the initiator guest reported
#     writing in its first boot (debugfs reads the file system itself) and
#     e2fsck finds the file system clean.
# --flap SECONDS: when the initiator guest's booted root starts writing
# (the host relays its "WRITING" line as the signal "writing"), this
# guest drops every frame at its NIC for SECONDS (vm_link_cut: a drop
# filter out and in, on qdiscs put in place before the initiator boots),
# with the initiator's address pinned in its neighbour table, and checks
# that rxe0 received nothing meanwhile and that no frame was refused
# (send_err; a refused frame kills a 6.12 soft-RoCE QP).
# --chap: this guest requires CHAP (user iser-san, the secret below) and
# the initiator guest's root= carries the account (host.sh vm_san_boot):
# its logins, which the checks above count, are CHAP logins.
# --mutual (with --chap): the ACL also has the target's own account, the
# initiator guest's root= carries it too, and every login this guest
# accepted must have asked the target to authenticate itself: LIO's
# "[server] Sending CHAP_R" (pr_debug, turned on here) at least once per
# accepted login, both iscsistart's and the booted iscsid's.
# --bad CASE,...: the initiator guest boots once per CASE with a bad
# configuration (host.sh vm_san_bad_case) and must fail each time; this
# guest requires CHAP (user iser-san, the secret below), so that the
# "chap" and "nochap" cases are refused, and checks that it accepted no
# login and, with those cases, refused at least one login per such case.

flap=0
bad=""
chap=0
mutual=0
while [ $# -gt 0 ]; do
	case $1 in
	--flap) flap=${2:-}; shift ;;
	--bad) bad=${2:-}; shift ;;
	--dracut | --ibft) ;; # how the initiator guest boots: the host's business
	--chap) chap=1 ;;
	--mutual) mutual=1; chap=1 ;;
	*) vm_fail "sanboot.sh: bad argument $1" ;;
	esac
	shift
done
[ "${VM_PEER_ROLE:-}" = target ] ||
	vm_fail "sanboot.sh runs in the target guest of a boot-from-SAN row (INITIATOR X@san, TARGET X@peer)"
case $flap in
'' | *[!0-9]*) vm_fail "sanboot.sh: --flap needs a number of seconds, not '$flap'" ;;
esac

SAN_TARGET_IQN=iqn.2003-01.org.linux-iscsi.iser-vm:sanroot
SAN_INITIATOR_IQN=iqn.2004-10.org.debian:iser-san
SAN_CHAP_USER=iser-san
SAN_CHAP_SECRET=sanboot-secret-1
SAN_CHAP_IN_USER=iser-san-target
SAN_CHAP_IN_SECRET=sanboot-mutual-2
img=/tmp/sanroot.img
[ -s "$VM_PEER_SIG/root.img" ] || vm_fail "no root image from the host ($VM_PEER_SIG/root.img)"
vm_must cp "$VM_PEER_SIG/root.img" "$img"

vm_rxe_up
vm_load_roles
if [ "$flap" -gt 0 ]; then
	nic=$(vm_peer_nic)
	trap 'vm_link_cut_remove "$nic"' EXIT
	vm_link_cut_prepare "$nic"
fi
t=/iscsi/$SAN_TARGET_IQN/tpg1
vm_tcli "/backstores/fileio create name=sanroot file_or_dev=$img write_back=false" \
	"/iscsi create $SAN_TARGET_IQN" \
	"$t/luns create /backstores/fileio/sanroot" \
	"$t/portals create $VM_TGT_IP $VM_ISER_PORT" \
	"$t/portals/$VM_TGT_IP:$VM_ISER_PORT enable_iser true" \
	"$t/acls create $SAN_INITIATOR_IQN"
[ -n "$bad" ] && chap=1
if [ "$chap" = 1 ]; then
	auth="userid=$SAN_CHAP_USER password=$SAN_CHAP_SECRET"
	[ "$mutual" = 0 ] ||
		auth+=" mutual_userid=$SAN_CHAP_IN_USER mutual_password=$SAN_CHAP_IN_SECRET"
	vm_tcli "$t/acls/$SAN_INITIATOR_IQN set auth $auth" \
		"$t set attribute authentication=1"
else
	vm_tcli "$t set attribute authentication=0"
fi
tpg=/sys/kernel/config/target/iscsi/$SAN_TARGET_IQN/tpgt_1
[ "$(cat "$tpg/np/$VM_TGT_IP:$VM_ISER_PORT/iser" 2>/dev/null)" = 1 ] ||
	vm_fail "target: portal $VM_TGT_IP:$VM_ISER_PORT is not an iSER portal in configfs"
if [ "$chap" = 1 ]; then
	[ "$(cat "$tpg/attrib/authentication" 2>/dev/null)" = 1 ] ||
		vm_fail "target: authentication not required in configfs"
	[ "$(cat "$tpg/acls/$SAN_INITIATOR_IQN/auth/userid" 2>/dev/null)" = "$SAN_CHAP_USER" ] ||
		vm_fail "target: CHAP user not set in configfs"
fi
if [ "$mutual" = 1 ]; then
	[ "$(cat "$tpg/acls/$SAN_INITIATOR_IQN/auth/userid_mutual" 2>/dev/null)" = "$SAN_CHAP_IN_USER" ] ||
		vm_fail "target: mutual CHAP user not set in configfs"
	echo 'file iscsi_target_auth.c +p' >/sys/kernel/debug/dynamic_debug/control ||
		vm_fail "cannot turn on LIO's CHAP debug lines (dynamic debug)"
fi
stats=/sys/kernel/config/target/iscsi/$SAN_TARGET_IQN/fabric_statistics/iscsi_login_stats
vm_peer_signal ready

rx_cut="" rx_end="" se_cut="" se_end=""
if [ "$flap" -gt 0 ]; then
	# until the initiator guest's root writes, or the host says it is over
	if vm_peer_await writing; then
		sleep 3
		imac=$(ip neigh show "$VM_INI_IP" dev "$nic" | awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }')
		[ -n "$imac" ] || imac=$VM_INI_MAC
		ip neigh replace "$VM_INI_IP" lladdr "$imac" dev "$nic" nud permanent
		vm_log "$nic drops everything for $flap s (neighbour $VM_INI_IP pinned at $imac)"
		acc_cut=$(cat "$stats/accepts" 2>/dev/null)
		se_cut=$(vm_rxe_counter send_err)
		vm_link_cut "$nic" on || vm_fail "could not cut the link"
		sleep 2
		rx_cut=$(vm_rxe_counter rcvd_pkts)
		sleep $((flap - 2))
		rx_end=$(vm_rxe_counter rcvd_pkts)
		vm_link_cut "$nic" off
		se_end=$(vm_rxe_counter send_err)
		ip neigh replace "$VM_INI_IP" lladdr "$imac" dev "$nic" nud reachable
		vm_log "$nic passes frames again; rcvd_pkts $rx_cut, then $rx_end during the outage; send_err $se_cut, then $se_end"
		# the initiator's root reports "FLAP" once its writes are
		# done: the session must have logged in again by then
		vm_peer_await flapped
		acc_flap=$(cat "$stats/accepts" 2>/dev/null)
		vm_log "logins accepted: ${acc_cut:-?} when the link was cut, ${acc_flap:-?} after the writes"
	fi
fi

# the host writes "done" after the initiator guest's last boot
vm_peer_wait "done" 100000
result=$(cat "$VM_PEER_SIG/done" 2>/dev/null)
token=$(cat "$VM_PEER_SIG/token" 2>/dev/null)
boots=$(cat "$VM_PEER_SIG/boots" 2>/dev/null)
accepts=$(cat "$stats/accepts" 2>/dev/null)
vm_log "initiator guest: $result; boots $boots; marker '$token'; logins accepted ${accepts:-?}"
dmesg | grep -iE 'isert|iscsi|login|reinstat' | tail -n 20
if [ -n "$bad" ]; then
	refused=0
	for f in authenticate_fails authorize_fails negotiate_fails other_fails; do
		n=$(cat "$stats/$f" 2>/dev/null)
		vm_log "login stats: $f ${n:-?}"
		refused=$((refused + ${n:-0}))
	done
	[ "${accepts:-0}" = 0 ] ||
		vm_fail "the target accepted $accepts login(s) from boots with a bad configuration"
	want=0
	for c in ${bad//,/ }; do
		case $c in chap | nochap) want=$((want + 1)) ;; esac
	done
	[ "$refused" -ge "$want" ] ||
		vm_fail "the target refused $refused login(s), the initiator guest tried CHAP wrongly in $want boot(s)"
	e2fsck -fn "$img" >/dev/null 2>&1 || vm_fail "e2fsck -fn finds the root file system damaged"
	rm -f "$img"
	return 0
fi
[ -n "$token" ] || vm_fail "the initiator guest reported no marker (its boot failed; see its result)"
# (each boot logs in twice: iscsistart in the initramfs, then iscsid
# when it takes the session over in the booted root)
[ "${accepts:-0}" -ge "$boots" ] ||
	vm_fail "the target accepted ${accepts:-no} login(s) for $boots boot(s)"
if [ "$mutual" = 1 ]; then
	# one per login that asked the target for its CHAP response
	n=$(dmesg | grep -c '\[server\] Sending CHAP_R')
	vm_log "mutual CHAP: the target answered $n challenge(s) for ${accepts:-0} accepted login(s)"
	[ "$n" -ge "${accepts:-0}" ] ||
		vm_fail "only $n of ${accepts:-0} accepted login(s) were mutual CHAP logins"
fi
got=$(debugfs -R "cat /var/lib/iser-san/marker" "$img" 2>/dev/null)
vm_log "marker in the LUN's image: '$got'"
[ "$got" = "$token" ] ||
	vm_fail "the LUN's image holds marker '$got', the initiator guest wrote '$token'"
fsck=$(e2fsck -fn "$img" 2>&1) || vm_fail "e2fsck -fn finds the root file system damaged: $(echo "$fsck" | tail -n 3 | paste -sd ' ' -)"
vm_log "e2fsck: $(echo "$fsck" | tail -n 1)"
if [ "$flap" -gt 0 ]; then
	if [ -z "$rx_cut" ] || [ -z "$rx_end" ]; then
		vm_fail "the link was never cut: the initiator guest's root did not report writing"
	fi
	[ "$rx_cut" = "$rx_end" ] ||
		vm_fail "rxe0 received $((rx_end - rx_cut)) packets while the link was cut"
	if [ -z "$se_end" ] || [ "$se_cut" != "$se_end" ]; then
		vm_fail "rxe0's send_err went from '$se_cut' to '$se_end' over the outage: the kernel refused frames instead of losing them, which kills a 6.12 soft-RoCE QP (vm_link_cut in guest/lib/peer.sh)"
	fi
	if [ -z "${acc_flap:-}" ] || ! [ "$acc_flap" -gt "${acc_cut:-0}" ]; then
		vm_fail "the target accepted no login between the outage and the end of the writes (${acc_cut:-?}, then ${acc_flap:-?}): the connection was not replaced"
	fi
fi
rm -f "$img"
