# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: our target's debugfs counters: receive buffers held, unsignaled Sends.
# Sourced by ../lib.sh, with the rest of the library.

# vm_ist_sum KEY: the sum of KEY over the normal sessions' connections in
# our target's debugfs file (rx_held, imm_in_place); empty when our
# ib_isert does not run in this guest or shows no normal session
vm_ist_sum() {
	local f=/sys/kernel/debug/ib_isert/connections
	[ -r "$f" ] || return 0
	awk -v k="$1:" -v RS= '/(^|\n)session: normal(\n|$)/ {
		n = split($0, line, "\n")
		for (i = 1; i <= n; i++) {
			split(line[i], w, " ")
			if (w[1] == k) { s += w[2]; seen = 1 }
		}
	} END { if (seen) print s + 0 }' "$f"
}
# vm_ist_conns: our target's connections in its debugfs file (one "peer:"
# line each, login phase included); empty without our ib_isert
vm_ist_conns() {
	local f=/sys/kernel/debug/ib_isert/connections
	[ -r "$f" ] || return 0
	grep -c '^peer:' "$f"
}
vm_ist_rx_back() { [ "$(vm_ist_sum rx_held)" = 0 ]; }
# our target shows no normal session any more (its teardown finished)
vm_ist_no_session() { [ -z "$(vm_ist_sum rx_held)" ]; }

# vm_ist_unsignaled_check DEV: with our target in this guest, SCSI Responses
# went out unsignaled (unsignaled_sends); signal_every refuses values outside
# 1..16; with 1, a verified run posts no Send unsignaled; back at 16,
# single WRITEs go out until a command of an unsignaled Send waits for a
# later completion (unsignaled_held), for the logout's teardown to complete
# (the caller checks that the connection goes: vm_ist_no_session)
vm_ist_unsignaled_check() {
	local dev=$1 p=/sys/module/ib_isert/parameters/signal_every
	local q0 q1 i v
	q0=$(vm_ist_sum unsignaled_sends)
	[ -n "$q0" ] || return 0
	[ "$q0" -gt 0 ] || vm_fail "our target sent no SCSI Response unsignaled"
	for v in 0 17 -1 x ""; do
		echo "$v" 2>/dev/null >"$p" &&
			vm_fail "signal_every accepted '$v'"
	done
	[ "$(cat "$p")" = 16 ] ||
		vm_fail "signal_every is $(cat "$p") after refused writes, not 16"
	vm_module_params ib_isert.signal_every=1
	vm_fio "$dev" signal-every-1 <<-EOF
		[rand-4k-qd16]
		rw=randwrite
		bs=4k
		iodepth=16
		size=4M
	EOF
	q1=$(vm_ist_sum unsignaled_sends)
	[ "$q1" = "$q0" ] ||
		vm_fail "with signal_every 1 our target still sent $((q1 - q0)) Responses unsignaled"
	vm_module_params ib_isert.signal_every=16
	for i in $(seq 0 16); do
		[ "$(vm_ist_sum unsignaled_held)" -gt 0 ] && break
		dd if=/dev/urandom of="$dev" bs=4k count=1 seek=$((4096 + i)) \
			oflag=direct status=none || vm_fail "a single 4 KiB WRITE failed"
	done
	[ "$(vm_ist_sum unsignaled_held)" -gt 0 ] ||
		vm_fail "no command of an unsignaled Send waits after 17 single WRITEs"
	vm_log "our target: $q1 Responses unsignaled, $(vm_ist_sum unsignaled_held) commands waiting for a later completion at the logout"
}

# vm_ist_rx_check: with our target in this guest, every receive buffer a
# WRITE held for its immediate data (used in place) is back once the I/O
# is over; logs how many WRITEs used it
vm_ist_rx_check() {
	local held
	held=$(vm_ist_sum rx_held)
	[ -n "$held" ] || return 0
	vm_wait 10 vm_ist_rx_back ||
		vm_fail "our target: $(vm_ist_sum rx_held) receive buffer(s) still held by WRITEs after the I/O ended"
	vm_log "our target: $(vm_ist_sum imm_in_place) WRITE(s) used their immediate data in place; no receive buffer held"
}
