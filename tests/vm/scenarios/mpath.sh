# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# dm-multipath over two iSER paths to one LUN, one path cut under verified
# I/O by removing its RDMA device, then given back. The target (LIO's block
# backstore on brd) has an iSER portal on each of two links: $VM_TGT_IP
# (rxe0) and $VM_TGT_IP2 (rxe2). open-iscsi logs in through each, with a
# replacement_timeout of 5 s; udev and multipathd, run as on an installed
# system with the admin guide's settings, join the two disks in one map.
# Inside one guest rdma_cm loops a connection inside the RDMA device that
# owns the portal's address, so rxe2 carries both ends of the second path
# and `rdma link delete rxe2` cuts it (the two-guest rows cut a link
# instead).
#
# fio writes 16 KiB blocks at random through the map and reads each back
# with its crc32c as it goes (verify_backlog), for 100 s. 10 s in, rxe2 is
# removed for 30 s, then added again. Fails on:
#   - an I/O error or a verify error, or no read-back at all;
#   - an I/O that took longer than replacement_timeout + 5 s (the longest
#     is logged);
#   - multipathd not failing the cut path within 20 s;
#   - iscsid not logging that session in again on its own, or multipathd
#     not using the path again, within 30 s of the device's return;
#   - afterwards, the disk of either path not completing I/O within 5 s
#     (its /sys/block counters).

cut_after=10
cut_for=30
runtime=100
limit_ms=$(((VM_MPATH_REPLACEMENT + 5) * 1000))

vm_rxe_up
vm_rxe2_up
vm_load_roles
vm_target_setup --iblock
vm_portal_add "$VM_TGT_IP2"
vm_iscsid_start
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

sleep "$cut_after"
vm_progress "cutting path 2: rdma link delete $VM_DEV2"
vm_must rdma link delete "$VM_DEV2"
cut=$(date +%s)
vm_wait 20 path_is "$sd2" failed ||
	vm_fail "multipathd did not fail $sd2 within 20 s of the cut: $(vm_mpath_path_state "$sd2")"
vm_log "path 2 failed after $(($(date +%s) - cut)) s: $(vm_mpath_path_state "$sd2"), session $(vm_session_state_of_addr "$VM_TGT_IP2")"
kill -0 "$fio_pid" 2>/dev/null || vm_fail "fio ended during the cut"
sleep $((cut_for - ($(date +%s) - cut)))

vm_progress "restoring path 2: rdma link add $VM_DEV2"
vm_must rdma link add "$VM_DEV2" type "$VM_RDMA" netdev veth2
back=$(date +%s)
vm_wait 30 sessions_in 2 ||
	vm_fail "iscsid did not log in through $VM_TGT_IP2 again within 30 s: $(vm_session_state_of_addr "$VM_TGT_IP2")"
relogin=$(($(date +%s) - back))
vm_wait $((30 - relogin)) vm_mpath_paths_ok 2 ||
	vm_fail "multipathd does not use both paths 30 s after the device came back: $(multipathd show paths raw format '%d %t %T' | tr '\n' ';')"
vm_log "path 2 back: session logged in after $relogin s, in use after $(($(date +%s) - back)) s"
kill -0 "$fio_pid" 2>/dev/null || vm_fail "fio ended before path 2 came back"

# both disks serve I/O again
a1=$(ios_of "$sd1")
a2=$(ios_of "$sd2")
sleep 5
b1=$(ios_of "$sd1")
b2=$(ios_of "$sd2")
vm_log "I/O completed in 5 s: $sd1 $((b1 - a1)), $sd2 $((b2 - a2))"
[ "$b1" -gt "$a1" ] || vm_fail "$sd1 completed no I/O in 5 s after the failback"
[ "$b2" -gt "$a2" ] || vm_fail "$sd2 completed no I/O in 5 s after the failback"

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
