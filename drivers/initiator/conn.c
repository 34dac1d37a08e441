// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: the connection list of the module, and the "fail once" path: a
 * connection's failure (a failed completion, a CM event, the removal of
 * its device) goes up to libiscsi once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_verbs.h>

#include "isi.h"

LIST_HEAD(isi_conn_list);
/*
 * protects isi_conn_list; taken before an isi_conn's lock, never while
 * one is held
 */
DEFINE_MUTEX(isi_conn_mutex);

/**
 * isi_fail() - report a connection failure to libiscsi, once
 * @ic: the connection
 * @err: the reason given to iscsid
 *
 * Every receive flushed after a QP error would report it again, and
 * libiscsi drops repeats only once the session has failed: a connection
 * bound but not started (waiting for a HelloReply, or one whose start
 * failed) turns each repeat into an event iscsid must read, and a hundred
 * of them exhaust its receive contexts. So only the first report goes up;
 * iscsid tears the whole connection down after it in any case.
 *
 * Return: true when this call reported the failure.
 */
bool isi_fail(struct isi_conn *ic, enum iscsi_err err)
{
	struct iscsi_conn *conn = READ_ONCE(ic->iconn);

	if (!conn || !isdm_conn_fail_once(&ic->base))
		return false;
	iscsi_conn_failure(conn, err);
	return true;
}

/**
 * isi_in_use() - whether a connection carries a logged-in session that
 *	is not logging out
 * @ic: the connection
 *
 * Such a connection ends only by a failure worth a log line: a logout, a
 * session's teardown and a failed login end theirs for reasons iscsid
 * logs.
 *
 * Context: any; a hint, read without the session's lock.
 * Return: true for a connection in use.
 */
bool isi_in_use(struct isi_conn *ic)
{
	struct iscsi_conn *conn = READ_ONCE(ic->iconn);

	return conn && READ_ONCE(ic->state) == ISI_UP &&
	       !isdm_conn_failed(&ic->base) &&
	       READ_ONCE(conn->session->state) == ISCSI_STATE_LOGGED_IN;
}

/**
 * isi_wc_error() - a work request completed in error: log it by the core's
 *	policy (isdm_wc_log()) and fail the connection (isi_fail())
 * @ic: the connection
 * @wc: the completion
 * @what: what the work request was, for the log
 *
 * A flush is the first news of a failure when the queue pair went into
 * error without a failed completion of ours (the provider moved it, or
 * the CM did without an event we act on): that flush gets a line, so
 * that a session's failure always names its cause.
 */
void isi_wc_error(struct isi_conn *ic, struct ib_wc *wc,
		  const char *what)
{
	bool in_use = isi_in_use(ic);
	bool flushed = isdm_wc_log(wc, what, NULL);

	if (isi_fail(ic, ISCSI_ERR_CONN_FAILED) && flushed && in_use)
		pr_info_ratelimited("connection with %pISpc failed: a %s work request was flushed, no completion failed\n",
				    &ic->dst, what);
}

/**
 * isi_cm_failed() - the connection ends: a CM event or device removal
 * @ic: the connection, its lock held
 * @err: why (not used)
 *
 * A connection that is up reports the failure to libiscsi (isi_fail()); a
 * pending or up one becomes %ISI_TERMINATING; its waiters wake.
 */
void isi_cm_failed(struct isi_conn *ic, int err)
{
	if (ic->state == ISI_UP)
		isi_fail(ic, ISCSI_ERR_CONN_FAILED);
	if (ic->state == ISI_PENDING || ic->state == ISI_UP)
		ic->state = ISI_TERMINATING;
	wake_up_all(&ic->wq);
}
