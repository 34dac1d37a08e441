# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Random well-framed PDUs after login: tests/vm/tools/iser_ffp -m random
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
count=10000
seeds=()
verbose=()
while [ $# -gt 0 ]; do
	case $1 in
	--count) count=$2; shift ;;
	--seed) seeds+=("$2"); shift ;;
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

fails=""
for seed in "${seeds[@]}"; do
	start=$SECONDS
	out=$("$ffp" -m random "${verbose[@]}" -s "$seed" -N "$count" -n "$VM_TARGET_IQN" \
		-i "$VM_INITIATOR_IQN" "$VM_TGT_IP" "$VM_ISER_PORT" 2>&1) ||
		vm_fail "iser_ffp -m random -s $seed did not run: $out"
	vm_log "iser_ffp -m random -s $seed -N $count ($((SECONDS - start)) s):"
	lines=40
	[ ${#verbose[@]} -eq 0 ] || lines=1000000
	echo "$out" | head -n $lines | while read -r line; do vm_log "  $line"; done
	sum=$(echo "$out" | grep '^random seed=.* sent=' | tail -n 1)
	[ "$VM_TARGET" != intree ] || continue
	re="^random seed=$seed sent=$count .*good_status_on_bad=0 .*stalled=0 "
	if ! echo "$sum" | grep -qE "$re"; then
		vm_log "FAILED: iser_ffp -m random -s $seed: expected /$re/"
		fails+="seed $seed: expected /$re/, got: ${sum:-no summary}; "
	fi
done
vm_tcli "/iscsi/$VM_TARGET_IQN/tpg1 set parameter InitialR2T=Yes"
[ -z "$fails" ] || vm_fail "$fails"

# the target still serves a normal initiator
vm_serves_after after-random
