#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debug: the guest scenarios on a debug kernel built from
# Debian's 6.1 source with KASAN, lockdep, DEBUG_LIST, atomic-sleep and
# hung-task checks (scripts/debug-kernel.sh; about 25 minutes on 2 cores
# the first time, then reused). Any KASAN report, lockdep splat or other
# bad kernel line fails the row that produced it, through the rig's usual
# gates.
#
#   scripts/check-debug.sh [vm-check.sh options]
#
# Without options: the default scenario set. The debug kernel runs about
# three times slower under emulation, so every scenario's timeout is
# multiplied by ISER_VM_TIMEOUT_SCALE (default 3 here). Logs go to
# build/vm/logs-debug. The last line is "N passed, N failed".

set -u
top=$(cd "$(dirname "$0")/.." && pwd)

if ! "$top/scripts/deps.sh"; then
	echo "check-debug: could not install the packages the build needs"
	echo "0 passed, 1 failed"
	exit 1
fi
if ! rel=$("$top/scripts/debug-kernel.sh"); then
	echo "check-debug: the debug kernel could not be built"
	echo "0 passed, 1 failed"
	exit 1
fi
if ! "$top/scripts/build-modules.sh" "/lib/modules/$rel/build" --strict ||
	! make -s -C "$top/tests/vm/tools"; then
	echo "check-debug: our modules or the guest tools could not be built for $rel"
	echo "0 passed, 1 failed"
	exit 1
fi
ISER_VM_TIMEOUT_SCALE=${ISER_VM_TIMEOUT_SCALE:-3} \
ISER_VM_LOGS=${ISER_VM_LOGS:-$top/build/vm/logs-debug} \
	exec "$top/tests/vm/vm-check.sh" --kernel "$rel" "$@"
