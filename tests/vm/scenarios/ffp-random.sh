# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Random well-framed PDUs after login: iser_ffp (tests/vm/tools/ffp/) -m random
# logs in to a normal session (as $VM_INITIATOR_IQN, InitialR2T=No on the
# TPG meanwhile) and sends COUNT PDUs of the sequence a seed gives
# (opcodes, flags, sequence numbers, LUNs, CDBs, AHS, STags, data: see the
# tool's header), eight at a time between two pings; when the target
# closes the connection, as it must for much of this, the tool logs in
# again and goes on with the next PDU. Each seed's summary line must show
# every PDU sent, no GOOD status for a command the tool knows is malformed
# (an out-of-range READ or WRITE(10)) and no ping left unanswered on a
# connection that stayed up. The rig's kernel-log gate judges the rest (a
# WARNING, BUG, Oops, lockdep report or hung task fails the row). Then a
# normal login with a verified fio job must still work.
#
# Seeds: 1 always, then the date's (YYYYMMDD of the guest's clock) unless
# --seed is given; the log names each seed, and `iser_ffp -m random -s SEED
# -N COUNT` replays one (with -F FIRST from a later PDU).
#
# With the in-tree target (intree-target-ffp-random, a reference row not
# run by default) the summaries are logged but not judged.
#
# Options:
#   --count N    PDUs per seed (default 10000)
#   --seed S     this seed instead of 1 and the date's (repeatable)
#   --verbose    the tool's -v: every PDU in the log
#   --first N    begin at PDU N of each seed (default 0; -F), for replaying
#                the part of a run that failed
#   --chunk N    run each seed N PDUs at a time (-F/-N), with the check
#                below after each part: it names the part that left a
#                session behind
#
# After each run (or part) the tool has closed its last connection: within
# 30 s LIO's ACL must show no session (a session left behind pins the ACL,
# and removing it, as targetcli clearconfig does, then hangs).
count=10000
chunk=0
first0=0
seeds=()
verbose=()
while [ $# -gt 0 ]; do
	case $1 in
	--count) count=$2; shift ;;
	--seed) seeds+=("$2"); shift ;;
	--chunk) chunk=$2; shift ;;
	--first) first0=$2; shift ;;
	--verbose) verbose=(-v) ;;
	*) vm_fail "ffp-random: bad argument $1" ;;
	esac
	shift
done
[ ${#seeds[@]} -gt 0 ] || seeds=(1 "$(date -u +%Y%m%d)")

ffp=$VM_REPO/build/vm/tools/iser_ffp
[ -x "$ffp" ] || vm_fail "$ffp is not built (make vm-tools)"
vm_rxe_up
vm_load_roles
vm_target_setup
vm_tcli "/iscsi/$VM_TARGET_IQN/tpg1 set parameter InitialR2T=No"

acl_info=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/acls/$VM_INITIATOR_IQN/info

fails=""
for seed in "${seeds[@]}"; do
	step=$count
	[ "$chunk" -gt 0 ] && step=$chunk
	for ((first = first0; first < first0 + count; first += step)); do
		n=$((first0 + count - first < step ? first0 + count - first : step))
		start=$SECONDS
		out=$("$ffp" -m random "${verbose[@]}" -s "$seed" -F "$first" -N "$n" \
			-n "$VM_TARGET_IQN" -i "$VM_INITIATOR_IQN" "$VM_TGT_IP" "$VM_ISER_PORT" 2>&1) ||
			vm_fail "iser_ffp -m random -s $seed -F $first did not run: $out"
		vm_log "iser_ffp -m random -s $seed -F $first -N $n ($((SECONDS - start)) s):"
		lines=40
		[ ${#verbose[@]} -eq 0 ] || lines=1000000
		echo "$out" | head -n $lines | while read -r line; do vm_log "  $line"; done
		sum=$(echo "$out" | grep '^random seed=.* sent=' | tail -n 1)
		[ "$VM_TARGET" != intree ] || continue
		re="^random seed=$seed sent=$n .*good_status_on_bad=0 .*stalled=0 "
		if ! echo "$sum" | grep -qE "$re"; then
			vm_log "FAILED: iser_ffp -m random -s $seed -F $first: expected /$re/"
			fails+="seed $seed from PDU $first: expected /$re/, got: ${sum:-no summary}; "
		fi
		if ! vm_wait 30 vm_acl_idle; then
			vm_log "FAILED: 30 s after PDUs $first-$((first + n - 1)) of seed $seed LIO still has a session: $(tr '\n' ' ' <"$acl_info")"
			vm_fail "${fails}seed $seed, PDUs $first-$((first + n - 1)): a session is left behind after the tool's last connection closed"
		fi
	done
done
vm_tcli "/iscsi/$VM_TARGET_IQN/tpg1 set parameter InitialR2T=Yes"
[ -z "$fails" ] || vm_fail "$fails"

# the target still serves a normal initiator
vm_serves_after after-random
