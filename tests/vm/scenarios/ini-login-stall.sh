# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# A target that takes the connection and does not answer the Login
# Request, during the session's first login: iscsid's login timer
# (node.conn[0].timeo.login_timeout, 5 s here) ends the connection and
# iscsid opens the next one (a first login is retried up to
# node.session.initial_login_retry_max times). tests/vm/tools/iser_tgt
# serves the login cases of CASES, one per connection, then a good one:
# login-none holds the Login Request (the initiator ends the connection),
# login-drop disconnects (the initiator's kernel reports the failure
# while iscsid waits for the login; iscsid's timer then reopens),
# connect-late leaves the connection request unanswered past the login
# timer (iscsid gives up on a connect for a session it has created).
#  - the login succeeds, on the connection after the last case, within a
#    login timeout and DefaultTime2Wait per case plus 40 s;
#  - the tool saw each login-none connection closed by the initiator, and
#    one good connection logged in;
#  - a "detected conn error" line for each login-drop and none else: the
#    connections iscsid ends (its reopens, the logout) are no failures;
#  - the session reads back the LUN's zeros and logs out;
#  - then the device holds no QP: a connection whose release waits for a
#    stop_conn that never comes keeps its queue pair;
#  - the initiator module unloads within 30 s (its release work is done).
#
# connect-late and any case after a first one bring iscsid's terminating
# stop (STOP_CONN_TERM) of a session that is not logged in yet; libiscsi
# then sends no PDU of it (iscsid: "failed to send a PDU") until the
# session's replacement timeout, armed at its first failed connection,
# runs out. Our initiator resumes such a session's login at the next
# bind (drivers/initiator/login.c): its iscsid must not log that line
# once. The replacement timeout is set past the row's bound, so neither
# initiator's login can owe anything to it. The in-tree initiator does
# not resume: its row checks that its login fails that way, as the
# reference.
#
# usage: ini-login-stall.sh [--cases CASE,...] (default
# login-none,login-drop,connect-late)

stall_cases=login-none,login-drop,connect-late
while [ $# -gt 0 ]; do
	case $1 in
	--cases) stall_cases=$2; shift 2 ;;
	*) vm_fail "ini-login-stall.sh: unknown argument $1" ;;
	esac
done
IFS=, read -ra stall <<<"$stall_cases"
stalls=${#stall[@]}
timeo=5

vm_rxe_up
vm_load_roles
qp0=$(vm_rdma_qps)
out=$VM_SCEN_DIR/iser_tgt.out
vm_iser_tgt_start "$out" "$stall_cases,good" -w 120
vm_iscsid_start

# a case takes a login timeout and DefaultTime2Wait (2 s), connect-late
# holds its request 10 s; the rest is the guest's pace. iscsid retries a
# first login for initial_login_retry_max login timeouts.
limit=$((stalls * (timeo + 2) + 40))
settings=("node.conn[0].timeo.login_timeout=$timeo"
	"node.session.initial_login_retry_max=$(((limit + 30) / timeo))"
	"node.session.timeo.replacement_timeout=$((limit + 90))")
export VM_ISER_TGT_LOGIN_SECS=$((limit + 30))
t0=$SECONDS
if [ "$VM_INITIATOR" = intree ]; then
	# The reference: the in-tree initiator's session stays terminated
	# after iscsid's terminating stop (libiscsi sends no PDU then), so
	# every retry fails until iscsid gives up.
	vm_iser_tgt_node "${settings[@]}"
	if vm_run timeout $((limit + 60)) iscsiadm -m node -T "$VM_ISER_TGT_IQN" \
		-p "$VM_TGT_IP:$VM_ISER_TGT_PORT" -I iser --login; then
		vm_fail "the in-tree initiator logged in: its libiscsi now sends the Login Requests after a terminating stop (make this an ordinary row)"
	fi
	n=$(grep -c 'failed to send a PDU' "$VM_SCEN_DIR/iscsid.log")
	cat "$out"
	[ "$n" -gt 0 ] ||
		vm_fail "the in-tree initiator's login failed otherwise: $(tail -n 3 "$VM_SCEN_DIR/iscsid.log" | tr '\n' ' ')"
	vm_log "reference: the in-tree initiator did not log in ($((SECONDS - t0)) s); iscsid could not send $n Login Request(s) after its terminating stop"
	kill "$VM_ISER_TGT_PID" 2>/dev/null
	exit 0
fi
dev=$(vm_iser_tgt_login "${settings[@]}") || exit 1
took=$((SECONDS - t0))
vm_log "logged in after $stall_cases in $took s"
cat "$out"
n=$(grep -c 'failed to send a PDU' "$VM_SCEN_DIR/iscsid.log")
[ "$n" = 0 ] ||
	vm_fail "iscsid could not send $n Login Request(s): the session was not resumed after a terminating stop"
[ "$took" -le "$limit" ] ||
	vm_fail "the login took $took s (at most $limit s)"
for ((i = 0; i < stalls; i++)); do
	want="case=${stall[i]} login=no sent=yes closed=yes"
	case ${stall[i]} in
	login-drop|connect-late) want=${want%yes}self ;;
	esac
	got=$(sed -n "$((i + 1))p" "$out")
	[ "$got" = "$want" ] ||
		vm_fail "connection $((i + 1)): \"$got\", not \"$want\""
done

cmp <(dd if="$dev" bs=4096 count=256 iflag=direct status=none) \
	<(head -c 1M /dev/zero) || vm_fail "the session did not read back zeros"
vm_iser_tgt_logout
# connections iscsid gave up on while iser_tgt held connect-late's
# request come after it as good ones without a login
good=$(grep -c '^case=good login=ok ' "$out")
[ "$good" = 1 ] || vm_fail "$good good connections logged in (1 expected)"
# a connection error for each login-drop (the target ended it), none for
# the connections iscsid ended (its reopens, the logout)
drops=0
for c in "${stall[@]}"; do
	[ "$c" = login-drop ] && drops=$((drops + 1))
done
errs=$(vm_scen_dmesg | grep -c 'detected conn error')
[ "$errs" = "$drops" ] ||
	vm_fail "$errs connection errors reported, $drops expected (one per login-drop): $(vm_scen_dmesg | grep 'detected conn error' | tr '\n' ' ')"

# the released connections' queue pairs are gone (iser_tgt has exited)
qps_back() { [ "$(vm_rdma_qps)" = "$qp0" ]; }
vm_wait 10 qps_back ||
	vm_fail "$(($(vm_rdma_qps) - qp0)) QP(s) left on the device after the logout: $(rdma res show qp 2>&1 | grep -v 'type GSI' | tr '\n' ' ')"
vm_iscsid_stop
mod=ib_iser
modprobe -r "$mod" &
rpid=$!
vm_wait 30 bash -c "! kill -0 $rpid 2>/dev/null" ||
	vm_fail "$mod did not unload within 30 s: $(cat "/proc/$rpid/stack" 2>/dev/null | tr '\n' ' ')"
wait "$rpid" || vm_fail "modprobe -r $mod failed"
