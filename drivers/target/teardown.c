// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: the close of a connection LIO owns: LIO's wait_conn callback
 * (disconnect, drain, complete or free what is left of its commands, wait
 * for the rest) and free_conn; and the session close that keeps LIO's
 * Time2Retain timer out of the way, with its counters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <target/iscsi/iscsi_target_core.h>
#include <target/target_core_fabric.h>

#include "ist.h"

/* for debugfs: sessions ist_close_session_now() sent each way */
atomic_t ist_erl0_closes = ATOMIC_INIT(0);
atomic_t ist_t2r_skipped = ATOMIC_INIT(0);

/*
 * Keep LIO's Time2Retain timer out of every session close it can avoid.
 * LIO closes a session from that timer in softirq context, where the
 * close takes a mutex (transport_deregister_session() ->
 * target_for_each_device()) and se_tpg->session_lock, which LIO also
 * holds where it takes locks that are not softirq-safe (6.1 and 6.12:
 * a sleeping function called from invalid context, and an irq lock
 * inversion for lockdep). Even a handler that only finds the session
 * reinstated takes that lock and returns. Two ways lead there when the
 * session's last connection goes (iscsit_close_connection()):
 *
 * - The session does not fall back to ERL0 (after a Logout that closed
 *   only the connection; LIO falls back for every other failure below
 *   ERL2): LIO leaves it FAILED for DefaultTime2Retain. The initiator
 *   chooses that value (the smaller offer wins), so a peer reaches the
 *   timer at will. Below ERL2 the failed session's state serves nothing
 *   but a login that adds a connection to it (session continuation),
 *   which no iSER initiator does (one connection per session); with
 *   DefaultTime2Retain 0, open-iscsi's offer, it is to be discarded at
 *   once anyway (RFC 7143 13.15). So have LIO fall back to ERL0 and close
 *   the session now, in this process context, as it does for any other
 *   connection failure below ERL2. Not for a session Logout (LIO frees
 *   that session itself), nor while another connection remains, nor at
 *   ERL2 (connection recovery uses the state).
 * - A login reinstates the session, or it is closed through configfs or
 *   with its TPG (session_reinstatement and session_close, set together
 *   under sess->conn_lock): LIO marks it FAILED, starts the timer and
 *   closes the session right after, stopping the timer again. With
 *   DefaultTime2Retain 0 the timer may expire in between, and its
 *   handler takes se_tpg->session_lock in softirq context. Such a
 *   session is closed at once whatever the timer does, so tell LIO not
 *   to start it: session_continuation, which otherwise means that a
 *   login is adding a connection to the failed session; none can to this
 *   one, since the login path skips a session being closed.
 *
 * Both under sess->conn_lock, the lock under which a reinstating login
 * checks session_fall_back_to_erl0 and sets its flags: either the login
 * came first, and the session is closed at once without the timer, or
 * this did, and the login skips the session (it falls back to ERL0).
 *
 * Only for a connection of the session (logged in). LIO also calls
 * ist_wait_conn() for a login that failed, and a login that tried to add
 * a connection to a live session (non-zero TSIH) has that session in
 * conn->sess: falling back to ERL0 there would leave the live session
 * out of a later reinstatement, and two sessions of one ISID would run
 * side by side.
 */
static void ist_close_session_now(struct iscsit_conn *conn)
{
	struct iscsit_session *sess = conn->sess;

	if (!sess)
		return;
	switch (conn->conn_state) {
	case TARG_CONN_STATE_LOGGED_IN:
	case TARG_CONN_STATE_IN_LOGOUT:
	case TARG_CONN_STATE_LOGOUT_REQUESTED:
	case TARG_CONN_STATE_CLEANUP_WAIT:
		break;
	default:	/* a login: not (yet) one of the session's */
		return;
	}
	spin_lock_bh(&sess->conn_lock);
	if (atomic_read(&sess->session_reinstatement) &&
	    atomic_read(&sess->session_close)) {
		atomic_set(&sess->session_continuation, 1);
		atomic_inc(&ist_t2r_skipped);
	} else if (!sess->sess_ops->SessionType &&
		   sess->sess_ops->ErrorRecoveryLevel != 2 &&
		   atomic_read(&sess->nconn) == 1 &&
		   !atomic_read(&sess->session_reinstatement) &&
		   !atomic_read(&sess->session_logout)) {
		atomic_set(&sess->session_fall_back_to_erl0, 1);
		atomic_inc(&ist_erl0_closes);
	}
	spin_unlock_bh(&sess->conn_lock);
}

void ist_wait_conn(struct iscsit_conn *conn)
{
	struct ist_conn *ic = conn->context;

	/*
	 * A login that failed ends with a Login Response saying why; let it
	 * reach the initiator before the disconnect flushes it, or the
	 * initiator sees a dropped connection and retries.
	 */
	wait_for_completion_timeout(&ic->login_tx_done, 2 * HZ);
	mutex_lock(&ic->lock);
	ist_conn_terminate(ic);
	/*
	 * Terminated, the connection queues LIO's login work no more. LIO
	 * may have begun to drop the login on its own (6.12's login timer
	 * queues that work itself, behind our login_waiting), and a failure
	 * in that window (a disconnect, a late login PDU) queued the work
	 * again: LIO runs this from that very work and frees the connection
	 * once it returns, so the queued instance must not stay pending.
	 */
	if (ic->login_queued)
		cancel_delayed_work(&conn->login_work);
	/* the login timer of a login LIO gave up must not outlive it */
	ist_prelogin_cancel(ic);
	mutex_unlock(&ic->lock);

	/*
	 * This is the first drain of a connection LIO owns (the release
	 * work runs after it): every Send posted unsignaled before it either
	 * failed, and its flush completion ran, or went out without a
	 * completion, and its command is still listed; none is posted
	 * unsignaled after it.
	 */
	ist_sends_quiesce(ic);
	isdm_queues_drain(&ic->base.q);
	ist_sends_reap_unsignaled(ic);
	ist_rdma_wait_stop(ic);
	ist_put_unsol_pending_cmds(conn);
	ist_put_orphan_rejects(conn);
	ist_close_session_now(conn);
	if (conn->sess) {
		struct target_cmd_counter *cnt = conn->cmd_cnt;
		unsigned int secs = 0;

		target_stop_cmd_counter(cnt);
		/*
		 * Commands still in the backend may yet end with a status
		 * that LIO parks in the response queue: look again each
		 * second until none is left.
		 */
		while (ist_put_parked_cmds(conn),
		       ist_complete_aborted_writes(conn),
		       !wait_event_timeout(cnt->refcnt_wq,
					   percpu_ref_is_zero(&cnt->refcnt),
					   HZ))
			if (++secs % 30 == 0)
				ist_log_waiting_cmds(ic);
		target_wait_for_cmds(cnt);
	}
	if (ic->logout_posted)
		wait_for_completion_timeout(&conn->conn_logout_comp,
					    SECONDS_FOR_LOGOUT_COMP * HZ);
	/* control completions still running on ist_comp_wq use the conn */
	wait_var_event(&ic->ctrl_cnt, !atomic_read(&ic->ctrl_cnt));
	queue_work(ist_wq, &ic->release_work);
}

void ist_lio_free_conn(struct iscsit_conn *conn)
{
	struct ist_conn *ic = conn->context;

	isdm_queues_drain(&ic->base.q);
	ist_conn_put(ic);
}
