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
# a boot pair of its own after the single-guest boots; those whose
# INITIATOR is "ours@san" boot the initiator guest from SAN (vm_san_boot).
# --list and --describe print the scenarios (--describe with the
# description in each body's header comment) and boot nothing.
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
       tests/vm/vm-check.sh --describe [NAME...]
  --kernel K     run on kernel K only (repeatable; default: 6.1 and 6.12)
  --scenario S   run scenario S only (repeatable, or a comma list; default:
                 the scenarios marked "yes" in tests/vm/scenarios.list)
  --full         the default scenarios and those marked "full" (make vm-full)
  --all          run every scenario of the list, the non-default ones too
  --list         print the scenarios and exit
  --describe [NAME...]
                 print each scenario (or the named ones: the rest of the
                 command line, names or comma lists) with its row and the
                 description in its body's header comment, and exit;
                 boots nothing
Environment: ISER_VM_TIMEOUT_SCALE (multiply every scenario's timeout,
e.g. 3 for the debug kernel), ISER_VM_LIST (another scenario list), ISER_VM_LOGS (where the
logs go, default build/vm/logs), ISER_VM_LOG_BUF_LEN (the guest kernel's
log buffer, default 64M), ISER_VM_MODDIR (our .ko tree in the guest, default
build/<release>), ISER_VM_RDMA (siw: every row over soft-iWARP, built by
make siw; one row: "siw:BODY" in the list), ISER_VM_MEM, ISER_VM_CPUS,
ISER_VM_BOOT_TIMEOUT,
ISER_VM_SCENARIO_SLACK (seconds a row may overrun its timeout for
teardown and checks, default 150), ISER_VM_ICOUNT (1: one vCPU under
qemu's icount, make bench's exact mode),
ISER_VM_APPEND (extra kernel command line, e.g. slub_debug=FZPU),
ISER_VM_PAIR_CPUS, ISER_VM_PAIR_MEM, ISER_VM_PAIR_GRACE (two-guest rows),
ISER_VM_SAN_BOOT_TIMEOUT (boot-from-SAN rows: seconds until the booted
root runs, default 300), ISER_VM_SAN_BAD_SETTLE (seconds a failed boot's
guest is kept for late kernel reports, default 25), ISER_VM_IPXE (iPXE
image of the --ibft rows, default /boot/ipxe.lkrn).
EOF
}

# describe_header BODYFILE: the body's header comment, its description:
# the leading "#" block after the SPDX line and the shellcheck
# directives, with "# " stripped and without leading or trailing empty
# lines
describe_header() {
	awk 'NR == 1 && /^(#!|# SPDX-License-Identifier:)/ { next }
		n == 0 && /^# shellcheck / { next }
		/^#/ { sub(/^# ?/, ""); l[++n] = $0; next }
		{ exit }
		END {
			s = 1
			while (s <= n && l[s] == "") s++
			e = n
			while (e >= s && l[e] == "") e--
			for (i = s; i <= e; i++) print l[i]
		}' "$1"
}

# describe [NAME...]: each row of the list (or the named ones, in the
# order given): its fields, then its body's description indented by four
# spaces; an empty line between rows. Boots nothing, needs no root.
describe() {
	local rows sel="" n row sep="" name ini tgt def tmo body args f text
	[ -r "$VM_LIST" ] || vm_die "no scenario list: $VM_LIST is missing or unreadable"
	rows=$(grep -vE '^[[:space:]]*(#|$)' "$VM_LIST")
	[ -n "$rows" ] || vm_die "the scenario list $VM_LIST has no scenarios"
	if [ $# -eq 0 ]; then
		sel=$rows
	else
		for n in "$@"; do
			[ -n "$n" ] || vm_die "an empty scenario name was given"
			row=$(echo "$rows" | awk -v n="$n" '$1 == n { print; exit }')
			[ -n "$row" ] || vm_die "unknown scenario '$n' (see tests/vm/vm-check.sh --list)"
			sel="$sel$row"$'\n'
		done
	fi
	while read -r name ini tgt def tmo body args; do
		[ -n "$name" ] || continue
		printf '%s' "$sep"
		sep=$'\n'
		f=$VM_DIR/scenarios/${body#siw:}.sh
		echo "$name"
		echo "  initiator $ini, target $tgt, default $def, timeout $tmo s"
		echo "  body: $body${args:+ $args} (tests/vm/scenarios/${body#siw:}.sh)"
		text=""
		[ ! -f "$f" ] || text=$(describe_header "$f")
		if [ -n "$text" ]; then
			echo "$text" | awk '{ print ($0 == "" ? "" : "    " $0) }'
		elif [ -f "$f" ]; then
			echo "  (no description: tests/vm/scenarios/${body#siw:}.sh has no header comment)"
		else
			echo "  (no description: tests/vm/scenarios/${body#siw:}.sh does not exist)"
		fi
	done <<<"$sel"
}

kernels=()
wanted=()
all=0
full=0
default_set=0
while [ $# -gt 0 ]; do
	case $1 in
	--kernel | -k) [ $# -ge 2 ] || { usage >&2; exit 2; }; kernels+=("$2"); shift ;;
	--kernel=*) kernels+=("${1#*=}") ;;
	--scenario | -s) [ $# -ge 2 ] || { usage >&2; exit 2; }; IFS=, read -ra x <<<"$2"; wanted+=("${x[@]}"); shift ;;
	--scenario=*) IFS=, read -ra x <<<"${1#*=}"; wanted+=("${x[@]}") ;;
	--all) all=1 ;;
	--full) full=1 ;;
	--list) grep -vE '^[[:space:]]*(#|$)' "$VM_LIST"; exit 0 ;;
	--describe)
		shift
		dnames=()
		for s in "$@"; do
			IFS=, read -ra x <<<"$s"
			dnames+=("${x[@]}")
		done
		describe "${dnames[@]}"
		exit 0
		;;
	-h | --help) usage; exit 0 ;;
	*) echo "vm-check: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
[ ${#kernels[@]} -gt 0 ] || kernels=(6.1 6.12)

# the selected lines of scenarios.list, in list order
[ -r "$VM_LIST" ] || vm_die "no scenario list: $VM_LIST is missing or unreadable"
list=$(grep -vE '^[[:space:]]*(#|$)' "$VM_LIST")
[ -n "$list" ] || vm_die "the scenario list $VM_LIST has no scenarios"
while read -r name _ _ def _; do
	case $def in
	yes | full | no | yes:6.1 | yes:6.12) ;;
	*) vm_die "$VM_LIST: scenario '$name' has a bad DEFAULT '$def' (yes, yes:6.1, yes:6.12, full or no)" ;;
	esac
done <<<"$list"
if [ ${#wanted[@]} -gt 0 ]; then
	for s in "${wanted[@]}"; do
		[ -n "$s" ] || vm_die "an empty scenario name was given"
		echo "$list" | awk -v n="$s" '$1 == n { f = 1 } END { exit !f }' ||
			vm_die "unknown scenario '$s' (see tests/vm/vm-check.sh --list)"
	done
	selected=$(echo "$list" | awk -v w=" ${wanted[*]} " 'index(w, " " $1 " ")')
elif [ $full = 1 ]; then
	selected=$(echo "$list" | awk '$4 ~ /^yes(:|$)/ || $4 == "full"')
elif [ $all = 1 ]; then
	selected=$list
else
	# "yes:6.1" rows are default on that kernel only (the others run
	# them with --full): see the loop over the kernels below
	selected=$(echo "$list" | awk '$4 ~ /^yes(:|$)/')
	default_set=1
fi
[ -n "$selected" ] || vm_die "no scenario selected from $VM_LIST"
# every selected row is well formed and its body exists
san_rows=0
while read -r name ini tgt _ tmo body _; do
	[ -n "$body" ] || vm_die "$VM_LIST: scenario '$name' has too few fields"
	case $tmo in '' | *[!0-9]*) vm_die "$VM_LIST: scenario '$name' has a bad timeout '$tmo'" ;; esac
	[ -f "$VM_DIR/scenarios/${body#siw:}.sh" ] ||
		vm_die "$VM_LIST: scenario '$name' names a body that does not exist: tests/vm/scenarios/${body#siw:}.sh"
	# the guest sources the body and goes on past a syntax error
	syntax=$(bash -n "$VM_DIR/scenarios/${body#siw:}.sh" 2>&1) ||
		vm_die "scenario '$name': tests/vm/scenarios/${body#siw:}.sh does not parse: ${syntax%%$'\n'*}"
	case $body:$tgt in
	siw:*@peer) vm_die "$VM_LIST: scenario '$name': siw rows run in one guest only" ;;
	esac
	case $ini:$tgt in
	*@san:*@peer) san_rows=1 ;;
	*@san:*) vm_die "$VM_LIST: scenario '$name': a boot-from-SAN initiator (X@san) needs a target in the other guest (X@peer)" ;;
	esac
	case $ini in
	*@san) [ "$ini" = ours@san ] ||
		vm_die "$VM_LIST: scenario '$name': only our initiator boots from SAN (ours@san, not $ini)" ;;
	esac
done <<<"$selected"
[ -z "$(echo "$selected" | awk '{ print $1 }' | sort | uniq -d)" ] ||
	vm_die "$VM_LIST: a scenario name appears twice: $(echo "$selected" | awk '{ print $1 }' | sort | uniq -d | paste -sd ' ' -)"
# a slower kernel (the debug kernel of make check-debug) gets longer timeouts
scale=${ISER_VM_TIMEOUT_SCALE:-1}
case $scale in '' | *[!0-9]* | 0) vm_die "ISER_VM_TIMEOUT_SCALE must be a whole number from 1 (is '$scale')" ;; esac
[ "$scale" = 1 ] || selected=$(echo "$selected" | awk -v s="$scale" '{ $5 = $5 * s; print }')

# where the logs go: inside the repository, the guest's only share
logs=$(realpath -m "${ISER_VM_LOGS:-$VM_OUT/logs}")
case $logs/ in
"$VM_REPO"/*) ;;
*) vm_die "ISER_VM_LOGS=$logs is outside the repository ($VM_REPO), which is all the guest sees" ;;
esac

# prerequisites, all checked before the first boot
vm_check_tools
[ "$san_rows" = 0 ] || vm_san_check_tools
declare -A rels
for k in "${kernels[@]}"; do
	rels[$k]=$(vm_kernel_release "$k")
	vm_check_kernel "$k" "${rels[$k]}"
done

passed=0
failed=0
# The seconds the row took in its guest (run-job.sh writes them, with its
# teardown and checks) end a PASS line, and follow the log on a FAIL
# line, so that a make check output says where its time went.
report() { # KERNEL NAME RESULT LOG
	local secs
	secs=$(cat "$job/$2/seconds" 2>/dev/null)
	if [ "$3" = PASS ]; then
		echo "PASS $1 $2${secs:+ ($secs s)}"
		passed=$((passed + 1))
	else
		echo "FAIL $1 $2: ${3#FAIL: } (log: $4${secs:+, $secs s})"
		failed=$((failed + 1))
	fi
}

declare -A done_scen
# progress from the guest; results are reported after the boot, once the
# host has checked the whole console log as well
on_line() {
	local kw name res secs
	read -r kw name res secs _ <<<"$1"
	if [ "$kw" = END ]; then
		echo "vm-check: $cur_kernel: $name ended ($res, $secs)" >&2
	elif [ "$kw" = FATAL ]; then
		echo "vm-check: guest: ${1#FATAL }" >&2
	fi
}

# boot_fail KERNEL WHAT REASON LOG: a failure of a boot as a whole (not of a
# scenario): counted as a failed test
boot_fail() {
	echo "FAIL $1 $2: $3 (log: $4)"
	failed=$((failed + 1))
}

# console_check JOB CONSOLE BOOTLABEL NAMES...: after a boot, fold the
# console's bad lines into the results of the scenarios NAMES that ran in
# it (a PASS whose window has one becomes a FAIL), and fail the boot for
# bad lines outside every scenario.
console_check() {
	local j=$1 con=$2 label=$3 scan n lines res
	shift 3
	scan=$(vm_console_scan "$con")
	[ -n "$scan" ] || return 0
	for n in "$@"; do
		lines=$(echo "$scan" | awk -F '\t' -v n="$n" '$1 == n { print $2 }' | head -n 2 | paste -sd ';' -)
		[ -n "$lines" ] || continue
		res=$(cat "$j/$n/result" 2>/dev/null)
		case $res in
		*"console: "*) ;;
		PASS) echo "FAIL: console: $lines" >"$j/$n/result" ;;
		?*) echo "$res; console: $lines" >"$j/$n/result" ;;
		esac
	done
	lines=$(echo "$scan" | awk -F '\t' '$1 == "-" { print $2 }' | head -n 3 | paste -sd ';' -)
	[ -z "$lines" ] || boot_fail "$cur_kernel" "$label" "kernel log outside every scenario: $lines" "$con"
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
# only if both guests passed (each checked its own kernel log and teardown),
# both consoles are free of bad kernel log lines, and both guests ended
# with a clean DONE (a late oops in either fails the row).  The combined
# result replaces the initiator guest's result file.
pair_result() {
	local k=$1 name ires tres log reason="" pjob scan
	read -r name _ <<<"$2"
	pjob=$job/$name.peer
	ires=$(cat "$job/$name/result" 2>/dev/null) ||
		ires="FAIL: $(vm_state_reason "$job")"
	tres=$(cat "$pjob/$name/result" 2>/dev/null) ||
		tres="FAIL: $VM_PEER_REASON"
	log=$job/$name/log
	[ -f "$log" ] || log=$job/boot$boot-console.log
	[ "$ires" = PASS ] || reason="initiator guest: ${ires#FAIL: }"
	if [ "$tres" != PASS ]; then
		reason="${reason:+$reason; }target guest: ${tres#FAIL: }"
		[ "$ires" = PASS ] && log=$pjob/$name/log
		[ -f "$log" ] || log=$pjob/console.log
	fi
	# what the result files cannot say: the consoles, and how each guest ended
	scan=$(vm_console_scan "$job/console.log" | cut -f 2 | head -n 2 | paste -sd ';' -)
	[ -z "$scan" ] || reason="${reason:+$reason; }initiator guest console: $scan"
	scan=$(vm_console_scan "$pjob/console.log" | cut -f 2 | head -n 2 | paste -sd ';' -)
	[ -z "$scan" ] || reason="${reason:+$reason; }target guest console: $scan"
	if [ "$ires" = PASS ] && { [ "$VM_STATE" != done ] || [ "$VM_DONE_RC" != 0 ]; }; then
		reason="${reason:+$reason; }initiator guest did not end cleanly: $(cat "$job/final" 2>/dev/null || vm_state_sentence "$job")"
	fi
	if [ "$tres" = PASS ] && { [ "$VM_PEER_STATE" != done ] || [ "$(cat "$pjob/done-rc" 2>/dev/null)" != 0 ]; }; then
		reason="${reason:+$reason; }target guest did not end cleanly: $(cat "$pjob/final" 2>/dev/null || echo "$VM_PEER_REASON")"
	fi
	mkdir -p "$job/$name"
	if [ -z "$reason" ]; then
		echo PASS >"$job/$name/result"
	else
		echo "FAIL: $reason" >"$job/$name/result"
	fi
	report "$k" "$name" "$(cat "$job/$name/result")" "$log"
	done_scen[$k/$name]=1
}

# a boot-from-SAN boot's progress, for the one who waits
san_line() {
	case $1 in
	UP* | MARKER* | FLAP* | "CHECK FAIL"*) echo "vm-check: $cur_kernel: booted from SAN: $1" >&2 ;;
	esac
}

# san_result KERNEL ROW: after vm_san_boot, report the boot-from-SAN
# scenario.  The initiator guest runs no scenario of the rig: its verdict
# comes from the lines its root's init (tests/vm/sanboot/rootinit.sh)
# sent on each boot, checked here against what must hold: the root is a
# disk of the only iSCSI session, to our target's portal, on a SCSI host of
# the iser transport, served by our ib_iser and iser_dm (the srcversions
# of the modules built for the kernel); iscsid took the session over; boot
# 1 wrote a marker and boot 2 found the same one; no check of the init
# failed; the kernel log (the init's dmesg and the host's copy of the
# console) has no bad line and no taint flag but O and E; each boot ended
# with DONE.  The target guest's half and its console are judged as in
# pair_result.
san_result() {
	local k=$1 name ini tgt def tmo body rest pjob reason="" b bj p con ires tres
	local log scan srcini srcdm line tok1="" tok2="" taint flap=0 secs=0 x
	local bad="" summary="" ibft=0
	read -r name ini tgt def tmo body rest <<<"$2"
	[[ " $rest " != *" --ibft "* ]] || ibft=1
	if [[ " $rest " == *" --flap "* ]]; then
		flap=1
		secs=$(echo " $rest " | sed -n 's/.* --flap \([0-9]*\) .*/\1/p')
	fi
	if [[ " $rest " == *" --bad "* ]]; then
		bad=$(echo " $rest " | sed -n 's/.* --bad \([^ ]*\) .*/\1/p')
	fi
	pjob=$job/$name.peer
	log=$job/$name.boot1/console.log
	add() { reason="${reason:+$reason; }$*"; }
	srcini=$(modinfo -F srcversion "${ISER_VM_MODDIR:-$VM_REPO/build/$rel}/drivers/initiator/ib_iser.ko" 2>/dev/null)
	srcdm=$(modinfo -F srcversion "${ISER_VM_MODDIR:-$VM_REPO/build/$rel}/drivers/core/iser_dm.ko" 2>/dev/null)
	if [ -n "$VM_SAN_ERR" ]; then
		add "$VM_SAN_ERR"
	fi
	if [ -n "$bad" ]; then
		if [[ " $rest " == *" --dracut "* ]]; then
			san_bad_boots "$name" "$bad" dracut
		else
			san_bad_boots "$name" "$bad"
		fi
	fi
	for b in 1 2; do
		[ -z "$bad" ] || break
		bj=$job/$name.boot$b
		[ -n "$VM_SAN_ERR" ] && break
		if [ ! -d "$bj" ] || [ ! -f "$bj/state" ]; then
			add "boot $b did not run"
			break
		fi
		p=$(tr -d '\r' <"$bj/progress" 2>/dev/null)
		con=$bj/console.log
		if [ "$(cat "$bj/state")" != done ]; then
			x=$(tr -d '\r' <"$con" 2>/dev/null | grep -a -E 'iser: ERROR|boot from SAN failed|Gave up waiting|ALERT!' | tail -n 2 | paste -sd ' ' -)
			add "boot $b: $(cat "$bj/state-reason")${x:+ (console: $x)}"
			log=$con
		fi
		line=$(echo "$p" | sed -n 's/^@@ ROOT //p' | head -n 1)
		if [ -z "$line" ]; then
			[ "$(cat "$bj/state")" != done ] || add "boot $b: the root reported no ROOT line"
		else
			echo " $line " | grep -q ' dev=/dev/sd[a-z]* ' || add "boot $b: the root is not a SCSI disk ($line)"
			echo " $line " | grep -q ' sessions=1 ' || add "boot $b: not exactly one iSCSI session ($line)"
			echo " $line " | grep -q " target=$VM_SAN_TARGET_IQN " || add "boot $b: the root is not a disk of $VM_SAN_TARGET_IQN ($line)"
			echo " $line " | grep -q " portal=$VM_SAN_TGT_IP:3260 " || add "boot $b: the session is not to $VM_SAN_TGT_IP:3260 ($line)"
			echo " $line " | grep -q ' scsi_host=iscsi_iser ' || add "boot $b: the session's SCSI host is not iser's ($line)"
			echo " $line " | grep -q " ib_iser=$srcini " || add "boot $b: the loaded ib_iser is not ours (srcversion $srcini) ($line)"
			echo " $line " | grep -q " iser_dm=$srcdm " || add "boot $b: the loaded iser_dm is not ours (srcversion $srcdm) ($line)"
		fi
		if [ "$(cat "$bj/state")" = done ]; then
			echo "$p" | grep -q '^@@ SESSION iser: ' ||
				add "boot $b: iscsid lists no iser session ($(echo "$p" | sed -n 's/^@@ SESSION //p'))"
			echo "$p" | grep -q '^@@ KLOG clean' ||
				add "boot $b: $(echo "$p" | grep -m1 '^@@ KLOG' | sed 's/^@@ //')"
			taint=$(echo "$p" | sed -n 's/^@@ TAINT \([0-9]*\).*/\1/p' | head -n 1)
			if [ -z "$taint" ]; then
				add "boot $b: no TAINT line"
			elif [ $((taint & ~((1 << 12) | (1 << 13)))) != 0 ]; then
				add "boot $b: the kernel was tainted ($taint)"
			fi
			[ "$(cat "$bj/done-rc" 2>/dev/null)" = 0 ] || add "boot $b: no DONE 0"
			# --ibft: the firmware's table named the target, the
			# initiator and the address, and our script used it
			if [ $ibft = 1 ]; then
				line=$(echo "$p" | sed -n 's/^@@ IBFT //p' | head -n 1)
				[ " $line " = " target=$VM_SAN_TARGET_IQN initiator=$VM_SAN_INITIATOR_IQN ip=$VM_SAN_INI_IP " ] ||
					add "boot $b: the iBFT is not iPXE's (${line:-no IBFT line})"
				tr -d '\r' <"$con" | grep -aq "iser: logging in over iSER to the iBFT targets" ||
					add "boot $b: the initramfs did not log in from the iBFT"
				tr -d '\r' <"$con" | grep -aq "iser: soft-RoCE on eth[0-9]*, the iBFT's NIC" ||
					add "boot $b: soft-RoCE was not put on the iBFT's NIC"
			fi
		fi
		while read -r x; do
			[ -n "$x" ] && add "boot $b: ${x#@@ CHECK FAIL: }"
		done <<<"$(echo "$p" | grep '^@@ CHECK FAIL: ')"
		scan=$(vm_console_scan "$con" | cut -f 2 | head -n 2 | paste -sd ';' -)
		[ -z "$scan" ] || add "boot $b console: $scan"
		if [ $b = 1 ]; then
			tok1=$(echo "$p" | sed -n 's/^@@ MARKER wrote //p' | head -n 1)
			[ -n "$tok1" ] || { [ "$(cat "$bj/state")" != done ] || add "boot 1 wrote no marker"; }
			if [ $flap = 1 ] && [ "$(cat "$bj/state")" = done ]; then
				line=$(echo "$p" | sed -n 's/^@@ FLAP //p' | head -n 1)
				if [ -z "$line" ]; then
					add "boot 1: no FLAP line"
				else
					x=$(echo " $line " | sed -n 's/.* conn_errors=\([0-9]*\) .*/\1/p')
					[ "${x:-0}" -ge 1 ] || add "boot 1: the link outage broke no connection ($line)"
					x=$(echo " $line " | sed -n 's/.* longest_write=\([0-9]*\)s .*/\1/p')
					[ "${x:-0}" -ge $((secs / 2)) ] ||
						add "boot 1: no write waited for the ${secs} s outage ($line)"
					echo "$line" | grep -q 'state=iSCSISessionState:LOGGED_IN' ||
						add "boot 1: the session is not logged in after the outage ($line)"
				fi
			fi
		else
			tok2=$(echo "$p" | sed -n 's/^@@ MARKER //p' | head -n 1)
			if [ "$(cat "$bj/state")" = done ] && [ "$tok2" != "found $tok1" ]; then
				add "boot 2: marker ${tok2:-not reported}, boot 1 wrote '$tok1'"
			fi
			if [ $flap = 1 ] && [ "$(cat "$bj/state")" = done ]; then
				echo "$p" | grep -q '^@@ FLAPDATA ok' ||
					add "boot 2: the files written across the outage were not verified"
			fi
		fi
	done
	# the target guest
	tres=$(cat "$pjob/$name/result" 2>/dev/null) || tres="FAIL: $VM_PEER_REASON"
	if [ "$tres" != PASS ]; then
		add "target guest: ${tres#FAIL: }"
		[ -n "$reason" ] || log=$pjob/$name/log
	fi
	scan=$(vm_console_scan "$pjob/console.log" | cut -f 2 | head -n 2 | paste -sd ';' -)
	[ -z "$scan" ] || add "target guest console: $scan"
	if [ "$tres" = PASS ] && { [ "$VM_PEER_STATE" != done ] || [ "$(cat "$pjob/done-rc" 2>/dev/null)" != 0 ]; }; then
		add "target guest did not end cleanly: $(cat "$pjob/final" 2>/dev/null || echo "$VM_PEER_REASON")"
	fi
	mkdir -p "$job/$name"
	if [ -z "$reason" ]; then
		echo PASS >"$job/$name/result"
	else
		echo "FAIL: $reason" >"$job/$name/result"
	fi
	{
		[ -z "$summary" ] || echo "$summary"
		for b in 1 2; do
			[ -n "$bad" ] && break
			[ -f "$job/$name.boot$b/progress" ] || continue
			echo "--- boot $b: $(cat "$job/$name.boot$b/state" 2>/dev/null)"
			tr -d '\r' <"$job/$name.boot$b/progress"
		done
	} >"$job/$name/log"
	report "$k" "$name" "$(cat "$job/$name/result")" "$log"
	done_scen[$k/$name]=1
}

# san_bad_boots NAME CASE,... [dracut]: within san_result, judge the
# boots of "sanboot --bad" (host.sh vm_san_boot, one boot per case, in
# order, in NAME.bootN/), adding to san_result's reason and summary: each
# boot as san_bad_tools (initramfs-tools) or san_bad_dracut says, and for
# both, a console without a bad kernel line (VM_BAD_KLOG) and a guest
# that stayed in the shell until the host stopped it.
san_bad_boots() {
	local name=$1 c b=0 bj con st tshell errs x line
	tm() { sed -n "s/^$1 //p" "$bj/times" 2>/dev/null | head -n 1; }
	e() { errs="${errs:+$errs; }$*"; }
	for c in ${2//,/ }; do
		b=$((b + 1))
		bj=$job/$name.boot$b
		[ -z "$VM_SAN_ERR" ] || break
		if [ ! -f "$bj/state" ]; then
			add "bad $c: did not boot"
			continue
		fi
		vm_san_bad_case "$c"
		con=$bj/console.log
		st=$(cat "$bj/state")
		errs=""
		tshell=$(tm shell)
		if [ "${3:-}" = dracut ]; then
			san_bad_dracut
		else
			san_bad_tools
		fi
		[ -z "$tshell" ] || [ "$st" = stopped ] ||
			e "the guest left the shell: $(cat "$bj/state-reason")"
		x=$(vm_console_scan "$con" | cut -f 2 | head -n 2 | paste -sd ';' -)
		[ -z "$x" ] || e "console: $x"
		line="bad $c: $([ -z "$errs" ] && echo ok || echo FAIL): $line"
		summary="${summary:+$summary
}$line"
		echo "$VM_PROG: $cur_kernel: $line" >&2
		[ -z "$errs" ] || { add "bad $c: $errs"; log=$con; }
	done
}

# san_bad_tools: one boot of san_bad_boots with the initramfs-tools
# image.  Its console must show our script's panic line, "iser: boot from
# SAN failed: " holding the text the case expects (host.sh
# vm_san_bad_case), then Debian's "(initramfs) " shell prompt (within
# 5 s); the wait that failed must have ended within its bound (plus 5 s:
# the host polls the console once a second and the script prints
# iscsistart's output first) and, for the RDMA wait, not before it.
# Sets line (what the summary says of the boot).
san_bad_tools() {
	local tfrom tpanic msg d=""
	tfrom=$(tm "$VM_SAN_BAD_FROM")
	tpanic=$(tm panic)
	msg=$(tr -d '\r' <"$con" 2>/dev/null | grep -a -m1 'iser: boot from SAN failed: ' | sed 's/.*iser: boot from SAN failed: //')
	if [ -z "$tpanic" ]; then
		x=$(tr -d '\r' <"$con" 2>/dev/null | grep -a 'iser: ' | tail -n 2 | paste -sd ' ' -)
		e "no 'iser: boot from SAN failed' line${x:+ (last: $x)}"
	elif [[ $msg != *"$VM_SAN_BAD_EXPECT"* ]]; then
		e "the console says '$msg', without '$VM_SAN_BAD_EXPECT'"
	fi
	if [ -z "$tfrom" ]; then
		e "the console shows no start of the $VM_SAN_BAD_FROM wait"
	elif [ -n "$tpanic" ]; then
		d=$((tpanic - tfrom))
		[ "$d" -le $((VM_SAN_BAD_BOUND + 5)) ] ||
			e "the $VM_SAN_BAD_FROM wait failed after ${d}s, its bound is ${VM_SAN_BAD_BOUND}s"
		[ "$d" -ge "$VM_SAN_BAD_MIN" ] ||
			e "the $VM_SAN_BAD_FROM wait failed after ${d}s, it must last ${VM_SAN_BAD_BOUND}s"
	fi
	if [ -z "$tshell" ]; then
		e "no (initramfs) shell: $(cat "$bj/state-reason")"
	elif [ -n "$tpanic" ] && [ $((tshell - tpanic)) -gt 5 ]; then
		e "the shell came $((tshell - tpanic))s after the panic line"
	fi
	# for the record: what iscsistart said, the kernel's last word
	x=$(tr -d '\r' <"$con" 2>/dev/null | grep -a -E 'initiator reported error|iscsistart killed' | tail -n 1 | sed 's/^ *//')
	line="panic ${tpanic:-?}s after qemu start, ${d:-?}s after the $VM_SAN_BAD_FROM wait began (bound ${VM_SAN_BAD_BOUND}s), shell ${tshell:-?}s; '${msg:-}'${x:+; $x}"
}

# san_bad_dracut: one boot of san_bad_boots with the dracut image.  The
# login is dracut's (discovery over TCP, then iscsiadm), so the console
# must show the line that names the cause (dracut's, iscsiadm's, or our
# module's die: host.sh vm_san_bad_case, VM_SAN_BAD_DR_EXPECT), no
# successful login, dracut's "Could not boot." (or "FATAL" from a die)
# and its emergency shell within 10 s, within rd.retry= seconds of the
# initqueue plus the boot (VM_SAN_DR_BOUND seconds after qemu started).
# Sets line.
san_bad_dracut() {
	local tdp
	tdp=$(tm dpanic)
	tr -d '\r' <"$con" 2>/dev/null | grep -aqF -- "$VM_SAN_BAD_DR_EXPECT" ||
		e "no line naming the cause ('$VM_SAN_BAD_DR_EXPECT') on the console"
	x=$(tr -d '\r' <"$con" 2>/dev/null | grep -a -m1 '\] successful\.')
	[ -z "$x" ] || e "a login succeeded: $x"
	if [ -z "$tdp" ]; then
		e "no 'Could not boot.' or 'dracut: FATAL:' line"
	elif [ "$tdp" -gt "$VM_SAN_DR_BOUND" ]; then
		e "dracut gave up ${tdp}s after qemu started, the bound is ${VM_SAN_DR_BOUND}s"
	fi
	if [ -z "$tshell" ]; then
		e "no dracut shell: $(cat "$bj/state-reason")"
	elif [ -n "$tdp" ] && [ $((tshell - tdp)) -gt 10 ]; then
		e "the shell came $((tshell - tdp))s after dracut gave up"
	fi
	line="(dracut) gave up ${tdp:-?}s after qemu start (bound ${VM_SAN_DR_BOUND}s), shell ${tshell:-?}s; '$(tr -d '\r' <"$con" 2>/dev/null | grep -a -m1 -oF -- "$VM_SAN_BAD_DR_EXPECT")'"
}

# kernel_rows RELEASE: the selected rows that run on it; in the default
# set, "yes" rows and "yes:X.Y" rows on kernel X.Y
all_selected=$selected
# a12_table KERNEL JOBDIR < selected rows: the Annex A12 matrix of the
# cells that ran (scenarios/a12.sh logs one line per cell: cell, expected,
# seen, verdict), as comment lines after the kernel's results
a12_table() {
	local k=$1 job=$2 name line n=0
	while read -r name _; do
		[[ $name == *a12-* ]] || continue
		[ "$n" -gt 0 ] || echo "# $k: Annex A12 matrix (cell | expected | seen | verdict)"
		n=$((n + 1))
		line=$(grep -ah 'a12: cell ' "$job/$name/log" 2>/dev/null | tail -n 1)
		[ -n "$line" ] || line="a12: cell (no table line: the row stopped before its check) | FAIL"
		echo "# $k $name: ${line#*a12: cell }"
	done
}

kernel_rows() {
	if [ "$default_set" = 1 ]; then
		echo "$all_selected" | awk -v mm="$(echo "$1" | cut -d. -f1-2)" \
			'$4 == "yes" || $4 == "yes:" mm'
	else
		echo "$all_selected"
	fi
}
for k in "${kernels[@]}"; do
	[ -n "$(kernel_rows "${rels[$k]}")" ] ||
		vm_die "no scenario of the default set in $VM_LIST runs on $k"
done
for k in "${kernels[@]}"; do
	rel=${rels[$k]}
	cur_kernel=$k
	job=$logs/$k
	selected=$(kernel_rows "$rel")
	rm -rf "$job"
	mkdir -p "$job" || vm_die "cannot create $job"
	{
		[ -n "${ISER_VM_MODDIR:-}" ] && printf 'export ISER_VM_MODDIR=%q\n' "$ISER_VM_MODDIR"
		[ -n "${ISER_VM_RDMA:-}" ] && printf 'export ISER_VM_RDMA=%q\n' "$ISER_VM_RDMA"
		true
	} >"$job/job.env"
	# two-guest scenarios (TARGET "X@peer") each get a boot pair of their
	# own, after the single-guest ones, which share boots as before
	remaining=$(echo "$selected" | awk '$3 !~ /@peer$/')
	pairs=$(echo "$selected" | awk '$3 ~ /@peer$/')
	kstart=$(vm_now)
	boot=0
	noup=0
	while [ -n "$remaining" ]; do
		boot=$((boot + 1))
		echo "$remaining" >"$job/job.list"
		hard=$(echo "$remaining" | awk -v b="$VM_BOOT_TIMEOUT" -v s="$VM_SCENARIO_SLACK" \
			'{ t += $5 + s } END { print t + b + 60 }')
		vm_boot "$rel" "$job" "$hard" on_line
		why=$(vm_state_reason "$job")
		for f in console.log progress qemu.log guest.log done-rc final final-dmesg; do
			[ -f "$job/$f" ] && mv "$job/$f" "$job/boot$boot-$f"
		done
		# A guest kernel that never reached the rig's init (a panic while
		# booting, before any module of ours is loaded: they come from the
		# share, scenario by scenario) ran none of the rows: boot once more
		# instead of failing them all. A second such boot fails them.
		if [ "$VM_UP" = 0 ] && [ "$noup" = 0 ]; then
			noup=1
			echo "vm-check: $k: boot$boot never came up, no row ran ($why); booting again (console: $job/boot$boot-console.log)"
			continue
		fi
		# the scenarios of this boot that left a result: the console may
		# still turn a PASS into a FAIL
		ran=()
		while read -r name _; do
			[ -f "$job/$name/result" ] && ran+=("$name")
		done <<<"$remaining"
		console_check "$job" "$job/boot$boot-console.log" "boot$boot" "${ran[@]}"
		# a boot that ended early: the running scenario fails, the ones not
		# started yet get another boot (unless this boot got nowhere)
		progress=0
		[ -n "$VM_CURRENT" ] && progress=1
		[ ${#ran[@]} -gt 0 ] && progress=1
		next=""
		while read -r name _; do
			if [ -f "$job/$name/result" ]; then
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
		# the boot itself must end cleanly: a guest that died or hung after
		# its last scenario, or whose final check found a late oops or taint,
		# fails the run even though every scenario passed
		if [ "$VM_STATE" != done ] && [ -z "$VM_CURRENT" ] && [ $progress = 1 ]; then
			boot_fail "$k" "boot$boot" "after the last scenario: $why" "$job/boot$boot-console.log"
		elif [ "$VM_STATE" = done ] && [ "$VM_DONE_RC" != 0 ]; then
			boot_fail "$k" "boot$boot" "final check: $(cat "$job/boot$boot-final" 2>/dev/null || echo "run-job.sh exited with status $VM_DONE_RC")" \
				"$job/boot$boot-final-dmesg"
		fi
		remaining=$(echo "$next" | sed '/^$/d')
		[ -n "$remaining" ] &&
			echo "vm-check: $k: guest stopped ($VM_STATE) in ${VM_CURRENT:-set-up}; booting again for the other scenarios" >&2
	done
	while read -r row; do
		[ -n "$row" ] || continue
		boot=$((boot + 1))
		case $(echo "$row" | awk '{ print $2 }') in
		*@san)
			vm_san_boot "$rel" "$job" "$row" san_line
			san_result "$k" "$row"
			continue
			;;
		esac
		vm_pair_boot "$rel" "$job" "$row" pair_line
		# (before the renames: the reason may quote console.log)
		pair_result "$k" "$row"
		for f in console.log progress qemu.log guest.log done-rc final final-dmesg; do
			[ -f "$job/$f" ] && mv "$job/$f" "$job/boot$boot-$f"
		done
	done <<<"$pairs"
	# every selected scenario must have come back with a result
	while read -r name _; do
		[ -n "${done_scen[$k/$name]:-}" ] ||
			report "$k" "$name" "FAIL: no result came back for it" "$job"
	done <<<"$selected"
	a12_table "$k" "$job" <<<"$selected"
	echo "# $k ($rel): $(echo "$selected" | wc -l) scenario(s), $boot boot(s), $(($(vm_now) - kstart)) s; logs in $job"
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
