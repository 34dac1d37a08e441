// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: the end of the login phase: the transport's bind_conn (an
 * iSCSI connection onto its endpoint, with the MR pool) and start_conn
 * (the full-feature receive buffers, the Hello, then libiscsi's full
 * feature phase).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <scsi/scsi_host.h>

#include "isi.h"

/*
 * iscsid (open-iscsi 2.1.3 and later) retries a session's first login
 * after a stop with STOP_CONN_TERM when the retry's wait ends in the
 * transport-wait state: the DefaultTime2Wait delay before the reconnect,
 * or a connect that outlasts the login timer. libiscsi's TERM stop leaves
 * the session ISCSI_STATE_TERMINATE, in which it sends no PDU, so every
 * Login Request of the retries fails at once ("Login I/O error, failed to
 * send a PDU") until iscsid gives up. A bind is iscsid going on with the
 * session: one that never reached full feature phase gets the state of
 * its first bind back (session FREE, no stop pending), so that its login
 * proceeds. A session that has been logged in is not touched: there a
 * TERM stop ends it.
 */
static void isi_session_resume_login(struct iscsi_conn *conn)
{
	struct iscsi_session *session = conn->session;
	struct isi_host *ih = iscsi_host_priv(session->host);
	bool resumed = false;
	u32 starts;

	mutex_lock(&ih->lock);
	starts = ih->starts;
	mutex_unlock(&ih->lock);
	if (starts)
		return;
	spin_lock_bh(&session->frwd_lock);
	if (session->state == ISCSI_STATE_TERMINATE &&
	    conn->stop_stage == STOP_CONN_TERM) {
		session->state = ISCSI_STATE_FREE;
		conn->stop_stage = 0;
		resumed = true;
	}
	spin_unlock_bh(&session->frwd_lock);
	if (resumed)
		pr_info_ratelimited("session %u: iscsid retries the first login after a terminating stop; the login resumes\n",
				    session->cls_session->sid);
}

/**
 * isi_conn_bind() - the transport's bind_conn: an iSCSI connection onto
 *	the connection of its endpoint
 * @cls_session: the session
 * @cls_conn: the iSCSI connection
 * @transport_eph: the endpoint's handle
 * @is_leading: the connection leads the session
 *
 * The connection must be up and not bound yet; it gets its MR pool here.
 * A session whose first login iscsid retries after a terminating stop
 * resumes its login (isi_session_resume_login()).
 *
 * Return: 0 or a negative errno.
 */
int isi_conn_bind(struct iscsi_cls_session *cls_session,
		  struct iscsi_cls_conn *cls_conn, u64 transport_eph,
		  int is_leading)
{
	struct iscsi_conn *conn = cls_conn->dd_data;
	struct iscsi_endpoint *ep;
	struct isi_conn *ic;
	int ret;

	ret = iscsi_conn_bind(cls_session, cls_conn, is_leading);
	if (ret)
		return ret;
	ep = iscsi_lookup_endpoint(transport_eph);
	if (!ep)
		return -EINVAL;
	ic = ep->dd_data;
	if (!ic) {
		ret = -EINVAL;
		goto put_ep;
	}
	mutex_lock(&ic->lock);
	if (ic->state != ISI_UP || ic->iconn) {
		ret = -EINVAL;
		goto unlock;
	}
	/*
	 * One MR per SCSI task: libiscsi's management tasks (the other
	 * ISCSI_MGMT_CMDS_MAX of cmds_max) carry no data to register, and a
	 * SCSI task gives its MR back before its command completes
	 * (cleanup_task), so no more are ever in use at once.
	 */
	ret = isi_fr_pool_init(ic, conn->session->scsi_cmds_max,
			       conn->session->host->sg_tablesize + 1);
	if (ret)
		goto unlock;
	conn->dd_data = ic;
	WRITE_ONCE(ic->iconn, conn);
unlock:
	mutex_unlock(&ic->lock);
	if (!ret)
		isi_session_resume_login(conn);
put_ep:
	iscsi_put_endpoint(ep);
	return ret;
}

/**
 * isi_conn_start() - the transport's start_conn
 * @cls_conn: the iSCSI connection, at the end of its login
 *
 * The first start posts the full-feature receive buffers and, if the
 * connection sends one (isi_hello_wanted()), the Hello, under the
 * connection's lock; it waits for the HelloReply without the lock and
 * records what the connection negotiated in debugfs. Then libiscsi starts
 * the full feature phase.
 *
 * Return: 0 or a negative errno.
 */
int isi_conn_start(struct iscsi_cls_conn *cls_conn)
{
	struct iscsi_conn *conn = cls_conn->dd_data;
	struct isi_conn *ic = conn->dd_data;
	bool first = false, hello_sent = false;
	u32 data_max, nr;
	int ret = 0;

	if (!ic)
		return -ENOTCONN;
	mutex_lock(&ic->lock);
	if (ic->state != ISI_UP) {
		ret = -ENOTCONN;
		goto unlock;
	}
	if (!ic->ffp) {
		/* set_param refused more than ISI_RX_DATA_MAX */
		data_max = clamp_t(u32, conn->max_recv_dlength,
				   ISI_RX_DATA_MIN, ISI_RX_DATA_MAX);
		nr = isi_rx_count(conn->session->cmds_max);
		ret = isi_rx_ffp_post(ic, iscsi_host_priv(conn->session->host),
				      nr, data_max);
		if (ret) {
			pr_err_ratelimited("full-feature receives: %d\n", ret);
			goto unlock;
		}
		ic->ffp = true;
		first = true;
		/* device removal, which takes the lock, cannot race these */
		if (isi_hello_wanted(ic)) {
			ret = isi_hello_send(ic);
			hello_sent = !ret;
		}
	}
unlock:
	mutex_unlock(&ic->lock);
	if (ret)
		return ret;
	if (hello_sent) {
		ret = isi_hello_wait(ic);
		if (ret)
			return ret;
	}
	if (first)
		isi_host_update(ic, conn, true);
	return iscsi_conn_start(cls_conn);
}
