#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the guest scenarios of tests/vm/scenarios.list on Debian's 6.1 and 6.12
# kernels under qemu (TCG).  One boot per kernel runs all selected scenarios
# one after the other.  Prints "PASS <kernel> <scenario>" or
# "FAIL <kernel> <scenario>: <reason> (log: <path>)" per scenario and ends
# with "N passed, N failed"; exits 1 if any failed, 2 on bad usage or a
# missing prerequisite.  Logs: build/vm/logs/<kernel>/.  Rows whose TARGET
# is "X@peer" run in the two-guest mode (lib/host.sh vm_pair_boot), each in
# a boot pair of its own after the single-guest boots.
# See Documentation/testing-vm.md.

set -u
# shellcheck disable=SC2034 # used by lib/host.sh
VM_PROG=vm-check
VM_LIST=${ISER_VM_LIST:-$(dirname "$0")/scenarios.list}
# shellcheck source=lib/host.sh
. "$(dirname "$0")/lib/host.sh"

usage() {
	cat <<EOF
usage: tests/vm/vm-check.sh [--kernel 6.1|6.12|RELEASE]... [--scenario NAME]...
                            [--full] [--all] [--list]
  --kernel K     run on kernel K only (repeatable; default: 6.1 and 6.12)
  --scenario S   run scenario S only (repeatable, or a comma list; default:
                 the scenarios marked "yes" in tests/vm/scenarios.list)
  --full         the default scenarios and those marked "full" (make vm-full)
  --all          run every scenario of the list, the non-default ones too
  --list         print the scenarios and exit
Environment: ISER_VM_LIST (another scenario list), ISER_VM_MODDIR (our .ko tree in the guest, default
build/<release>), ISER_VM_MEM, ISER_VM_CPUS, ISER_VM_BOOT_TIMEOUT,
ISER_VM_APPEND (extra kernel command line, e.g. slub_debug=FZPU),
ISER_VM_PAIR_CPUS, ISER_VM_PAIR_MEM, ISER_VM_PAIR_GRACE (two-guest rows).
EOF
}

kernels=()
wanted=()
all=0
full=0
while [ $# -gt 0 ]; do
	case $1 in
	--kernel | -k) [ $# -ge 2 ] || { usage >&2; exit 2; }; kernels+=("$2"); shift ;;
	--kernel=*) kernels+=("${1#*=}") ;;
	--scenario | -s) [ $# -ge 2 ] || { usage >&2; exit 2; }; IFS=, read -ra x <<<"$2"; wanted+=("${x[@]}"); shift ;;
	--scenario=*) IFS=, read -ra x <<<"${1#*=}"; wanted+=("${x[@]}") ;;
	--all) all=1 ;;
	--full) full=1 ;;
	--list) grep -vE '^[[:space:]]*(#|$)' "$VM_LIST"; exit 0 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "vm-check: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
[ ${#kernels[@]} -gt 0 ] || kernels=(6.1 6.12)

# the selected lines of scenarios.list, in list order
list=$(grep -vE '^[[:space:]]*(#|$)' "$VM_LIST")
if [ ${#wanted[@]} -gt 0 ]; then
	for s in "${wanted[@]}"; do
		echo "$list" | awk -v n="$s" '$1 == n { f = 1 } END { exit !f }' ||
			vm_die "unknown scenario '$s' (see tests/vm/vm-check.sh --list)"
	done
	selected=$(echo "$list" | awk -v w=" ${wanted[*]} " 'index(w, " " $1 " ")')
elif [ $full = 1 ]; then
	selected=$(echo "$list" | awk '$4 == "yes" || $4 == "full"')
elif [ $all = 1 ]; then
	selected=$list
else
	selected=$(echo "$list" | awk '$4 == "yes"')
fi

# prerequisites, all checked before the first boot
vm_check_tools
declare -A rels
for k in "${kernels[@]}"; do
	rels[$k]=$(vm_kernel_release "$k")
	vm_check_kernel "$k" "${rels[$k]}"
done

passed=0
failed=0
report() { # KERNEL NAME RESULT LOG
	if [ "$3" = PASS ]; then
		echo "PASS $1 $2"
		passed=$((passed + 1))
	else
		echo "FAIL $1 $2: ${3#FAIL: } (log: $4)"
		failed=$((failed + 1))
	fi
}

declare -A done_scen
on_line() { # progress line from the guest
	local kw name
	read -r kw name _ <<<"$1"
	if [ "$kw" = END ] && [ -z "${done_scen[$cur_kernel/$name]:-}" ]; then
		done_scen[$cur_kernel/$name]=1
		report "$cur_kernel" "$name" "$(cat "$job/$name/result" 2>/dev/null || echo 'FAIL: no result file')" "$job/$name/log"
	elif [ "$kw" = FATAL ]; then
		echo "vm-check: guest: ${1#FATAL }" >&2
	fi
}

# a two-guest scenario's initiator guest ended its scenario: the target
# guest may tear down (the result is reported once both guests stopped)
pair_line() {
	local kw name res
	read -r kw name res _ <<<"$1"
	if [ "$kw" = END ]; then
		echo "$res" >"$job/$name.sig/done"
	elif [ "$kw" = FATAL ]; then
		echo "vm-check: initiator guest: ${1#FATAL }" >&2
	fi
}

# pair_result KERNEL ROW: after vm_pair_boot, report the scenario: PASS
# only if both guests passed (each checked its own kernel log and teardown).
# The combined result replaces the initiator guest's result file.
pair_result() {
	local k=$1 name ires tres log reason=""
	read -r name _ <<<"$2"
	ires=$(cat "$job/$name/result" 2>/dev/null) ||
		ires="FAIL: $(vm_state_reason "$job")"
	tres=$(cat "$job/$name.peer/$name/result" 2>/dev/null) ||
		tres="FAIL: $VM_PEER_REASON"
	log=$job/$name/log
	[ -f "$log" ] || log=$job/boot$boot-console.log
	[ "$ires" = PASS ] || reason="initiator guest: ${ires#FAIL: }"
	if [ "$tres" != PASS ]; then
		reason="${reason:+$reason; }target guest: ${tres#FAIL: }"
		[ "$ires" = PASS ] && log=$job/$name.peer/$name/log
		[ -f "$log" ] || log=$job/$name.peer/console.log
	fi
	mkdir -p "$job/$name"
	if [ -z "$reason" ]; then
		echo PASS >"$job/$name/result"
	else
		echo "FAIL: $reason" >"$job/$name/result"
	fi
	report "$k" "$name" "$(cat "$job/$name/result")" "$log"
}

for k in "${kernels[@]}"; do
	rel=${rels[$k]}
	cur_kernel=$k
	job=$VM_OUT/logs/$k
	rm -rf "$job"
	mkdir -p "$job" || vm_die "cannot create $job"
	{
		[ -n "${ISER_VM_MODDIR:-}" ] && printf 'export ISER_VM_MODDIR=%q\n' "$ISER_VM_MODDIR"
		true
	} >"$job/job.env"
	# two-guest scenarios (TARGET "X@peer") each get a boot pair of their
	# own, after the single-guest ones, which share boots as before
	remaining=$(echo "$selected" | awk '$3 !~ /@peer$/')
	pairs=$(echo "$selected" | awk '$3 ~ /@peer$/')
	kstart=$(vm_now)
	boot=0
	while [ -n "$remaining" ]; do
		boot=$((boot + 1))
		echo "$remaining" >"$job/job.list"
		hard=$(echo "$remaining" | awk -v b="$VM_BOOT_TIMEOUT" -v s="$VM_SCENARIO_SLACK" \
			'{ t += $5 + s } END { print t + b + 60 }')
		vm_boot "$rel" "$job" "$hard" on_line
		why=$(vm_state_reason "$job")
		for f in console.log progress qemu.log guest.log; do
			[ -f "$job/$f" ] && mv "$job/$f" "$job/boot$boot-$f"
		done
		# a boot that ended early: the running scenario fails, the ones not
		# started yet get another boot (unless this boot got nowhere)
		progress=0
		[ -n "$VM_CURRENT" ] && progress=1
		while read -r name _; do
			[ -f "$job/$name/result" ] && progress=1
		done <<<"$remaining"
		next=""
		while read -r name _; do
			if [ -f "$job/$name/result" ]; then
				[ -n "${done_scen[$k/$name]:-}" ] ||
					report "$k" "$name" "$(cat "$job/$name/result")" "$job/$name/log"
			elif [ "$VM_STATE" = "done" ]; then
				report "$k" "$name" "FAIL: the guest finished without a result" "$job/boot$boot-guest.log"
			elif [ "$name" = "$VM_CURRENT" ] || [ $progress = 0 ]; then
				report "$k" "$name" "FAIL: $why" "$job/boot$boot-console.log"
			else
				next="$next$(echo "$remaining" | awk -v n="$name" '$1 == n')"$'\n'
				continue
			fi
			done_scen[$k/$name]=1
		done <<<"$remaining"
		remaining=$(echo "$next" | sed '/^$/d')
		[ -n "$remaining" ] &&
			echo "vm-check: $k: guest stopped ($VM_STATE) in ${VM_CURRENT:-set-up}; booting again for the other scenarios" >&2
	done
	while read -r row; do
		[ -n "$row" ] || continue
		boot=$((boot + 1))
		vm_pair_boot "$rel" "$job" "$row" pair_line
		# (before the renames: the reason may quote console.log)
		pair_result "$k" "$row"
		for f in console.log progress qemu.log guest.log; do
			[ -f "$job/$f" ] && mv "$job/$f" "$job/boot$boot-$f"
		done
	done <<<"$pairs"
	echo "# $k ($rel): $(echo "$selected" | wc -l) scenario(s), $boot boot(s), $(($(vm_now) - kstart)) s; logs in $job"
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
