#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the kernel's checkpatch.pl (from Debian's linux-source-6.1) on every
# C source and header of the project, and its kernel-doc on the modules'
# sources and headers (every kernel-doc comment complete). Prints
# "checkpatch: clean" or the findings, and fails on any error or warning.

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cp_dir=$top/build/checkpatch
tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n 1 || true)

if [ ! -x "$cp_dir/scripts/checkpatch.pl" ] || [ ! -f "$cp_dir/scripts/kernel-doc" ]; then
	if [ -z "$tarball" ]; then
		echo "checkpatch: linux-source-6.1 is not installed (apt-get install linux-source-6.1)" >&2
		exit 1
	fi
	mkdir -p "$cp_dir"
	tar -xf "$tarball" -C "$cp_dir" --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/kernel-doc \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
fi

cd "$top"
files=$(git ls-files 'drivers/*.[ch]' 'include/*.h' 'tests/unit/*.[ch]' \
	'tests/fuzz/*.[ch]' 'tests/vm/tools/*.[ch]' 2>/dev/null)
[ -n "$files" ] || files=$(find drivers include tests/unit tests/fuzz tests/vm/tools -name '*.[ch]')
files=$(echo "$files" | sed "s|^|$top/|")
# checkpatch.pl leaves a CamelCase cache (.checkpatch-camelcase.*, ignored
# by git) in the working directory.
run_cp() {
	(cd "$top" && perl "$cp_dir/scripts/checkpatch.pl" --no-tree --strict --quiet \
		--show-types "$@" 2>&1) || true
}
# CAMELCASE: LIO's structures name iSCSI keys in CamelCase.
# CONSIDER_COMPLETION: LIO's accept_np wants a counting semaphore.
# compat.h is the one place where kernel versions are compared.
out=$(run_cp --ignore FILE_PATH_CHANGES,CAMELCASE,CONSIDER_COMPLETION -f $(echo "$files" | grep -v compat.h))
out=$out$(run_cp --ignore FILE_PATH_CHANGES,CAMELCASE,LINUX_VERSION_CODE,CONSTANT_COMPARISON \
	-f "$top/include/isdm/compat.h")
# kernel-doc: every documented struct member and function parameter
out=$out$(cd "$top" && perl "$cp_dir/scripts/kernel-doc" -none \
	$(echo "$files" | grep -E "^$top/(drivers|include)/") 2>&1)
if [ -n "$out" ]; then
	echo "$out"
	echo "checkpatch: findings above" >&2
	exit 1
fi
echo "checkpatch: clean ($(echo $files | wc -w) files)"
