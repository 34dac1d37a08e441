#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run scripts/build-modules.sh for both supported kernels (6.1 and 6.12).
#   scripts/for-kernels.sh build-modules [--strict|--sparse]

set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/kernels.sh"
cmd=$1
shift
rc=0
for krel in "$KREL_61" "$KREL_612"; do
	if [ -z "$krel" ] || [ ! -d "/usr/src/linux-headers-$krel" ]; then
		echo "for-kernels: headers for ${krel:-the 6.1 kernel} are not installed (run: bash scripts/deps.sh)" >&2
		rc=1
		continue
	fi
	"$here/$cmd.sh" "/usr/src/linux-headers-$krel" "$@" || rc=1
done
exit $rc
