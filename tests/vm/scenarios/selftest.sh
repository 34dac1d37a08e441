# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The rig's own gates, tried on purpose (tests/vm/selftest.sh runs these
# rows and checks that each is judged as it must be).  No iSER module is
# loaded; each mode does one thing a broken kernel would do:
#   ok       nothing: must PASS
#   warn     a "WARNING:" line in the kernel log: the guest's check of the
#            scenario's window must FAIL it
#   taint    sets the W taint flag (as a WARN would): the taint
#            comparison must FAIL it, though the log is clean
#   console  a bad line on the console only (written to the serial port,
#            not through printk): the host's console scan must FAIL it
#   flood    ~1.6 MiB of kernel log lines, then a "WARNING:" line; booted
#            with a small log buffer, the BEGIN marker is pushed out: the
#            row must FAIL for the lost marker, not pass on an empty window
#   late     a "BUG:" line once the row has ended (after its END
#            marker, as a deferred oops after rmmod would be): the final
#            check must fail the boot (the row itself passes)
#   hang     a dd blocked opening a FIFO nobody writes, and the row
#            sleeping past its timeout: the row must FAIL as timed out
#            and leave the dd's state and stack in the kernel log
#            (run-job.sh's stuck_dump); the dd gives up after 60 s
#   crash    the guest crashes (sysrq c) in the middle of the row: the row
#            must FAIL and the rows after it must run in a new boot
#   leak     loads build/leaktest-RELEASE/iser_leaktest.ko, a module that
#            leaks three objects on purpose (tests/vm/debug/leak), and
#            unloads it: on a kernel with kmemleak (the debug kernel) the
#            row must FAIL for the unreferenced objects found after its
#            teardown (scripts/check-debug.sh checks that it does)
#   repo PATH TOKEN  the repository seen by the guest is the host's share
#            mounted at PATH (9p, tag "repo"), not a tmpfs or the read-only
#            root, and build/vm/clone-token there holds TOKEN, which the
#            host wrote (tests/vm/clone-check.sh: a clone under /tmp or
#            /dev/shm); the guest writes TOKEN back into build/vm/clone-seen

mode=${1:?selftest: mode}
case $mode in
ok) vm_log "nothing to do" ;;
warn) vm_kmsg "WARNING: iser-vm selftest: a warning in the scenario's window" ;;
taint)
	echo 512 >/proc/sys/kernel/tainted || vm_fail "cannot set a taint flag"
	vm_log "tainted: $(cat /proc/sys/kernel/tainted)"
	;;
console) echo "BUG: iser-vm selftest: on the console only" >/dev/ttyS0 ;;
flood)
	# not on the console (it would take minutes at the serial port's pace)
	read -r level _ </proc/sys/kernel/printk
	echo 1 >/proc/sys/kernel/printk
	for ((i = 0; i < 20000; i++)); do
		echo "iser-vm selftest flood line $i: padding padding padding padding padding"
	done >/dev/kmsg
	echo "$level" >/proc/sys/kernel/printk
	vm_kmsg "WARNING: iser-vm selftest: after the flood"
	;;
late)
	# once the row's END marker is in the log (run-job.sh's final check
	# waits 5 s after it)
	setsid bash -c 'for i in $(seq 100); do
			dmesg | grep -q "iser-vm: END selftest-late" && break
			sleep 0.2
		done
		echo "BUG: iser-vm selftest: a late oops" >/dev/kmsg' \
		</dev/null >/dev/null 2>&1 &
	;;
hang)
	fifo=/tmp/iser-vm-hang.fifo
	rm -f "$fifo"
	mkfifo "$fifo" || vm_fail "cannot make $fifo"
	timeout 60 dd if="$fifo" of=/dev/null status=none &
	sleep 300
	vm_fail "the row was not stopped at its timeout"
	;;
crash)
	sync
	echo c >/proc/sysrq-trigger
	sleep 30
	vm_fail "the guest did not crash"
	;;
leak)
	ko=$VM_REPO/build/leaktest-$(uname -r)/iser_leaktest.ko
	[ -w /sys/kernel/debug/kmemleak ] ||
		vm_fail "this kernel has no kmemleak: the gate cannot be tried"
	insmod "$ko" || vm_fail "cannot load $ko"
	rmmod iser_leaktest || vm_fail "cannot unload iser_leaktest"
	;;
repo)
	want=${2:?selftest repo: PATH}
	token=${3:?selftest repo: TOKEN}
	[ "$VM_REPO" = "$want" ] || vm_fail "the rig runs from $VM_REPO, not $want"
	mnt=$(findmnt -n -o SOURCE,FSTYPE -T "$want" | awk '{ print $1, $2 }')
	vm_log "mount at $want: $mnt"
	[ "$mnt" = "repo 9p" ] || vm_fail "$want is not the repository share (9p tag repo) but: ${mnt:-nothing}"
	seen=$(cat "$want/build/vm/clone-token" 2>/dev/null)
	[ "$seen" = "$token" ] ||
		vm_fail "$want/build/vm/clone-token holds '${seen}', not the host's '$token'"
	echo "$token" >"$want/build/vm/clone-seen" || vm_fail "cannot write to $want/build/vm"
	;;
*) vm_fail "selftest: unknown mode $mode" ;;
esac
