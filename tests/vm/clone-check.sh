#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "A clone anywhere must work": runs the rig from copies of this tree under
# /tmp and /dev/shm (places the guest mounts tmpfs on for itself) and
# checks that the guest sees the host's repository share there.
#
#   tests/vm/clone-check.sh [--kernel K] [DIR...]     (default DIRs: /tmp /dev/shm)
#
# For each DIR: the working tree (without build/ and .git) is copied to
# DIR/iser-clone.XXXXXX, a random token is written into its build/vm/, and
# the copy's own tests/vm/vm-check.sh runs one row, "selftest repo PATH
# TOKEN": in the guest, PATH must be the 9p share (not a tmpfs) and hold
# the token, and the guest writes the token back. PASS needs the row's
# PASS line and the token back on the host. One short boot per DIR. Prints
# PASS/FAIL lines and "N passed, N failed"; the copies are removed.

set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
kernel=6.1
dirs=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel | -k) [ $# -ge 2 ] || { echo "usage: clone-check.sh [--kernel K] [DIR...]" >&2; exit 2; }; kernel=$2; shift ;;
	-*) echo "clone-check: unknown option '$1'" >&2; exit 2 ;;
	*) dirs+=("$1") ;;
	esac
	shift
done
[ ${#dirs[@]} -gt 0 ] || dirs=(/tmp /dev/shm)
out=$top/build/vm/clone-check
rm -rf "$out"
mkdir -p "$out" || exit 2
passed=0
failed=0
clones=()
trap 'rm -rf "${clones[@]}"' EXIT

for d in "${dirs[@]}"; do
	name=clone-$(echo "$d" | tr -c 'A-Za-z0-9\n' '-' | sed 's/^-*//; s/-*$//')
	clone=$(mktemp -d "$d/iser-clone.XXXXXX") || { echo "FAIL $name: cannot create a directory in $d"; failed=$((failed + 1)); continue; }
	clones+=("$clone")
	rsync -a --exclude=/build/ --exclude=/.git "$top/" "$clone/" || { echo "FAIL $name: copy to $clone failed"; failed=$((failed + 1)); continue; }
	mkdir -p "$clone/build/vm"
	token=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
	echo "$token" >"$clone/build/vm/clone-token"
	printf 'selftest-repo none none yes 60 selftest repo %s %s\n' "$clone" "$token" >"$clone/build/vm/clone.list"
	log=$out/$name.log
	ISER_VM_LIST=$clone/build/vm/clone.list ISER_VM_LOGS=$clone/build/vm/logs \
		"$clone/tests/vm/vm-check.sh" --kernel "$kernel" >"$log" 2>&1
	rc=$?
	# keep the guest's logs: the clone goes away
	cp -r "$clone/build/vm/logs" "$out/$name-logs" 2>/dev/null
	back=$(cat "$clone/build/vm/clone-seen" 2>/dev/null)
	if [ $rc = 0 ] && grep -qE "^PASS $kernel selftest-repo \\([0-9]+ s\\)\$" "$log" && [ "$back" = "$token" ]; then
		echo "PASS $kernel $name: the rig ran from $clone"
		passed=$((passed + 1))
	else
		why=$(grep -E '^(FAIL|vm-check:)' "$log" | head -n 2 | paste -sd ';' -)
		[ "$back" = "$token" ] || why="${why:+$why; }the guest did not write the token back"
		echo "FAIL $kernel $name: the rig from $clone: ${why:-vm-check exit status $rc} (log: $log, guest logs: $out/$name-logs)"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
