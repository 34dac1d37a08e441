#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run one scenario body in the guest:
#   run-one.sh SCEN_DIR INITIATOR TARGET [siw:]BODY [ARGS...]
# BODY is tests/vm/scenarios/BODY.sh, sourced with ARGS after the guest
# library.  It fails through vm_fail (which records the reason); returning
# normally means every check in it passed.  "siw:" runs it over soft-iWARP
# (VM_RDMA=siw) instead of soft-RoCE.

export VM_SCEN_DIR=$1 VM_INITIATOR=$2 VM_TARGET=$3
body=$4
shift 4
case $body in
siw:*) export VM_RDMA=siw; body=${body#siw:} ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

f=$VM_GUEST_DIR/../scenarios/$body.sh
[ -f "$f" ] || vm_fail "no scenario body $f"
vm_log "scenario body $body ($*), initiator=$VM_INITIATOR target=$VM_TARGET, RDMA $VM_RDMA ($VM_DEV0/$VM_DEV1), kernel $VM_REL"
# shellcheck disable=SC1090
. "$f" "$@"
vm_log "scenario body $body: all checks passed"
exit 0
