# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# dm-multipath over two iSER paths to one LUN, one path cut under verified
# I/O, then given back. The target (LIO's block backstore on brd) has an
# iSER portal on each of two links: $VM_TGT_IP and $VM_TGT_IP2. open-iscsi
# logs in through each, with a replacement_timeout of 5 s and a NOP-Out
# after 1 s without traffic, answered within 2 s; udev and multipathd, run as on an
# installed system with the admin guide's settings, join the two disks in
# one map. How a path is cut:
#   - one guest (TARGET ours or intree): rdma_cm loops a connection inside
#     the RDMA device that owns the portal's address, so rxe2 carries both
#     ends of the second path and `rdma link delete rxe2` cuts it;
#   - two guests (TARGET X@peer): the guests are joined by two qemu links
#     (lib/pair.sh vm_pair_nlinks), a portal on each, and the initiator's
#     NIC of the path drops every frame it sends or receives
#     (vm_link_cut), its RDMA device in place, as when a cable or switch
#     fails. The target guest sets up and waits; the initiator guest does
#     the rest.
#
# fio writes 16 KiB blocks at random through the map and reads each back
# with its crc32c as it goes (verify_backlog). 10 s in, the path
# is cut for 30 s, then restored (fio runs 85 s). Fails on:
#   - an I/O error or a verify error, or no read-back at all;
#   - an I/O that took longer than replacement_timeout + 5 s (the longest
#     is logged);
#   - multipathd not failing the cut path within 20 s;
#   - iscsid not logging that session in again on its own, or multipathd
#     not using the path again, within 30 s of the path's return;
#   - afterwards, the disk of either path not completing I/O within 5 s
#     (its /sys/block counters).
#
# Options:
#   --alua  the second portal in a TPG of its own whose LUN is in an ALUA
#           target port group that is active/non-optimized: multipathd
#           makes two path groups. The optimized path (the first link) is
#           the one cut, and the I/O must go to it alone before the cut, to
#           the other during it and to it alone again after its return.
#   --pr    before the I/O, SCSI persistent reservations across the two
#           sessions (sg_persist): a key registered and a reservation
#           (Write Exclusive, Registrants Only) taken through path 1 are
#           seen through path 2, which registers its own key and preempts
#           path 1's; path 1 gets the unit attention for that, its key is
#           gone and a write through it gets a reservation conflict; the
#           reservation is cleared.
#   --flap  (two guests) instead of one 30 s cut, the path flaps for 60 s:
#           cut for 2 s, back for 2 s, over and over, under the same I/O
#           (fio runs 115 s), each change due 2 s after the one before
#           by the clock (none may come more than 1 s late); the same
#           checks after its last return, but an I/O may take twice as
#           long (an I/O requeued on a connection that came back may meet
#           the next cut); the number of connections the flapping path's
#           session lost is logged.

cut_after=10
cut_for=30
limit_ms=$(((VM_MPATH_REPLACEMENT + 5) * 1000))
alua=0
pr=0
flap=0
while [ $# -gt 0 ]; do
	case $1 in
	--alua) alua=1 ;;
	--pr) pr=1 ;;
	--flap) flap=1 ;;
	*) vm_fail "mpath: bad argument $1" ;;
	esac
	shift
done
role=${VM_PEER_ROLE:-}
if [ $flap = 1 ]; then
	[ -n "$role" ] || vm_fail "mpath: --flap needs the two-guest mode (TARGET X@peer)"
	cut_for=60
	# an I/O requeued on a connection that came back for 2 s may meet
	# the next cut there: two failures' worth (10.6 s seen with either
	# pair on 6.1)
	limit_ms=$((2 * limit_ms))
fi
# the path's return may take 30 s, then 5 s of I/O on both paths are
# counted: fio outlasts that; with ALUA, 5 s of I/O are also counted
# during the cut, which can then end that much later
runtime=$((cut_after + cut_for + 45 + alua * 10))

vm_rxe_up
vm_rxe2_up
vm_load_roles
if [ "$role" != initiator ]; then
	vm_target_setup --iblock
	if [ $alua = 1 ]; then
		vm_alua_tpg2 "$VM_TGT_IP2"
	else
		vm_portal_add "$VM_TGT_IP2"
	fi
	# LIO keeps each device's registrations in its dbroot's pr/ (APTPL
	# metadata, written at every registration): no such directory, and
	# PERSISTENT RESERVE OUT fails with NOT READY. It is the target's
	# guest that needs it.
	[ $pr = 1 ] && vm_must mkdir -p "$(cat /sys/kernel/config/target/dbroot)/pr"
fi
if [ "$role" = target ]; then
	# the initiator's MAC stays known on the first link too (the second
	# one's is pinned by vm_rxe2_up): see vm_peer_rxe2_up
	vm_must ip neigh replace "$VM_INI_IP" lladdr "$VM_INI_MAC" \
		dev "$(vm_peer_nic)" nud permanent
	vm_peer_signal ready
	# the host writes "done" once the initiator guest ended its scenario
	vm_peer_wait "done" 100000
	vm_log "initiator guest's scenario: $(cat "$VM_PEER_SIG/done" 2>/dev/null)"
	return 0
fi

# which path is cut: the optimized one with ALUA, else the second
if [ $alua = 1 ]; then
	cut_ip=$VM_TGT_IP cut_dev=$VM_DEV0 cut_nic=veth0
else
	cut_ip=$VM_TGT_IP2 cut_dev=$VM_DEV2 cut_nic=veth2
fi
# a body that fails leaves no fio holding the map for teardown
fio_pid=""
trap 'kill "$fio_pid" 2>/dev/null && wait "$fio_pid"' EXIT
if [ -n "$role" ]; then
	nic1=$(vm_peer_nic)
	vm_must ip neigh replace "$VM_TGT_IP" lladdr "$VM_TGT_MAC" dev "$nic1" nud permanent
	cut_nic=$VM_PEER_NIC2
	[ $alua = 1 ] && cut_nic=$nic1
	# the cut's qdiscs before any connection (vm_link_cut_prepare); a body
	# that fails mid-cut must not leave the link cut for teardown
	trap 'kill "$fio_pid" 2>/dev/null && wait "$fio_pid"; vm_link_cut "$cut_nic" off 2>/dev/null; vm_link_cut_batch stop; vm_link_cut_remove "$cut_nic"' EXIT
	vm_link_cut_prepare "$cut_nic"
fi
vm_iscsid_start
[ -n "$role" ] && vm_peer_wait_ready
vm_mpath_nodes "$VM_TGT_IP" "$VM_TGT_IP2"
vm_wait 30 vm_disk_of_addr "$VM_TGT_IP" >/dev/null ||
	vm_fail "no disk for the session through $VM_TGT_IP"
vm_wait 30 vm_disk_of_addr "$VM_TGT_IP2" >/dev/null ||
	vm_fail "no disk for the session through $VM_TGT_IP2"
sd1=$(vm_disk_of_addr "$VM_TGT_IP")
sd2=$(vm_disk_of_addr "$VM_TGT_IP2")
vm_log "path 1: $sd1 through $VM_TGT_IP, path 2: $sd2 through $VM_TGT_IP2"
vm_mpath_start 2
dev=$(vm_mpath_dev) || vm_fail "no multipath map"
vm_wait 10 test -b "$dev" || vm_fail "$dev did not appear"

# I/O completed by a disk so far: reads + writes of /sys/block/SDX/stat
ios_of() {
	awk '{ print $1 + $5 }' "/sys/block/$1/stat"
}

# multipathd's dm state of path SDX is STATE (active, failed)
path_is() {
	[ "$(vm_mpath_path_state "$1" | cut -d' ' -f1)" = "$2" ]
}

# every session of the target is logged in, COUNT of them
sessions_in() {
	[ "$(cat /sys/class/iscsi_session/session*/state 2>/dev/null | grep -c LOGGED_IN)" = "$1" ]
}

# serving WHEN WANT: over 5 s, which of the two disks complete I/O, checked
# against WANT: "both", or the one disk that alone may
serving() {
	local when=$1 want=$2 a1 a2 d1 d2 ok
	a1=$(ios_of "$sd1")
	a2=$(ios_of "$sd2")
	sleep 5
	d1=$(($(ios_of "$sd1") - a1))
	d2=$(($(ios_of "$sd2") - a2))
	vm_log "I/O completed in 5 s $when: $sd1 $d1, $sd2 $d2"
	case $want in
	both) ok=$([ "$d1" -gt 0 ] && [ "$d2" -gt 0 ] && echo 1) ;;
	"$sd1") ok=$([ "$d1" -gt 0 ] && [ "$d2" = 0 ] && echo 1) ;;
	*) ok=$([ "$d2" -gt 0 ] && [ "$d1" = 0 ] && echo 1) ;;
	esac
	[ "$ok" = 1 ] ||
		vm_fail "$when: I/O not where it belongs ($want): $sd1 $d1, $sd2 $d2 in 5 s"
}

# persistent reservations across the two sessions (--pr)
pr_check() {
	local out
	vm_must sg_persist --out --register --param-sark=0x1111 "/dev/$sd1"
	vm_must sg_persist --out --reserve --param-rk=0x1111 --prout-type=5 "/dev/$sd1"
	out=$(sg_persist --in --read-keys "/dev/$sd2" 2>&1)
	vm_log "keys through $sd2: $(echo "$out" | tr '\n' ' ')"
	echo "$out" | grep -q 0x1111 ||
		vm_fail "the key registered through $sd1 is not seen through $sd2"
	out=$(sg_persist --in --read-reservation "/dev/$sd2" 2>&1)
	vm_log "reservation through $sd2: $(echo "$out" | tr '\n' ' ')"
	echo "$out" | grep -q 'Key=0x1111' ||
		vm_fail "the reservation taken through $sd1 is not seen through $sd2"
	vm_must sg_persist --out --register --param-sark=0x2222 "/dev/$sd2"
	vm_must sg_persist --out --preempt --param-rk=0x2222 --param-sark=0x1111 \
		--prout-type=5 "/dev/$sd2"
	# the preempted I_T nexus hears of it first: a unit attention,
	# REGISTRATIONS PREEMPTED (SPC-4), to this command or, when multipathd's
	# path checker came first, to its TEST UNIT READY
	out=$(sg_persist --in --read-reservation "/dev/$sd1" 2>&1)
	if echo "$out" | grep -q 'Registrations preempted'; then
		vm_log "$sd1 got the unit attention for its preempted registration"
		out=$(sg_persist --in --read-reservation "/dev/$sd1" 2>&1)
	fi
	vm_log "reservation through $sd1: $(echo "$out" | tr '\n' ' ')"
	echo "$out" | grep -q 'Key=0x2222' ||
		vm_fail "the preempting reservation is not seen through $sd1"
	out=$(sg_persist --in --read-keys "/dev/$sd1" 2>&1)
	echo "$out" | grep -q 0x1111 && vm_fail "the preempted key is still registered: $out"
	if dd if=/dev/zero of="/dev/$sd1" bs=4k count=1 oflag=direct 2>/dev/null; then
		vm_fail "a write through the preempted path $sd1 succeeded"
	fi
	vm_must sg_persist --out --clear --param-rk=0x2222 "/dev/$sd2"
	out=$(sg_persist --in --read-keys "/dev/$sd1" 2>&1)
	echo "$out" | grep -q 'there are NO registered' ||
		vm_fail "registrations left after the clear: $out"
	vm_log "persistent reservations: registered, reserved, preempted and cleared across both sessions"
}

[ $pr = 1 ] && pr_check

if [ $alua = 1 ]; then
	cut_sd=$sd1 other=$sd2
else
	cut_sd=$sd2 other=$sd1
fi

json=$VM_SCEN_DIR/fio-mpath.json
cat >"$VM_SCEN_DIR/fio-mpath.fio" <<EOF
[mpath]
filename=$dev
ioengine=libaio
direct=1
rw=randwrite
bs=16k
iodepth=8
size=32M
time_based=1
runtime=$runtime
verify=crc32c
verify_backlog=256
verify_fatal=1
do_verify=1
disk_util=0
EOF
vm_log "fio through $dev for $runtime s"
fio --output-format=json --output="$json" "$VM_SCEN_DIR/fio-mpath.fio" &
fio_pid=$!

# path_cut on|off: cut the path, or give it back
path_cut() {
	if [ -n "$role" ]; then
		vm_link_cut "$cut_nic" "$1" || vm_fail "tc: cannot turn the cut of $cut_nic $1"
	elif [ "$1" = on ]; then
		vm_must rdma link delete "$cut_dev"
	else
		vm_must rdma link add "$cut_dev" type "$VM_RDMA" netdev "$cut_nic"
	fi
}
how="rdma link delete $cut_dev"
[ -n "$role" ] && how="$cut_nic drops every frame"

# the cut comes $cut_after s after fio's first I/O through the map (on
# a loaded host fio can take longer than that to start)
dm=$(basename "$(readlink -f "$dev")")
map_busy() { [ "$(ios_of "$dm")" -gt 0 ]; }
vm_wait $((60 * ${VM_TIMEOUT_SCALE:-1})) map_busy ||
	vm_fail "fio completed no I/O through $dev in $((60 * ${VM_TIMEOUT_SCALE:-1})) s"
sleep "$cut_after"
[ $alua = 1 ] && serving "before the cut" "$sd1"
if [ $flap = 1 ]; then
	errs=$(dmesg | grep -c 'detected conn error')
	vm_progress "flapping the path to $cut_ip ($cut_sd) for $cut_for s: cut 2 s, back 2 s ($how)"
	cut=$(date +%s)
	# the state changes every 2 s by the clock, whatever tc took: change k
	# is due 200 k centiseconds after the first
	vm_link_cut_batch start "$cut_nic"
	rm -f /tmp/mpath-tick
	vm_must mkfifo /tmp/mpath-tick
	exec {tick}<>/tmp/mpath-tick
	read -r up _ </proc/uptime
	t0=${up/./}
	flaps=0 k=0 late=0 worst=0
	while [ $k -lt $((cut_for / 2)) ]; do
		if [ $((k % 2)) = 0 ]; then
			path_cut on
		else
			path_cut off
			flaps=$((flaps + 1))
		fi
		read -r up _ </proc/uptime
		# how late this change came, after its due time 200 k cs in
		due=$((${up/./} - t0 - 200 * k))
		[ $due -le 25 ] || late=$((late + 1))
		[ $due -le $worst ] || worst=$due
		k=$((k + 1))
		due=$((t0 + 200 * k - ${up/./}))
		# a sleep without a new process (see vm_link_cut_batch): a read
		# that times out on a FIFO nobody writes
		if [ $due -gt 0 ]; then
			printf -v secs '%d.%02d' $((due / 100)) $((due % 100))
			read -r -t "$secs" -u "$tick" _
		fi
		kill -0 "$fio_pid" 2>/dev/null || vm_fail "fio ended while the path flapped"
	done
	vm_link_cut_batch stop
	exec {tick}>&-
	vm_log "$flaps flaps in $(($(date +%s) - cut)) s ($late of $k changes over 25 cs late, $worst cs at worst); connections lost meanwhile: $(($(dmesg | grep -c 'detected conn error') - errs)); $cut_sd: $(vm_mpath_path_state "$cut_sd"), session $(vm_session_state_of_addr "$cut_ip")"
	[ $worst -le 100 ] ||
		vm_fail "the path did not flap every 2 s: a change came $worst cs late"
else
	vm_progress "cutting the path to $cut_ip ($cut_sd): $how"
	path_cut on
	cut=$(date +%s)
	vm_wait 20 path_is "$cut_sd" failed ||
		vm_fail "multipathd did not fail $cut_sd within 20 s of the cut: $(vm_mpath_path_state "$cut_sd")"
	vm_log "$cut_sd failed after $(($(date +%s) - cut)) s: $(vm_mpath_path_state "$cut_sd"), session $(vm_session_state_of_addr "$cut_ip")"
	serving "during the cut" "$other"
	kill -0 "$fio_pid" 2>/dev/null || vm_fail "fio ended during the cut"
	rest=$((cut_for - ($(date +%s) - cut)))
	[ "$rest" -le 0 ] || sleep "$rest"
	vm_progress "restoring the path to $cut_ip"
	path_cut off
fi
back=$(date +%s)
vm_wait 30 sessions_in 2 ||
	vm_fail "iscsid did not log in through $cut_ip again within 30 s: $(vm_session_state_of_addr "$cut_ip")"
relogin=$(($(date +%s) - back))
vm_wait $((30 - relogin)) vm_mpath_paths_ok 2 ||
	vm_fail "multipathd does not use both paths 30 s after the path came back: $(multipathd show paths raw format '%d %t %T' | tr '\n' ';')"
vm_log "$cut_sd back: session logged in after $relogin s, path active after $(($(date +%s) - back)) s"
kill -0 "$fio_pid" 2>/dev/null || vm_fail "fio ended before the path came back"
if [ $alua = 1 ]; then
	serving "after the return" "$sd1"
else
	serving "after the return" both
fi

wait "$fio_pid"
rc=$?
/usr/bin/python3 - "$json" "$rc" "$limit_ms" <<'EOF' || vm_fail "fio through the map: $(cat "$VM_SCEN_DIR/fio-mpath.err")"
import json, sys
path, rc, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
err = open(path[:-5] + ".err", "w")
try:
    text = open(path).read()
    j = json.loads(text[text.index("{"):])["jobs"][0]
except Exception as e:
    err.write("fio exit %d, no JSON output (%s)" % (rc, e)); sys.exit(1)
w, r = j["write"], j["read"]
longest = max(w["lat_ns"]["max"], r["lat_ns"]["max"]) / 1e6
print("fio: err=%d write=%d KiB read back=%d KiB longest I/O %.0f ms (limit %d)"
      % (j["error"], w["io_bytes"] // 1024, r["io_bytes"] // 1024, longest, limit))
bad = []
if rc or j["error"]:
    bad.append("exit %d, error %d" % (rc, j["error"]))
if w["io_bytes"] == 0 or r["io_bytes"] == 0:
    bad.append("wrote %d bytes, read back %d" % (w["io_bytes"], r["io_bytes"]))
if longest > limit:
    bad.append("an I/O took %.0f ms, more than %d" % (longest, limit))
err.write("; ".join(bad))
sys.exit(1 if bad else 0)
EOF
vm_log "$(multipathd show topology 2>&1)"
