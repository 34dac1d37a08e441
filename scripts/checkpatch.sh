#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the kernel's checkpatch.pl (from Debian's linux-source-6.1) on every
# C source and header of the project. Prints "checkpatch: clean" or the
# findings, and fails on any error or warning.

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cp_dir=$top/build/checkpatch
tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n 1 || true)

if [ ! -x "$cp_dir/scripts/checkpatch.pl" ]; then
	if [ -z "$tarball" ]; then
		echo "checkpatch: linux-source-6.1 is not installed (apt-get install linux-source-6.1)" >&2
		exit 1
	fi
	mkdir -p "$cp_dir"
	tar -xf "$tarball" -C "$cp_dir" --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
fi

cd "$top"
files=$(git ls-files 'drivers/*.c' 'drivers/*.h' 'include/*.h' 'tests/unit/*.c' \
	'tests/unit/*.h' 'tests/fuzz/*.c' 2>/dev/null)
[ -n "$files" ] || files=$(find drivers include tests/unit tests/fuzz -name '*.[ch]')
run_cp() {
	perl "$cp_dir/scripts/checkpatch.pl" --no-tree --strict --quiet \
		--show-types "$@" 2>&1 || true
}
# compat.h is the one place where kernel versions are compared
out=$(run_cp --ignore FILE_PATH_CHANGES -f $(echo "$files" | grep -v compat.h))
out=$out$(run_cp --ignore FILE_PATH_CHANGES,LINUX_VERSION_CODE,CONSTANT_COMPARISON \
	-f include/isdm/compat.h)
if [ -n "$out" ]; then
	echo "$out"
	echo "checkpatch: findings above" >&2
	exit 1
fi
echo "checkpatch: clean ($(echo $files | wc -w) files)"
