# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Random well-framed PDUs from a logged-in target, against the initiator:
# tests/vm/tools/iser_tgt -m random lets iscsid log in over iSER (a 1 MiB
# LUN whose every 8-byte word is a function of its offset: `iser_tgt -D`
# prints it) and serves the SCSI commands; from the first READ of block
# 200 on (the scan is done by then) it replaces a share of its answers by
# PDU after PDU of the sequence a seed gives: every target opcode and
# reserved ones, random flags, ITTs (issued, stale, bogus), StatSN and
# command windows, residuals, status and response codes, sense lengths,
# AHS, iSER header flags and STags, Send with Invalidate of the right and
# wrong STags, RDMA Writes of random bytes into a command's read buffer
# (see the tool's header). 70 in 100 PDUs are plausible ones a correct
# initiator takes (so that several fit on one connection), the rest
# hostile. Where the initiator drops the connection, as it must for much
# of this, iscsid's session recovery brings the next one, and the tool
# goes on with the next PDU. Under TCG on 6.1 that is about 1.3 PDUs and
# one connection every 3 s (iscsid's reopen takes 2-3 s): 10000 PDUs
# would take over two hours, so the row runs 700.
#
# Meanwhile two readers read random extents of the disk (direct I/O) and
# compare every read that succeeds with the LUN's pattern: an I/O error
# is allowed, wrong data is not. The tool sends GOOD for a command only
# with its data delivered just before, so wrong data that reaches a
# reader is the initiator's doing (a command completed by something that
# was not its SCSI Response, or by a stale one).
#
# Judged: every PDU sent (the summary's sent=COUNT), good_dirty=0 (the
# tool's own check that it never sent GOOD for data it had spoilt), no
# read with wrong data, the session back afterwards with the whole disk
# read back right, logout; then a second, normal session to a fresh
# iser_tgt (-P -c good) reads the disk back right too and the module
# unloads. The rig's kernel-log gate judges the rest (WARNING, BUG, Oops,
# lockdep, hung task fail the row).
#
# With the in-tree ib_iser (intree-initiator-random, a reference row not
# run by default) the random part is logged, not judged.
#
# Options:
#   --count N    PDUs of the sequence (default 10000)
#   --seed S     the seed (default 1); `iser_tgt -m random -s S -N N`
#                replays it, with -F FIRST from a later PDU
#   --time T     seconds the random part may take at most (default 700;
#                then the tool is told to stop, SIGUSR1, and the row
#                fails on sent < N)
#   --verbose    the tool's -v: every PDU and connection in the log
count=10000
seed=1
limit=700
verbose=()
while [ $# -gt 0 ]; do
	case $1 in
	--count) count=$2; shift ;;
	--seed) seed=$2; shift ;;
	--time) limit=$2; shift ;;
	--verbose) verbose=(-v) ;;
	*) vm_fail "ini-random: bad argument $1" ;;
	esac
	shift
done

tgt=$VM_REPO/build/vm/tools/iser_tgt
[ -x "$tgt" ] || vm_fail "$tgt is not built (make vm-tools)"
img=$VM_SCEN_DIR/lun.img
"$tgt" -P -D >"$img" || vm_fail "iser_tgt -D failed"
portal=$VM_TGT_IP:$VM_ISER_TGT_PORT

vm_rxe_up
vm_load_roles
out=$VM_SCEN_DIR/iser_tgt.out
vm_iser_tgt_start "$out" good -m random -s "$seed" -N "$count" -t 200 \
	-w 120 "${verbose[@]}"
tpid=$VM_ISER_TGT_PID
vm_iscsid_start
dev=$(vm_iser_tgt_login node.session.timeo.replacement_timeout=10) || exit 1
echo 10 >"/sys/block/${dev#/dev/}/device/timeout" ||
	vm_fail "cannot set the SCSI timeout of $dev"

stop=$VM_SCEN_DIR/stop
rm -f "$stop"

# reader ID: read random extents (4 KiB to 64 KiB) of whatever disk the
# session has now, compare each with the pattern; counts in reader.ID
reader() {
	local id=$1 ok=0 err=0 bad=0 d off cnt got=$VM_SCEN_DIR/got.$1
	while [ ! -e "$stop" ]; do
		d=$(vm_disk_sysfs) || { sleep 1; continue; }
		off=$((RANDOM % 256))
		cnt=$((1 + RANDOM % 16))
		[ $((off + cnt)) -le 256 ] || cnt=$((256 - off))
		if timeout 60 dd if="/dev/$d" of="$got" bs=4096 skip=$off \
			count=$cnt iflag=direct status=none 2>/dev/null; then
			if cmp -s "$got" <(dd if="$img" bs=4096 skip=$off \
				count=$cnt status=none); then
				ok=$((ok + 1))
			else
				bad=$((bad + 1))
				vm_log "reader $id: WRONG DATA from /dev/$d, 4 KiB blocks $off+$cnt: $(cmp "$got" <(dd if="$img" bs=4096 skip=$off count=$cnt status=none) 2>&1 | head -n 1)"
			fi
		else
			err=$((err + 1))
			sleep 0.2
		fi
		echo "$ok $err $bad" >"$VM_SCEN_DIR/reader.$id"
	done
}

done_sent() {
	grep -q '^random done ' "$out"
}

# the trigger: the random part begins with this READ of block 200
dd if="$dev" of=/dev/null bs=512 skip=200 count=1 iflag=direct status=none 2>/dev/null &
start=$SECONDS
reader 1 &
r1=$!
reader 2 &
r2=$!
relogins=0
next=$((SECONDS + 30))
while ! done_sent && [ $((SECONDS - start)) -lt "$limit" ]; do
	kill -0 "$tpid" 2>/dev/null || break
	# iscsid logs out when the target asks it to (an Async Message):
	# the session is gone then, log in again
	if ! iscsiadm -m session >/dev/null 2>&1; then
		relogins=$((relogins + 1))
		vm_log "no session: login again"
		timeout 60 iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$portal" \
			-I iser --login >/dev/null 2>&1
	fi
	if [ $SECONDS -ge $next ]; then
		vm_log "progress: $(grep '^random ' "$out" | tail -n 1), readers (ok failed wrong) $(cat "$VM_SCEN_DIR"/reader.* 2>/dev/null | tr '\n' ' ')"
		next=$((SECONDS + 30))
	fi
	sleep 2
done
took=$((SECONDS - start))
touch "$stop"
wait "$r1" "$r2"
ok=0 err=0 bad=0
for f in "$VM_SCEN_DIR"/reader.*; do
	[ -e "$f" ] || continue
	read -r o e b <"$f"
	ok=$((ok + o)) err=$((err + e)) bad=$((bad + b))
done
vm_log "random part: $took s, reads ok=$ok failed=$err wrong=$bad, logins again=$relogins"
if ! done_sent; then
	vm_log "the sequence did not finish within $limit s: stopping it"
	kill -USR1 "$tpid" 2>/dev/null
fi

# what the tool, the session and iscsid last said, for a failure reason
state() {
	printf 'iser_tgt: %s; session: %s; iscsid: %s' \
		"$(tail -n 2 "$out" "$out.err" 2>&1 | grep -v '^$' | tr '\n' ' ')" \
		"$(iscsiadm -m session -P 1 2>&1 | grep -E 'State' | tr -s ' \t\n' ' ')" \
		"$(grep -iE 'reopen|login|error|fail|conn' "$VM_SCEN_DIR/iscsid.log" 2>/dev/null | tail -n 4 | tr '\n' ' ')"
}

# the tool serves properly now: the session comes back and reads right
ini_logged_in() {
	iscsiadm -m session -P 1 2>/dev/null | grep -q 'iSCSI Session State: LOGGED_IN'
}
iscsiadm -m session >/dev/null 2>&1 ||
	timeout 60 iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$portal" -I iser --login >/dev/null 2>&1
vm_wait 90 ini_logged_in || vm_fail "no session after the random part ($(state))"
vm_wait 30 vm_disk_sysfs || vm_fail "no disk after the random part ($(state))"
dev=/dev/$(vm_disk_sysfs)
vm_wait 10 test -b "$dev" || vm_fail "$dev did not appear"
whole=bad
for _ in 1 2 3; do
	if cmp "$img" <(dd if="$dev" bs=65536 count=16 iflag=direct status=none 2>/dev/null); then
		whole=ok
		break
	fi
	sleep 5
done
vm_log "after the random part: the whole disk reads back $whole"
# the tool exits after the logout: 0 when every PDU went out
vm_run timeout 60 iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$portal" -I iser --logout ||
	vm_fail "logout from iser_tgt failed"
vm_wait 15 vm_no_sessions || vm_fail "session still present after logout"
vm_wait 30 sh -c "! kill -0 $tpid" || { kill "$tpid"; vm_log "iser_tgt did not finish"; }
wait "$tpid"
vm_log "iser_tgt exit status $?"
vm_log "iser_tgt -m random -s $seed -N $count:"
grep -v -e '^pdu ' -e '^random progress' "$out" | head -n 20 | while read -r line; do vm_log "  $line"; done
[ ${#verbose[@]} -eq 0 ] || cp "$out" "$VM_SCEN_DIR/iser_tgt.verbose"
sum=$(grep '^random seed=.* sent=' "$out" | tail -n 1)
vm_log "summary: ${sum:-none}"
sent=$(echo "$sum" | sed -n 's/.* sent=\([0-9]*\) .*/\1/p')
conns=$(echo "$sum" | sed -n 's/.* connections=\([0-9]*\) .*/\1/p')
[ -z "$sent" ] || [ "$took" -eq 0 ] ||
	vm_log "rate: $sent PDUs, $conns connections in $took s: $(awk "BEGIN { printf \"%.2f PDUs/s, %.2f connections/s\", $sent / $took, $conns / $took }")"

if [ "$VM_INITIATOR" = ours ]; then
	re="^random seed=$seed sent=$count connections=[0-9]+ good_dirty=0 "
	fails=""
	echo "$sum" | grep -qE "$re" || fails+="expected /$re/, got: ${sum:-no summary}; "
	[ "$bad" = 0 ] || fails+="$bad reads returned wrong data; "
	[ "$whole" = ok ] || fails+="the disk did not read back right after the random part; "
	[ -z "$fails" ] || vm_fail "seed $seed: ${fails%; }"
fi

# a second, normal session to a fresh target
vm_iscsid_stop
vm_iscsid_start
vm_run iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$portal" -o delete
vm_iser_tgt_start "$out.2" good -P -w 60
dev=$(vm_iser_tgt_login) || exit 1
cmp "$img" <(dd if="$dev" bs=65536 count=16 iflag=direct status=none) ||
	vm_fail "the second session did not read the pattern back"
vm_log "second session: the whole disk reads back right"
vm_iser_tgt_logout
vm_iscsid_stop
vm_must rmmod ib_iser
vm_log "ib_iser unloaded"
