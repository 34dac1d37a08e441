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
# goes on with the next PDU. Each connection costs iscsid's reopen (2-3 s
# under TCG), so a long sequence is split into chains: K instances of the
# tool, each on its own port (3262 + k - 1) with its own session, chain k
# serving PDUs [(k-1)*N/K, k*N/K) of the same seed, all at the same time.
#
# Meanwhile readers (two, or one per chain) read random extents of
# the disk (direct I/O) and compare every read that succeeds with the
# LUN's pattern: an I/O error is allowed, wrong data is not (a wrong read
# is kept as wrong.ID.N and tests/vm/guest/wrong-data.py logs what each
# 4 KiB block holds). The tool sends a good status for a command only with
# its data delivered just before, so wrong data that reaches a reader is
# the initiator's doing (a command completed by something that was not
# its SCSI Response, or by a stale one). A session whose iscsid waits out
# a random Time2Wait of 30 s or more is logged out and in again; after the
# random part a disk the SCSI layer offlined or left 0 bytes long is set
# running and rescanned, as an administrator would.
#
# Judged, per chain: every PDU sent (the summary's sent=COUNT),
# good_dirty=0 (the tool's own check that it never sent GOOD for data it
# had spoilt), no read with wrong data, the session back afterwards with
# the whole disk read back right, logout; then a second, normal session
# to a fresh iser_tgt (-P -c good) reads the disk back right too and the
# module unloads. The rig's kernel-log gate judges the rest.
#
# With the in-tree ib_iser (intree-initiator-random, in no set) the random
# part is logged, not judged.
#
# Options:
#   --count N    PDUs of the sequence (default 10000)
#   --seed S     the seed (default 1); `iser_tgt -m random -s S -N N`
#                replays it, with -F FIRST from a later PDU
#   --time T     seconds the random part may take at most (default 700,
#                times the rig's ISER_VM_TIMEOUT_SCALE; then the tool is
#                told to stop, SIGUSR1, and the row fails on sent < N)
#   --chains K   K sessions at once, the sequence split between them
#                (default 1, at most 8)
#   --verbose    the tool's -v: every PDU and connection in the log
count=10000
seed=1
limit=700
chains=1
verbose=()
while [ $# -gt 0 ]; do
	case $1 in
	--count) count=$2; shift ;;
	--seed) seed=$2; shift ;;
	--time) limit=$2; shift ;;
	--chains) chains=$2; shift ;;
	--verbose) verbose=(-v) ;;
	*) vm_fail "ini-random: bad argument $1" ;;
	esac
	shift
done
case $chains in [1-8]) ;; *) vm_fail "ini-random: --chains $chains (1 to 8)" ;; esac
# the rig's timeout scale (the debug kernel runs about 3 times slower)
limit=$((limit * ${VM_TIMEOUT_SCALE:-1}))

tgt=$VM_REPO/build/vm/tools/iser_tgt
[ -x "$tgt" ] || vm_fail "$tgt is not built (make vm-tools)"
img=$VM_SCEN_DIR/lun.img
"$tgt" -P -D >"$img" || vm_fail "iser_tgt -D failed"
base_port=$VM_ISER_TGT_PORT

vm_rxe_up
vm_load_roles
vm_iscsid_start

# how long a tool waits for a connection before it gives up (and exits):
# as long as the random part may take. While iscsid waits out a long
# Time2Wait the loop below logs the session out and in, and on the debug
# kernel one round of that loop (8 chains, an iscsiadm and a grep of a
# large iscsid.log for each) took up to 15 minutes: the kick came after
# a tool had given up at 120 s (session 22), and again at 360 s (120 s
# times VM_TIMEOUT_SCALE, session 23). A tool whose initiator never comes
# back is stopped with the others at the limit, and the row fails then.
wait_s=$limit

# chain k: the tool on port base+k-1 with PDUs first[k] .. first[k]+n[k]-1
per=$(((count + chains - 1) / chains))
declare -a port first n out tpid dev
for ((k = 1; k <= chains; k++)); do
	port[k]=$((base_port + k - 1))
	first[k]=$(((k - 1) * per))
	n[k]=$((count - first[k] < per ? count - first[k] : per))
	[ "${n[k]}" -ge 0 ] || n[k]=0
	out[k]=$VM_SCEN_DIR/iser_tgt.$k.out
	VM_ISER_TGT_PORT=${port[k]} vm_iser_tgt_start "${out[k]}" good -m random \
		-s "$seed" -F "${first[k]}" -N "${n[k]}" -t 200 -w "$wait_s" "${verbose[@]}"
	tpid[k]=$VM_ISER_TGT_PID
	dev[k]=$(VM_ISER_TGT_PORT=${port[k]} vm_iser_tgt_login \
		node.session.timeo.replacement_timeout=10) || exit 1
	echo 10 >"/sys/block/${dev[k]#/dev/}/device/timeout" ||
		vm_fail "cannot set the SCSI timeout of ${dev[k]}"
done
portal_of() { echo "$VM_TGT_IP:${port[$1]}"; }
has_session() { # K: iscsiadm lists a session to chain K's portal
	iscsiadm -m session 2>/dev/null | grep -q " $(portal_of "$1"),"
}
sid_of() { # K: the iSCSI session number of chain K's session
	local sd
	for sd in $(vm_sessions_of_port "${port[$1]}"); do
		echo "${sd##*/session}"
		return 0
	done
	return 1
}
logged_in() { # K: chain K's session is LOGGED_IN
	local sd
	for sd in $(vm_sessions_of_port "${port[$1]}"); do
		[ "$(cat "$sd/state" 2>/dev/null)" = LOGGED_IN ] && return 0
	done
	return 1
}

stop=$VM_SCEN_DIR/stop
rm -f "$stop"

# reader ID K: read random extents (4 KiB to 64 KiB) of whatever disk chain
# K's session has now, compare each with the pattern; counts in reader.ID
reader() {
	local id=$1 k=$2 ok=0 err=0 bad=0 short=0 d off cnt t0 got=$VM_SCEN_DIR/got.$1
	while [ ! -e "$stop" ]; do
		d=$(vm_disk_of_port "${port[k]}") || { sleep 1; continue; }
		off=$((RANDOM % 256))
		cnt=$((1 + RANDOM % 16))
		[ $((off + cnt)) -le 256 ] || cnt=$((256 - off))
		t0=$EPOCHREALTIME
		if timeout 60 dd if="/dev/$d" of="$got" bs=4096 skip=$off \
			count=$cnt iflag=direct status=none 2>/dev/null; then
			# fewer bytes than asked, without an error: the
			# device was smaller then (its capacity unread or
			# refused after a random answer to READ CAPACITY), or
			# the end of the command failed after a part had
			# come; a failed read, not wrong data
			if [ "$(stat -c %s "$got")" -ne $((cnt * 4096)) ]; then
				err=$((err + 1))
				short=$((short + 1))
				echo "$ok $err $bad $short" >"$VM_SCEN_DIR/reader.$id"
				sleep 0.2
				continue
			fi
			if cmp -s "$got" <(dd if="$img" bs=4096 skip=$off \
				count=$cnt status=none); then
				ok=$((ok + 1))
			else
				bad=$((bad + 1))
				cp "$got" "$VM_SCEN_DIR/wrong.$id.$bad"
				vm_log "reader $id: WRONG DATA from /dev/$d, 4 KiB blocks $off+$cnt, read from $t0 to $EPOCHREALTIME (kept as wrong.$id.$bad): $(python3 "$VM_REPO/tests/vm/guest/wrong-data.py" "$got" "$img" "$off" 2>&1)"
			fi
		else
			err=$((err + 1))
			sleep 0.2
		fi
		echo "$ok $err $bad $short" >"$VM_SCEN_DIR/reader.$id"
	done
}

done_sent() { # every chain sent its part
	local k
	for ((k = 1; k <= chains; k++)); do
		grep -q '^random done ' "${out[k]}" || return 1
	done
}
tools_alive() {
	local k
	for ((k = 1; k <= chains; k++)); do
		kill -0 "${tpid[k]}" 2>/dev/null || return 1
	done
}

# the trigger: the random part of each chain begins with this READ of
# block 200
for ((k = 1; k <= chains; k++)); do
	dd if="${dev[k]}" of=/dev/null bs=512 skip=200 count=1 iflag=direct status=none 2>/dev/null &
done
start=$SECONDS
rpids=()
if [ "$chains" = 1 ]; then
	reader 1 1 &
	rpids+=($!)
	reader 2 1 &
	rpids+=($!)
else
	for ((k = 1; k <= chains; k++)); do
		reader "$k" "$k" &
		rpids+=($!)
	done
fi
relogins=0 kicks=0
next=$((SECONDS + 30))
while ! done_sent && [ $((SECONDS - start)) -lt "$limit" ]; do
	tools_alive || break
	for ((k = 1; k <= chains; k++)); do
		# iscsid logs out when the target asks it to (an Async
		# Message): the session is gone then, log in again
		if ! has_session "$k"; then
			relogins=$((relogins + 1))
			vm_log "chain $k: no session: login again"
			timeout 60 iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$(portal_of "$k")" \
				-I iser --login >/dev/null 2>&1
			continue
		fi
		# an Async Message "dropping the connection" carries a
		# Time2Wait, random here, that iscsid waits out before it
		# reconnects (seen: 18284 s), while the tool gives up after
		# $wait_s seconds without a connection: when iscsid's last word on the
		# session is such a wait of 30 s or more, log out and in again
		# (a session stuck for any other reason is the initiator's
		# fault, and the row fails on the tool's timeout)
		last=$(grep -E "connection$(sid_of "$k"):0 (Target dropping|is operational)" \
			"$VM_SCEN_DIR/iscsid.log" 2>/dev/null | tail -n 1)
		t2w=$(echo "$last" | sed -n 's/.*Target dropping.*reconnect min \([0-9]*\).*/\1/p')
		[ "${t2w:-0}" -ge 30 ] || continue
		kicks=$((kicks + 1))
		vm_log "chain $k: iscsid waits out a Time2Wait of $t2w s: log out and in again"
		timeout 60 iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$(portal_of "$k")" \
			-I iser --logout >/dev/null 2>&1
		timeout 60 iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$(portal_of "$k")" \
			-I iser --login >/dev/null 2>&1
	done
	if [ $SECONDS -ge $next ]; then
		for ((k = 1; k <= chains; k++)); do
			vm_log "progress, chain $k: $(grep '^random ' "${out[k]}" | tail -n 1)"
		done
		vm_log "readers (ok failed wrong short): $(cat "$VM_SCEN_DIR"/reader.* 2>/dev/null | tr '\n' ' ')"
		next=$((SECONDS + 30))
	fi
	sleep 2
done
took=$((SECONDS - start))
touch "$stop"
wait "${rpids[@]}"
ok=0 err=0 bad=0 short=0
for f in "$VM_SCEN_DIR"/reader.*; do
	[ -e "$f" ] || continue
	read -r o e b sh <"$f"
	ok=$((ok + o)) err=$((err + e)) bad=$((bad + b)) short=$((short + ${sh:-0}))
done
vm_log "random part: $took s, reads ok=$ok failed=$err (short, without an error: $short) wrong=$bad, logins again=$relogins, stuck sessions logged out and in=$kicks"
if ! done_sent; then
	vm_log "the sequence did not finish within $limit s: stopping it"
	for ((k = 1; k <= chains; k++)); do
		kill -USR1 "${tpid[k]}" 2>/dev/null
	done
fi

# what chain K's tool, its session and iscsid last said, for a failure reason
state() {
	printf 'iser_tgt %s: %s; sessions: %s; iscsid: %s' "$1" \
		"$(tail -n 2 "${out[$1]}" "${out[$1]}.err" 2>&1 | grep -v '^$' | tr '\n' ' ')" \
		"$(iscsiadm -m session -P 1 2>&1 | grep -E 'State' | tr -s ' \t\n' ' ')" \
		"$(grep -iE 'reopen|login|error|fail|conn' "$VM_SCEN_DIR/iscsid.log" 2>/dev/null | tail -n 4 | tr '\n' ' ')"
}

# the tools serve properly now: each session comes back and reads right
fails=""
total_sent=0 total_conns=0 revived=0
for ((k = 1; k <= chains; k++)); do
	has_session "$k" ||
		timeout 60 iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$(portal_of "$k")" -I iser --login >/dev/null 2>&1
	vm_wait 90 logged_in "$k" || vm_fail "chain $k: no session after the random part ($(state "$k"))"
	vm_wait 30 vm_disk_of_port "${port[k]}" || vm_fail "chain $k: no disk after the random part ($(state "$k"))"
	d=/dev/$(vm_disk_of_port "${port[k]}")
	vm_wait 10 test -b "$d" || vm_fail "$d did not appear"
	# A disk the SCSI layer gave up on during the random part: offlined
	# when its error recovery failed (the TEST UNIT READY after a session
	# reset got one of the tool's random answers: "Device offlined - not
	# ready after error recovery"), or left 0 bytes long by a rescan
	# while its session was down (READ CAPACITY failed with
	# DID_NO_CONNECT). Each was seen once on the debug kernel. That is
	# the SCSI layer's verdict on a target that answered at random, not
	# the initiator failing: bring the disk back as an administrator
	# would, now that the tool serves properly, and count it.
	b=/sys/block/${d#/dev/}
	if [ "$(cat "$b/device/state" 2>/dev/null)" = offline ] ||
		[ "$(cat "$b/size" 2>/dev/null)" = 0 ]; then
		revived=$((revived + 1))
		vm_log "chain $k: $d is $(cat "$b/device/state") with $(cat "$b/size") sectors after the random part: set it running and rescan"
		{ echo running >"$b/device/state" && echo 1 >"$b/device/rescan"; } ||
			vm_fail "chain $k: could not bring $d back"
		vm_wait 30 sh -c "[ \$(cat $b/size) -gt 0 ]" ||
			vm_fail "chain $k: $d still has no capacity after the rescan"
	fi
	whole=bad
	for _ in 1 2 3; do
		if cmp "$img" <(dd if="$d" bs=65536 count=16 iflag=direct status=none 2>/dev/null); then
			whole=ok
			break
		fi
		sleep 5
	done
	vm_log "chain $k: after the random part the whole disk reads back $whole"
	[ "$whole" = ok ] || fails+="chain $k: the disk did not read back right after the random part; "
	# the tool exits after the logout: 0 when every PDU went out
	vm_run timeout 60 iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$(portal_of "$k")" -I iser --logout ||
		vm_fail "chain $k: logout from iser_tgt failed"
	vm_wait 15 sh -c "! iscsiadm -m session 2>/dev/null | grep -q ' $(portal_of "$k"),'" ||
		vm_fail "chain $k: session still present after logout"
	vm_wait 30 sh -c "! kill -0 ${tpid[k]}" || { kill "${tpid[k]}"; vm_log "chain $k: iser_tgt did not finish"; }
	wait "${tpid[k]}"
	vm_log "chain $k: iser_tgt exit status $?"
	vm_log "chain $k: iser_tgt -m random -s $seed -F ${first[k]} -N ${n[k]}:"
	grep -v -e '^pdu ' -e '^random progress' "${out[k]}" | head -n 20 | while read -r line; do vm_log "  $line"; done
	[ ${#verbose[@]} -eq 0 ] || cp "${out[k]}" "$VM_SCEN_DIR/iser_tgt.$k.verbose"
	sum=$(grep '^random seed=.* sent=' "${out[k]}" | tail -n 1)
	vm_log "chain $k: summary: ${sum:-none}"
	sent=$(echo "$sum" | sed -n 's/.* sent=\([0-9]*\) .*/\1/p')
	conns=$(echo "$sum" | sed -n 's/.* connections=\([0-9]*\) .*/\1/p')
	total_sent=$((total_sent + ${sent:-0})) total_conns=$((total_conns + ${conns:-0}))
	re="^random seed=$seed sent=${n[k]} connections=[0-9]+ good_dirty=0 "
	echo "$sum" | grep -qE "$re" || fails+="chain $k: expected /$re/, got: ${sum:-no summary}; "
done
vm_wait 15 vm_no_sessions || vm_fail "sessions still present after the logouts"
vm_log "disks offlined or left without capacity, brought back: $revived"
[ "$took" -eq 0 ] ||
	vm_log "rate: $total_sent PDUs, $total_conns connections in $took s ($chains chains): $(awk "BEGIN { printf \"%.2f PDUs/s, %.2f connections/s\", $total_sent / $took, $total_conns / $took }")"

if [ "$VM_INITIATOR" = ours ]; then
	[ "$bad" = 0 ] || fails+="$bad reads returned wrong data; "
	[ -z "$fails" ] || vm_fail "seed $seed: ${fails%; }"
else
	vm_log "reference row, not judged: ${fails:-no finding}"
fi

# a second, normal session to a fresh target
vm_iscsid_stop
vm_iscsid_start
for ((k = 1; k <= chains; k++)); do
	vm_run iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$(portal_of "$k")" -o delete
done
vm_iser_tgt_start "$VM_SCEN_DIR/iser_tgt.second.out" good -P -w 60
dev2=$(vm_iser_tgt_login) || exit 1
cmp "$img" <(dd if="$dev2" bs=65536 count=16 iflag=direct status=none) ||
	vm_fail "the second session did not read the pattern back"
vm_log "second session: the whole disk reads back right"
vm_iser_tgt_logout
vm_iscsid_stop
vm_must rmmod ib_iser
vm_log "ib_iser unloaded"
