# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash source-path=SCRIPTDIR
#
# Host side of the guest test rig: which kernel, its initramfs, one qemu boot.
# Sourced by tests/vm/vm-check.sh and tests/vm/demo.sh; see
# Documentation/testing-vm.md.
#
# A boot runs one "job": a directory under build/vm/logs/<kernel>/ holding
# job.list (the scenarios to run, one per line, as in tests/vm/scenarios.list).
# The guest reports progress on its second serial port (the file "progress"
# in the job directory) and writes its results into the job directory through
# the read-write 9p share of the repository.

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VM_REPO=$(cd "$VM_DIR/../.." && pwd)
VM_OUT=$VM_REPO/build/vm
VM_MEM=${ISER_VM_MEM:-3G}
VM_CPUS=${ISER_VM_CPUS:-2}
# ISER_VM_ICOUNT=1: the exact mode of make bench.  One vCPU under qemu's
# icount: the guest's clock advances one nanosecond per guest instruction
# and skips idle stretches to the next timer, so what the guest measures
# in its own time depends on the instructions executed (and its own timer
# waits), not on the host's load.
VM_ICOUNT=${ISER_VM_ICOUNT:-0}
# seconds from qemu start until the guest must have said "UP"
VM_BOOT_TIMEOUT=${ISER_VM_BOOT_TIMEOUT:-120}
# the guest kernel's log buffer: Debian's default of 128 KiB can lose a
# scenario's BEGIN marker under a repeating splat; this holds a whole job
VM_LOG_BUF_LEN=${ISER_VM_LOG_BUF_LEN:-64M}
# seconds a scenario may overrun its own timeout (teardown, dmesg check)
VM_SCENARIO_SLACK=${ISER_VM_SCENARIO_SLACK:-150}
# the kernel log lines that fail a scenario (one list, in guest/lib.sh)
VM_BAD_KLOG=$(sed -n "s/^VM_BAD_KLOG='\(.*\)'\$/\1/p" "$VM_DIR/guest/lib.sh")
VM_PROG=${VM_PROG:-$(basename "$0")}
# more qemu arguments for the next vm_boot (the two-guest mode adds a NIC)
VM_QEMU_EXTRA=()
# and more kernel command line for it (the two-guest mode names the role)
VM_APPEND_EXTRA=""
# the two-guest mode (vm_pair_boot): vCPUs and memory of each guest; two
# guests under TCG share the host's cores, so each gets one vCPU by default
VM_PAIR_CPUS=${ISER_VM_PAIR_CPUS:-1}
VM_PAIR_MEM=${ISER_VM_PAIR_MEM:-2G}
# seconds the target guest's scenario may take beyond the row's TIMEOUT: it
# sets up before the initiator logs in and tears down after it is done
VM_PAIR_EXTRA=240
# seconds the target guest gets to finish after the initiator guest stopped
VM_PAIR_GRACE=${ISER_VM_PAIR_GRACE:-240}

vm_die() {
	echo "$VM_PROG: $*" >&2
	exit 2
}

vm_now() {
	date +%s
}

# vm_kernel_release LABEL: print the release for 6.1, 6.12 or a full release.
vm_kernel_release() {
	# shellcheck source=../../../scripts/kernels.sh
	. "$VM_REPO/scripts/kernels.sh"
	case $1 in
	6.1) echo "${KREL_61:-}" ;;
	6.12) echo "${KREL_612:-}" ;;
	[0-9].[0-9] | [0-9].[0-9][0-9]) echo "" ;;
	*) echo "$1" ;;
	esac
}

# vm_check_kernel LABEL RELEASE: die with a clear message unless the guest
# kernel can boot (image and module tree installed).
vm_check_kernel() {
	local label=$1 rel=$2
	if [ -z "$rel" ]; then
		case $label in
		6.12) vm_die "no Debian 6.12 kernel found: install $KERNEL_PKGS_612 (scripts/deps.sh)" ;;
		6.1) vm_die "no Debian 6.1 kernel found (no /usr/src/linux-headers-6.1.0-*-amd64): install linux-image-amd64 and linux-headers-amd64 (scripts/deps.sh)" ;;
		*) vm_die "unknown kernel '$label' (use 6.1, 6.12 or a release such as 6.1.0-56-amd64)" ;;
		esac
	fi
	[ -r "/boot/vmlinuz-$rel" ] ||
		vm_die "kernel $label: /boot/vmlinuz-$rel is missing: install linux-image-$rel (or linux-image-$rel-unsigned), e.g. with scripts/deps.sh"
	[ -r "/lib/modules/$rel/modules.dep" ] ||
		vm_die "kernel $label: /lib/modules/$rel/modules.dep is missing: the linux-image-$rel package is not (fully) installed"
	[ -d "/lib/modules/$rel/build" ] ||
		echo "$VM_PROG: warning: kernel $label: no headers (/lib/modules/$rel/build); our modules cannot be built for it: install linux-headers-$rel" >&2
	return 0
}

# vm_check_tools: die naming the Debian package of any missing host program.
# The guest runs the host's userspace, so this covers the guest too.
vm_check_tools() {
	local missing="" pair cmd pkg
	for pair in qemu-system-x86_64:qemu-system-x86 busybox:busybox-static \
		gzip:gzip xz:xz-utils modprobe:kmod modinfo:kmod \
		targetcli:targetcli-fb iscsiadm:open-iscsi iscsid:open-iscsi \
		rdma:iproute2 ip:iproute2 ss:iproute2 tc:iproute2 fio:fio dbus-daemon:dbus \
		timeout:coreutils python3:python3 sg_inq:sg3-utils; do
		cmd=${pair%%:*}
		pkg=${pair#*:}
		if ! PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v "$cmd" >/dev/null 2>&1; then
			missing="$missing $pkg($cmd)"
		fi
	done
	[ -x /usr/bin/python3 ] || missing="$missing python3(/usr/bin/python3)"
	# the initramfs needs a statically linked busybox
	if [ -x /bin/busybox ] && ldd /bin/busybox >/dev/null 2>&1; then
		missing="$missing busybox-static(/bin/busybox is dynamically linked)"
	fi
	[ -z "$missing" ] ||
		vm_die "missing host packages:$missing; install them (scripts/deps.sh)"
}

# vm_initramfs_modules RELEASE: the .ko files the initramfs needs, in load
# order, without repeats.
vm_initramfs_modules() {
	local rel=$1 m
	for m in virtio_pci 9pnet_virtio 9p overlay; do
		modprobe -S "$rel" --show-depends "$m" 2>/dev/null ||
			echo "MISSING $m"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }
		    $1 == "MISSING" { print "MISSING:" $2 }'
}

# vm_initramfs RELEASE: build (or reuse) the initramfs; print its path.
# Rebuilt only when the init script, busybox or one of the modules changed.
vm_initramfs() {
	local rel=$1 dir mods key stage f base
	dir=$VM_OUT/initramfs/$rel
	mods=$(vm_initramfs_modules "$rel")
	case $mods in
	*MISSING:*)
		vm_die "kernel $rel lacks a module the guest boot needs: $(echo "$mods" | sed -n 's/^MISSING://p' | tr '\n' ' ')"
		;;
	esac
	key=$({
		echo "$rel"
		sha256sum "$VM_DIR/initramfs-init.sh" /bin/busybox
		# shellcheck disable=SC2086
		[ -z "$mods" ] || stat -c '%n %s %Y' $mods
	} | sha256sum | cut -d' ' -f1)
	if [ -s "$dir/initramfs.cpio.gz" ] && [ "$(cat "$dir/key" 2>/dev/null)" = "$key" ]; then
		echo "$dir/initramfs.cpio.gz"
		return 0
	fi
	mkdir -p "$dir" || vm_die "cannot create $dir"
	stage=$(mktemp -d "$dir/stage.XXXXXX") || vm_die "mktemp failed in $dir"
	mkdir -p "$stage/bin" "$stage/lib/modules" "$stage/proc" "$stage/sys" \
		"$stage/dev" "$stage/lower" "$stage/rw" "$stage/newroot"
	cp /bin/busybox "$stage/bin/busybox"
	cp "$VM_DIR/initramfs-init.sh" "$stage/init"
	chmod 755 "$stage/init"
	: >"$stage/modules.order"
	for f in $mods; do
		base=$(basename "$f")
		case $f in
		*.ko.xz) base=${base%.xz}; xz -dc "$f" >"$stage/lib/modules/$base" ;;
		*.ko.gz) base=${base%.gz}; gzip -dc "$f" >"$stage/lib/modules/$base" ;;
		*.ko.zst) base=${base%.zst}; zstd -qdc "$f" >"$stage/lib/modules/$base" ;;
		*) cp "$f" "$stage/lib/modules/$base" ;;
		esac || vm_die "cannot unpack $f"
		echo "$base" >>"$stage/modules.order"
	done
	if ! (cd "$stage" && find . -mindepth 1 | busybox cpio -o -H newc 2>/dev/null) |
		gzip -1 >"$dir/initramfs.cpio.gz.tmp"; then
		rm -rf "$stage"
		vm_die "building the initramfs in $dir failed"
	fi
	rm -rf "$stage"
	mv "$dir/initramfs.cpio.gz.tmp" "$dir/initramfs.cpio.gz"
	echo "$key" >"$dir/key"
	echo "$dir/initramfs.cpio.gz"
}

# vm_boot RELEASE JOBDIR HARD_TIMEOUT [LINE_HANDLER]
#
# Boot the guest for one job and watch it.  LINE_HANDLER, when given, is
# called with every progress line ("@@ ..." without the "@@ ").  Sets:
#   VM_STATE  done | noboot | hung | died | timeout | stopped (VM_BOOT_POLL)
#   VM_UP     1 once the guest said UP (its init ran), else 0
#   VM_CURRENT  the scenario that was running when the guest stopped ("" if none)
#   VM_ELAPSED  seconds the boot took
#   VM_DONE_RC  the status of the guest's "DONE" line (run-job.sh: 0 when its
#               final check after the last scenario was clean), "" without one
# and writes VM_DONE_RC to JOBDIR/done-rc.
# The kernel's log buffer is made large enough for a whole job
# (VM_LOG_BUF_LEN), so that no scenario's BEGIN marker is pushed out of it,
# and userspace writes to /dev/kmsg are not rate-limited (printk.devkmsg=on):
# the markers must never be dropped.
# shellcheck disable=SC2034 # VM_CURRENT, VM_ELAPSED are for the caller
#
# The boot-from-SAN mode (vm_san_boot) boots another initramfs with another
# command line and without the 9p shares: VM_BOOT_INITRD replaces the rig's
# initramfs, VM_BOOT_CMDLINE the whole kernel command line, and
# VM_BOOT_SHARES=0 leaves the shares out.  VM_BOOT_KERNEL replaces the
# kernel image (sanboot --ibft: iPXE, which then loads the kernel itself)
# and VM_BOOT_INITRD=none gives qemu no initramfs.  VM_BOOT_POLL, a function, is
# called once a second with JOBDIR and the seconds since qemu started;
# when it returns 0 the host stops the guest and VM_STATE is "stopped".
vm_boot() {
	local rel=$1 job=$2 hard=$3 handler=${4:-} initrd qpid start deadline
	local n=0 total line kw a b done_seen=0 up=0 alive append
	local -a shares=() initrd_arg=() accel=(-accel tcg,thread=multi -smp "$VM_CPUS")
	[ "$VM_ICOUNT" = 1 ] &&
		accel=(-accel tcg,thread=single -icount shift=0,sleep=off,align=off -smp 1)
	if [ -n "${VM_BOOT_INITRD:-}" ]; then
		initrd=$VM_BOOT_INITRD
	else
		initrd=$(vm_initramfs "$rel") || exit 2
	fi
	[ "$initrd" = none ] || initrd_arg=(-initrd "$initrd")
	append=${VM_BOOT_CMDLINE:-"console=ttyS0,115200 panic=-1 mitigations=off log_buf_len=$VM_LOG_BUF_LEN printk.devkmsg=on ${ISER_VM_APPEND:-} iser_vm.repo=$VM_REPO iser_vm.job=$job iser_vm.scale=${ISER_VM_TIMEOUT_SCALE:-1}${VM_APPEND_EXTRA:+ $VM_APPEND_EXTRA}"}
	[ "${VM_BOOT_SHARES:-1}" = 0 ] || shares=(
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$VM_REPO,mount_tag=repo,security_model=none,multidevs=remap")
	rm -f "$job/progress" "$job/console.log" "$job/qemu.log" "$job/done-rc" "$job/final"
	: >"$job/progress"
	VM_CURRENT=""
	VM_STATE=""
	VM_DONE_RC=""
	start=$(vm_now)
	timeout -k 10 "$hard" qemu-system-x86_64 \
		-name "iser-vm-$rel" -nodefaults -no-user-config \
		"${accel[@]}" -m "$VM_MEM" \
		-nic none "${VM_QEMU_EXTRA[@]}" -display none -monitor none -no-reboot \
		-kernel "${VM_BOOT_KERNEL:-/boot/vmlinuz-$rel}" "${initrd_arg[@]}" \
		-append "$append" \
		-serial "file:$job/console.log" -serial "file:$job/progress" \
		"${shares[@]}" \
		</dev/null >"$job/qemu.log" 2>&1 &
	qpid=$!
	# for vm_pair_boot, which may have to stop the target guest from outside
	echo "$qpid" >"$job/qemu.pid"
	deadline=$((start + VM_BOOT_TIMEOUT))
	while :; do
		alive=0
		kill -0 "$qpid" 2>/dev/null && alive=1
		total=$(wc -l <"$job/progress")
		while [ "$n" -lt "$total" ]; do
			n=$((n + 1))
			line=$(sed -n "${n}p" "$job/progress" | tr -d '\r')
			case $line in
			"@@ "*) line=${line#@@ } ;;
			*) continue ;;
			esac
			read -r kw a b _ <<<"$line"
			case $kw in
			UP) up=1; deadline=$(($(vm_now) + VM_SCENARIO_SLACK)) ;;
			BEGIN) VM_CURRENT=$a; deadline=$(($(vm_now) + ${b:-300} + VM_SCENARIO_SLACK)) ;;
			END) VM_CURRENT=""; deadline=$(($(vm_now) + VM_SCENARIO_SLACK)) ;;
			DONE) done_seen=1; VM_DONE_RC=${a:-}; echo "$VM_DONE_RC" >"$job/done-rc"
				deadline=$(($(vm_now) + 30)) ;;
			esac
			[ -n "$handler" ] && "$handler" "$line"
		done
		# a boot that says nothing on the second port (sanboot --bad):
		# its watcher stops it once the console showed what it waits for
		if [ -n "${VM_BOOT_POLL:-}" ] && "$VM_BOOT_POLL" "$job" "$(($(vm_now) - start))" &&
			[ $alive = 1 ]; then
			VM_STATE=stopped
			kill "$qpid" 2>/dev/null
			sleep 2
			kill -9 "$qpid" 2>/dev/null
			break
		fi
		[ $alive = 1 ] || break
		if [ "$(vm_now)" -gt "$deadline" ]; then
			if [ "$up" = 0 ]; then
				VM_STATE=noboot
			elif [ "$done_seen" = 0 ]; then
				VM_STATE=hung
			fi
			kill "$qpid" 2>/dev/null
			sleep 2
			kill -9 "$qpid" 2>/dev/null
			break
		fi
		sleep 1
	done
	wait "$qpid" 2>/dev/null
	local rc=$?
	VM_UP=$up
	VM_ELAPSED=$(($(vm_now) - start))
	if [ -z "$VM_STATE" ]; then
		if [ "$done_seen" = 1 ]; then
			VM_STATE="done"
		elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			VM_STATE=timeout
		elif [ "$up" = 0 ]; then
			VM_STATE=noboot
		else
			VM_STATE=died
		fi
	fi
	return 0
}

# vm_console_klog JOBDIR SCENARIO: the first bad kernel log lines of the
# console after SCENARIO began, on one line.
vm_console_klog() {
	awk -v b="iser-vm: BEGIN $2" 'index($0, b) { p = 1 } p' "$1/console.log" 2>/dev/null |
		tr -d '\r' | grep -aE "$VM_BAD_KLOG" | head -n 2 |
		sed 's/^\[[^]]*\] *//' | paste -sd ';' -
}

# vm_console_scan CONSOLE_LOG: the bad kernel log lines (VM_BAD_KLOG) of a
# whole boot's console, each as "SCENARIO<TAB>LINE", SCENARIO being the
# scenario whose BEGIN/END markers enclose the line, or "-" for a line
# outside every scenario (boot, the final check, a late oops).  The console
# is a file on the host: no log ring can drop a line from it.
vm_console_scan() {
	tr -d '\r' 2>/dev/null <"$1" | awk -v bad="$VM_BAD_KLOG" '
		{
			if (match($0, /iser-vm: BEGIN [^ ]+/)) {
				cur = substr($0, RSTART + 15, RLENGTH - 15)
				next
			}
			if (match($0, /iser-vm: END [^ ]+/)) {
				cur = ""
				next
			}
			if ($0 ~ bad) {
				line = $0
				sub(/^\[[^]]*\] */, "", line)
				print (cur == "" ? "-" : cur) "\t" line
			}
		}'
}

# vm_state_reason JOBDIR: a sentence for VM_STATE after vm_boot (and the
# kernel's complaints after VM_CURRENT began, if any).
vm_state_reason() {
	local job=$1 klog=""
	[ -n "${VM_CURRENT:-}" ] && klog=$(vm_console_klog "$job" "$VM_CURRENT")
	echo "$(vm_state_sentence "$job")${klog:+; kernel log: $klog}"
}

# vm_console_where CONSOLE_LOG: where the first oops or panic of a boot
# struck, as "; at FUNC+OFF/LEN; frames F1 F2 ..." (its kernel RIP line, if
# any, and the first reliable frames of its first call trace), so that a
# one-line result names the code that died.
vm_console_where() {
	tr -d '\r' 2>/dev/null <"$1" | sed 's/^\[[^]]*\] *//' | awk '
		!rip && !done && /^RIP: 0010:/ { rip = $2; sub(/^0010:/, "", rip) }
		!intrace && !done && /^Call Trace:/ { intrace = 1; next }
		intrace && /^ *<\/?(IRQ|TASK|NMI|#DF|SOFTIRQ|EOI)>/ { next }
		intrace && /^ *\? / { next }
		intrace && /^ *[A-Za-z_][A-Za-z0-9_.]*\+0x/ {
			if (nf < 8) { f = $1; sub(/\/.*/, "", f); frames = frames " " f; nf++ }
			next
		}
		intrace { intrace = 0; done = 1 }
		END { printf "%s%s", (rip ? "; at " rip : ""), (frames ? "; frames" frames : "") }'
}

vm_state_sentence() {
	local job=$1
	case $VM_STATE in
	done) echo "guest finished" ;;
	noboot)
		local why
		why=$(grep -a -m1 -E 'iser-vm-init:|Kernel panic|not syncing' "$job/console.log" 2>/dev/null)
		[ -n "$why" ] || why=$(grep -a -v 'terminating on signal' "$job/qemu.log" 2>/dev/null | grep -a -m1 .)
		[ -n "$why" ] || why="last console line: $(grep -a . "$job/console.log" 2>/dev/null | tail -n 1)"
		why=$(echo "$why" | tr -d '\r' | sed 's/^\[[^]]*\] *//')
		echo "guest did not come up within ${VM_BOOT_TIMEOUT}s ($why)"
		;;
	hung) echo "guest hung (no progress within the scenario timeout + ${VM_SCENARIO_SLACK}s), killed" ;;
	timeout) echo "hard boot timeout reached, qemu killed" ;;
	stopped) echo "stopped by the host once the console showed what it waited for" ;;
	died)
		local why
		why=$(grep -a -m1 -E 'Kernel panic|not syncing' "$job/console.log" 2>/dev/null | tr -d '\r' | sed 's/^\[[^]]*\] *//')
		echo "guest stopped unexpectedly${why:+ ($why)}$(vm_console_where "$job/console.log")"
		;;
	esac
}

# the two-guest mode and the boot-from-SAN mode built on it
# shellcheck source=pair.sh
. "$VM_DIR/lib/pair.sh"
# shellcheck source=san.sh
. "$VM_DIR/lib/san.sh"
