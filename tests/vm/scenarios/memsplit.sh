# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Kernel memory of one idle session, each side on its own, in the two-guest
# mode (TARGET column "X@peer"):
#   memsplit [ROUNDS]   (2 or more, default 4)
# bench.sh's memory figure has the initiator and the target in one guest,
# so it gives only their sum, and the difference of two pairings gives only
# a difference of two initiators.  Here each guest measures its own side:
# ROUNDS times, the initiator guest logs in and out, and both
# guests take a snapshot right before the login and one after it, before
# any I/O, caches dropped (memsnap below).  Each guest then logs, per
# round, the drop in free memory and what it is made of:
#   slab     unreclaimable slab (SUnreclaim: kmalloc, kmem_caches, and
#            kmalloc's large allocations, which the page allocator serves
#            but meminfo counts here)
#   vmalloc  VmallocUsed (soft-RoCE's queues are vmalloc'd: rxe_queue_init)
#   other    the rest: pages taken straight from the page allocator
#            (alloc_pages, alloc_pages_exact), page tables, stacks
# and the slab caches and the vmalloc callers that grew most
# (/proc/slabinfo, /proc/vmallocinfo).  Two figures per side: the first
# session after the modules were loaded, which also pays what stays once
# the device has been used (the CQ pool's CQs stay with the device after
# logout), and one more session (the median of rounds 2 to ROUNDS), what
# each further session costs.  They go to $VM_SCEN_DIR/memsplit.json
# ({"side", "module", "rounds": [...], "first_kb", "median_kb"});
# tests/vm/bench.sh runs the two rows and reports them.
# It checks that every round logged in (a LUN of 64 MiB that answers
# INQUIRY) and out (vm_logout_check), and that every figure is a positive
# number in both guests; it sets no bound on them (a measurement, not a
# timed or sized test: bench.sh reports it against issue #14's targets).

rounds=${1:-4}
case $rounds in
'' | *[!0-9]* | [01]) vm_fail "memsplit.sh: ROUNDS must be a number of 2 or more, not '$rounds'" ;;
esac
case ${VM_PEER_ROLE:-} in
target | initiator) ;;
*) vm_fail "memsplit.sh needs the two-guest mode (TARGET column X@peer in scenarios.list)" ;;
esac

vm_rxe_up
vm_load_roles

# memsnap FILE: drop the caches, then write to FILE the lines
#   meminfo free|pcp|slab|vmalloc KB
# (pcp: free pages waiting in the per-CPU lists, /proc/zoneinfo's "count";
# MemFree does not count them, and they come and go by megabytes, so free
# memory is MemFree plus these)
#   slab CACHE BYTES       (active objects times object size)
#   vmalloc CALLER BYTES   (pages of the areas each caller holds)
memsnap() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 2
	{
		awk '/^MemFree:/ { print "meminfo free", $2 }
			/^SUnreclaim:/ { print "meminfo slab", $2 }
			/^VmallocUsed:/ { print "meminfo vmalloc", $2 }' /proc/meminfo
		awk '$1 == "count:" { n += $2 } END { print "meminfo pcp", n * 4 }' /proc/zoneinfo
		awk 'NR > 2 { print "slab", $1, $2 * $4 }' /proc/slabinfo
		awk '{ for (i = 3; i <= NF; i++) if ($i ~ /^pages=/) {
				c = $3; sub(/\+0x.*/, "", c)
				n[c] += substr($i, 7) * 4096
			} }
			END { for (c in n) print "vmalloc", c, n[c] }' /proc/vmallocinfo
	} >"$1"
}

# memdiff BEFORE AFTER: "total slab vmalloc other" in KiB (free memory's
# drop and its parts)
memdiff() {
	awk '$1 == "meminfo" { v[FILENAME == ARGV[1], $2] = $3 }
		END {
			t = v[1, "free"] + v[1, "pcp"] - v[0, "free"] - v[0, "pcp"]
			s = v[0, "slab"] - v[1, "slab"]
			m = v[0, "vmalloc"] - v[1, "vmalloc"]
			print t, s, m, t - s - m
		}' "$1" "$2"
}

# memtop BEFORE AFTER KIND: the six entries of KIND (slab, vmalloc) that
# grew most, "name +KiB" on one line
memtop() {
	awk -v k="$3" '$1 == k { d[$2] += (FILENAME == ARGV[2] ? $3 : -$3) }
		END { for (n in d) if (d[n] >= 1024) printf "%d %s\n", d[n] / 1024, n }' \
		"$1" "$2" | sort -rn | head -n 6 | awk '{ printf "%s +%d ", $2, $1 }'
}

# memreport SIDE MODULE: per-round lines, the breakdown of the first
# round and of the median of the others, and memsplit.json, from
# $snaps/{pre,post}N
memreport() {
	local side=$1 module=$2 r t s m o json="" first med
	for r in $(seq 1 "$rounds"); do
		if [ ! -s "$snaps/pre$r" ] || [ ! -s "$snaps/post$r" ]; then
			vm_fail "$side: no memory snapshots of round $r"
		fi
		read -r t s m o < <(memdiff "$snaps/pre$r" "$snaps/post$r")
		vm_log "memory of one idle session, $side ($module), round $r: $t KiB (slab $s, vmalloc $m, other $o)"
		[ "$t" -gt 0 ] 2>/dev/null ||
			vm_fail "$side: round $r measured '$t' KiB for a session: the measurement is broken"
		if [ "$r" = 1 ]; then
			first=$t
		else
			echo "$t $r" >>"$snaps/totals"
		fi
		json+="${json:+, }{\"mem_kb\": $t, \"slab_kb\": $s, \"vmalloc_kb\": $m, \"other_kb\": $o}"
	done
	# the median of rounds 2..N (the lower middle one of an even count)
	read -r t med < <(sort -n "$snaps/totals" | sed -n "$((rounds / 2))p")
	vm_log "memory of one idle session, $side ($module): the first $first KiB, one more $t KiB (median of rounds 2-$rounds: round $med)"
	for r in 1 "$med"; do
		vm_log "  round $r: slab caches that grew most (KiB): $(memtop "$snaps/pre$r" "$snaps/post$r" slab)"
		vm_log "  round $r: vmalloc callers that grew most (KiB): $(memtop "$snaps/pre$r" "$snaps/post$r" vmalloc)"
	done
	echo "{\"side\": \"$side\", \"module\": \"$module\", \"rounds\": [$json], \"first_kb\": $first, \"median_kb\": $t}" \
		>"$VM_SCEN_DIR/memsplit.json"
}

snaps=$VM_SCEN_DIR/memsnap
mkdir -p "$snaps" || vm_fail "cannot create $snaps"

if [ "$VM_PEER_ROLE" = target ]; then
	vm_target_setup
	vm_peer_signal ready
	for r in $(seq 1 "$rounds"); do
		vm_peer_await "pre$r" || break
		memsnap "$snaps/pre$r"
		vm_peer_signal "pre$r-ack"
		vm_peer_await "post$r" || break
		memsnap "$snaps/post$r"
		vm_peer_signal "post$r-ack"
	done
	vm_peer_wait "done" 100000
	result=$(cat "$VM_PEER_SIG/done" 2>/dev/null)
	vm_log "initiator guest's scenario: $result"
	# only when the initiator passed are missing snapshots this guest's
	# failure (otherwise the initiator's reason says why)
	[ "$result" = PASS ] || return 0
	memreport target "$VM_TARGET"
	return 0
fi

# initiator guest: the target's snapshot before the login and after it
# are taken while this guest waits (both guests' snapshots of a round
# bracket the same login)
vm_iscsid_start
vm_peer_wait_ready
vm_node_new
# peer_step NAME: signal NAME, wait for the target guest's NAME-ack
peer_step() {
	vm_peer_signal "$1"
	vm_peer_wait "$1-ack" 120
	case $? in
	0) ;;
	2) vm_fail "the target guest stopped before its snapshot '$1'" ;;
	*) vm_fail "the target guest took no snapshot '$1' within 120 s" ;;
	esac
}
for r in $(seq 1 "$rounds"); do
	memsnap "$snaps/pre$r"
	peer_step "pre$r"
	dev=$(vm_login_disk) || exit 1
	memsnap "$snaps/post$r"
	peer_step "post$r"
	vm_check_disk "$dev"
	vm_logout_check "$dev"
done
memreport initiator "$VM_INITIATOR"
