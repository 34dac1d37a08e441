// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: the login phase. A connection goes to LIO's login thread once
 * its first login PDU arrived and the CM reported it established; login
 * PDUs are received into the connection's login buffer and copied into
 * LIO's login structure, login responses are sent from it. LIO's
 * get_rx_pdu callback ends the login: it allocates the full-feature Send
 * and receive rings, posts the receives and sends the final login
 * response.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <target/iscsi/iscsi_target_core.h>

#include "ist.h"

/* how long a login response waits for the Send of the previous one */
#define IST_LOGIN_TX_WAIT	(15 * HZ)

/**
 * ist_conn_ready() - hand a connection to LIO's login thread once it is
 *	usable
 * @ic: the connection: usable once the CM reported it established and its
 *	first login PDU arrived, whichever comes last
 */
void ist_conn_ready(struct ist_conn *ic)
{
	struct ist_np *isnp = ic->isnp;
	bool ready = false;

	mutex_lock(&isnp->lock);
	mutex_lock(&ic->lock);
	if (!list_empty(&ic->np_entry) && ic->state == IST_CONN_ACCEPTED &&
	    ic->established && ic->login_len) {
		list_move_tail(&ic->np_entry, &isnp->pending);
		isnp->nr_accepted--;
		ic->state = IST_CONN_PENDING;
		ready = true;
	}
	mutex_unlock(&ic->lock);
	/* a timer already running finds the connection pending and drops it */
	if (ready)
		ist_prelogin_cancel(ic);
	mutex_unlock(&isnp->lock);
	if (ready)
		up(&isnp->sem);
}

static void *ist_login_bhs(struct ist_conn *ic)
{
	return ic->login.rx.buf + ic->base.mode.hdr_len;
}

/* Copy the received login PDU into LIO's login structure. */
static void ist_login_to_lio(struct ist_conn *ic, struct iscsi_login *login)
{
	struct iscsi_login_req *req = ist_login_bhs(ic);
	u32 dlen = ntoh24(req->dlength);

	if (login->first_request) {
		login->leading_connection = !req->tsih;
		login->current_stage = (req->flags &
			ISCSI_FLAG_LOGIN_CURRENT_STAGE_MASK) >> 2;
		login->version_min = req->min_version;
		login->version_max = req->max_version;
		memcpy(login->isid, req->isid, sizeof(login->isid));
		login->cmd_sn = be32_to_cpu(req->cmdsn);
		login->init_task_tag = req->itt;
		login->initial_exp_statsn = be32_to_cpu(req->exp_statsn);
		login->cid = be16_to_cpu(req->cid);
		login->tsih = be16_to_cpu(req->tsih);
	}
	memcpy(login->req, req, ISCSI_HDR_LEN);
	/* ist_login_recv_done() bounded dlen by IST_LOGIN_DATA_MAX */
	memcpy(login->req_buf, (u8 *)req + ISCSI_HDR_LEN + req->hlength * 4,
	       dlen);
}

/**
 * ist_login_recv_done() - a login PDU arrived
 * @cq: the CQ
 * @wc: the completion of the login buffer's receive
 *
 * The first one makes the connection ready for LIO (ist_conn_ready()),
 * the later ones go to LIO's login work, which waits for them.
 */
void ist_login_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ist_conn *ic = wc->qp->qp_context;
	struct isdm_rx_spec spec = {
		.peer		= &ic->src,
		.role		= ISDM_ROLE_TARGET,
		.phase		= ISDM_PHASE_LOGIN,
		.max_data	= IST_LOGIN_DATA_MAX,
		.ahs		= true,
	};
	struct isdm_rx_pdu pdu;
	struct iscsi_login *login;
	int ret;

	if (wc->status != IB_WC_SUCCESS) {
		ist_wc_failed(ic, wc, "login receive");
		return;
	}
	if (!isdm_rx_begin(&ic->base, &ic->login.rx))
		return;
	ret = isdm_rx_check(&ic->base, ic->login.rx.buf, wc->byte_len, &spec,
			    &pdu);
	if (ret) {
		ist_conn_fail(ic, "malformed login PDU", ret);
		return;
	}

	mutex_lock(&ic->lock);
	if (ic->state == IST_CONN_ACCEPTED) {
		ic->login_len = wc->byte_len;
		mutex_unlock(&ic->lock);
		ist_conn_ready(ic);
		return;
	}
	/*
	 * LIO's login structure is there while its login work waits for
	 * this PDU, and LIO frees it without our lock once that wait fails
	 * (login_closed): only a waiting login takes the PDU.
	 */
	login = ic->conn ? ic->conn->conn_login : NULL;
	if (ic->state != IST_CONN_BOUND || !ic->login_waiting ||
	    ic->login_closed || !login || login->first_request) {
		mutex_unlock(&ic->lock);
		ist_conn_fail(ic, "unexpected login PDU", -EPROTO);
		return;
	}
	ist_prelogin_cancel(ic);
	ic->login_len = wc->byte_len;
	ic->login_waiting = false;
	ist_login_to_lio(ic, login);
	ist_login_wake(ic);
	mutex_unlock(&ic->lock);
}

int ist_get_login_rx(struct iscsit_conn *conn, struct iscsi_login *login)
{
	struct ist_conn *ic = conn->context;
	int ret;

	if (login->first_request) {
		/* arrived before ist_accept_np() handed us to LIO */
		ist_login_to_lio(ic, login);
		return 0;
	}
	/* ist_login_recv_done() already copied it and queued login_work */
	ret = wait_for_completion_interruptible(&ic->login_req_comp);
	mutex_lock(&ic->lock);
	if (!ret) {
		reinit_completion(&ic->login_req_comp);
		if (ic->login_closed)
			ret = -ENOTCONN;
	}
	/*
	 * LIO drops the login, and frees its login structure, when this
	 * fails (its login timeout interrupts the wait): no later login PDU
	 * may reach it, and no failure may queue its login work again.
	 */
	if (ret) {
		ic->login_closed = true;
		ic->login_waiting = false;
	}
	mutex_unlock(&ic->lock);
	return ret;
}

static void ist_login_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ist_conn *ic = wc->qp->qp_context;

	if (wc->status != IB_WC_SUCCESS)
		ist_wc_failed(ic, wc, "login send");
	isdm_tx_unmap(ic->base.dev, &ic->login_tx);
	complete_all(&ic->login_tx_done);
}

static int ist_login_send(struct ist_conn *ic)
{
	int ret;

	reinit_completion(&ic->login_tx_done);
	ret = isdm_tx_post(&ic->base, &ic->login_tx, NULL);
	if (ret) {
		isdm_tx_unmap(ic->base.dev, &ic->login_tx);
		complete_all(&ic->login_tx_done);
	}
	return ret;
}

int ist_put_login_tx(struct iscsit_conn *conn, struct iscsi_login *login,
		     u32 length)
{
	struct ist_conn *ic = conn->context;
	struct isdm_tx *tx = &ic->login_tx;
	long left;
	int ret;

	if (length > IST_LOGIN_DATA_MAX)
		return -EINVAL;
	/*
	 * The previous response's Send may still be in flight (in RNR retry
	 * while the initiator posts no receive buffer, which does not stop
	 * it sending its next request): its buffer and mapping are @tx's
	 * until it completes, or the device would send this response in its
	 * place and its completion unmap this one. LIO's login timeout does
	 * not cover this call: the wait has a bound of its own, and a login
	 * whose responses are not taken fails.
	 */
	left = wait_for_completion_interruptible_timeout(&ic->login_tx_done,
							 IST_LOGIN_TX_WAIT);
	if (left <= 0) {
		pr_warn_ratelimited("connection from %pISpc: the previous login response not taken within %d s; login failed\n",
				    &ic->src, IST_LOGIN_TX_WAIT / HZ);
		return left ? left : -ETIMEDOUT;
	}
	memcpy(isdm_tx_bhs(tx), login->rsp, ISDM_BHS_LEN);
	tx->num_sge = 1;
	ret = isdm_tx_build(&ic->base, tx, NULL, NULL, 0, ist_login_send_done);
	if (ret)
		return ret;
	ret = isdm_login_buf_send_data(ic->base.dev, &ic->login, tx,
				       login->rsp_buf, length);
	if (ret) {
		isdm_tx_unmap(ic->base.dev, tx);
		return ret;
	}

	if (!login->login_failed) {
		if (login->login_complete) {
			/*
			 * Sent by ist_get_rx_pdu() once LIO registered the
			 * session and the full-feature buffers are posted.
			 */
			mutex_lock(&ic->lock);
			ic->login_done = true;
			mutex_unlock(&ic->lock);
			ic->login_rsp_pending = true;
			return 0;
		}
		ret = isdm_rx_post(ic->base.q.qp, ic->base.dev, &ic->login.rx);
		if (ret) {
			isdm_tx_unmap(ic->base.dev, tx);
			return ret;
		}
		/* LIO waits for the next PDU once this returns */
		mutex_lock(&ic->lock);
		if (ic->login_closed) {
			ist_login_wake(ic);
		} else {
			ic->login_waiting = true;
			ist_prelogin_arm(ic);
		}
		mutex_unlock(&ic->lock);
	}
	return ist_login_send(ic);
}

/*
 * Receive buffers for full feature phase: one per command the window
 * allows, plus unsolicited Data-Out PDUs when InitialR2T=No, plus room
 * for immediate (unexpected) PDUs.
 */
static u32 ist_rx_count(struct iscsit_conn *conn)
{
	struct iscsi_sess_ops *so = conn->sess->sess_ops;
	u32 trdsl = conn->conn_ops->TargetRecvDataSegmentLength;
	u32 depth, per_cmd = 1;

	/* discovery: Text, NOP-Out and Logout, one at a time */
	if (so->SessionType)
		return IST_DISCOVERY_RX;

	depth = conn->sess->se_sess->se_node_acl ?
		conn->sess->se_sess->se_node_acl->queue_depth : 0;
	if (!depth)
		depth = conn->tpg->tpg_attrib.default_cmdsn_depth;
	if (!so->InitialR2T && trdsl)
		per_cmd += DIV_ROUND_UP(so->FirstBurstLength, trdsl);
	return clamp_t(u32, depth * per_cmd + IST_EXTRA_SENDS, IST_DISCOVERY_RX,
		       IST_MAX_RX);
}

void ist_get_rx_pdu(struct iscsit_conn *conn)
{
	struct ist_conn *ic = conn->context;
	struct completion forever;
	u32 i, n, size;
	int ret;

	if (!ic->login_rsp_pending)
		return;
	ic->login_rsp_pending = false;

	/*
	 * LIO finishes a login without asking an iSER transport whether the
	 * connection is still there (it asks only a TCP socket), e.g. after
	 * a session reinstatement that took a while. A connection that went
	 * down meanwhile asked for its reinstatement before LIO's threads
	 * existed, so no signal will end the wait below: returning is the
	 * receive thread's connection exit.
	 */
	if (isdm_conn_failed(&ic->base)) {
		pr_info_ratelimited("connection from %pISpc: went down before LIO finished its login; closing\n",
				    &ic->src);
		return;
	}

	ic->rx_max_data = conn->conn_ops->TargetRecvDataSegmentLength;
	if (conn->sess->sess_ops->SessionType || !ic->rx_max_data)
		ic->rx_max_data = IST_LOGIN_DATA_MAX;
	size = ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + IST_AHS_MAX +
	       ALIGN(ic->rx_max_data, 4);
	/* one Send slot per LIO command tag: a tag is a slot */
	ret = isdm_tx_ring_alloc(ic->base.dev, &ic->tx_ring,
				 conn->sess->se_sess->sess_tag_pool.sb.depth,
				 IST_TX_SLOT, &ic->base.mode);
	if (ret) {
		pr_err("connection from %pISpc: cannot allocate its Send buffers (%d)\n",
		       &ic->src, ret);
		return;
	}
	n = ist_rx_count(conn);
	/* a WRITE's immediate data may go to a block device in place */
	ret = isdm_rx_ring_alloc(ic->base.dev, &ic->rx_ring, n, size,
				 ic->base.mode.hdr_len + ISDM_BHS_LEN,
				 ist_recv_done);
	if (ret) {
		pr_err("connection from %pISpc: cannot allocate %u receive buffers of %u bytes (%d)\n",
		       &ic->src, n, size, ret);
		return;
	}
	for (i = 0; i < n; i++) {
		ret = isdm_rx_post(ic->base.q.qp, ic->base.dev,
				   &ic->rx_ring.desc[i]);
		if (ret) {
			pr_err("connection from %pISpc: cannot post %u receive buffers of %u bytes (%d)\n",
			       &ic->src, n, size, ret);
			return;
		}
	}

	mutex_lock(&ic->lock);
	if (ic->state == IST_CONN_BOUND)
		ic->state = IST_CONN_FULL_FEATURE;
	ic->view.discovery = conn->sess->sess_ops->SessionType;
	ic->view.tgt_rdsl = conn->conn_ops->TargetRecvDataSegmentLength;
	ic->view.ini_rdsl = conn->conn_ops->InitiatorRecvDataSegmentLength;
	ic->view.max_xmit = conn->conn_ops->MaxXmitDataSegmentLength;
	mutex_unlock(&ic->lock);
	pr_info("%s session from %pISpc: %s header, %s, ORD %u, %u receive buffers of %u bytes\n",
		conn->sess->sess_ops->SessionType ? "discovery" : "normal",
		&ic->src, ic->base.mode.zbva ? "12-byte (ZBVA)" : "28-byte",
		ic->base.mode.send_inv ? "Send with Invalidate" :
					 "no Send with Invalidate",
		ic->ord, n, size);

	if (ist_login_send(ic))
		return;

	/* LIO tears the connection down when this returns; wait for that */
	init_completion(&forever);
	wait_for_completion_interruptible(&forever);
}
