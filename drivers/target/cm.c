// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: the rdma_cm side of a portal: listening, and listening again
 * once the listener's device went away; connection requests, their
 * accept and what the CM REP grants; the routing of CM events to the
 * portal or the connection. Then LIO's portal callbacks: setup_np,
 * accept_np (LIO's login thread takes a connection whose first login PDU
 * arrived) and free_np.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_cm.h>
#include <target/iscsi/iscsi_target_core.h>

#include "ist.h"

/* Annex A12 switches: what the CM REP grants (Documentation/interop.md) */
static struct isdm_feature_param zbva = { .on = true };
module_param_cb(zbva, &isdm_param_zbva_ops, &zbva, 0644);
MODULE_PARM_DESC(zbva,
		 "auto: accept zero-based addressing when offered (12-byte iSER header); off: declare the ZBVA exception (28-byte header) (default auto)");

static struct isdm_feature_param send_inv = { .on = true };
module_param_cb(send_inv, &isdm_param_send_inv_ops, &send_inv, 0644);
MODULE_PARM_DESC(send_inv,
		 "on: use Send with Invalidate when offered; off: declare the exception (plain SendSE responses) (default on)");

/*
 * The RC local ACK timeout of accepted connections. The resend count is
 * the initiator's: the IB CM applies the REQ's to both ends.
 */
static unsigned int ack_timeout;
module_param_cb(ack_timeout, &isdm_param_ack_timeout_ops, &ack_timeout, 0644);
MODULE_PARM_DESC(ack_timeout,
		 "local ACK timeout of accepted connections, 4.096 us * 2^N a try: 10..31, or 0 for rdma_cm's (RoCE: 19 on 6.1, 17 on 6.12) (default 0)");

static void ist_qp_event(struct ib_event *ev, void *ctx)
{
	struct ist_conn *ic = ctx;

	if (ev->event == IB_EVENT_COMM_EST)
		rdma_notify(ic->base.cm_id, ev->event);
	else
		isdm_qp_event_log(ev, &ic->src);
}

static void ist_qp_timers(struct ist_conn *ic)
{
	struct ib_qp_init_attr init_attr;
	struct ib_qp_attr attr;

	if (ib_query_qp(ic->base.q.qp, &attr, IB_QP_TIMEOUT | IB_QP_RETRY_CNT,
			&init_attr))
		return;
	ic->ack_timeout = attr.timeout;
	ic->retry_cnt = attr.retry_cnt;
}

static int ist_accept(struct ist_conn *ic, struct rdma_cm_event *event,
		      const struct isdm_caps *ini)
{
	struct rdma_conn_param cp = {};
	struct isdm_cm_rep rep;
	struct ib_device *ib_dev = ic->base.dev->ib_dev;
	struct isdm_caps ours;
	int ret;

	ret = isdm_cm_set_ack_timeout(ic->base.cm_id, &ack_timeout);
	if (ret)
		return ret;
	isdm_caps_offer(ic->base.dev, &zbva, &send_inv, &ours);
	isdm_cm_negotiate_target(ini, &ours, &ic->base.mode, &rep);
	/*
	 * We issue RDMA Reads: our ORD is the initiator depth, bounded by
	 * what the initiator offers as responder resources (rdma_cm presents
	 * the REQ from our side) and what the device can do.
	 */
	ic->ord = min_t(u32, event->param.conn.initiator_depth,
			ib_dev->attrs.max_qp_init_rd_atom);
	cp.initiator_depth = ic->ord;
	cp.responder_resources = 0;	/* the initiator never reads from us */
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	cp.private_data = &rep;
	cp.private_data_len = sizeof(rep);
	ret = rdma_accept(ic->base.cm_id, &cp);
	if (ret)
		return ret;
	/* the timers the QP got (for debugfs): ours and the REQ's count */
	ist_qp_timers(ic);
	return 0;
}

static int ist_connect_request(struct rdma_cm_id *cm_id,
			       struct rdma_cm_event *event)
{
	struct ist_np *isnp = container_of(cm_id->context, struct ist_np,
					   cm_kind);
	struct iscsi_np *np = isnp->np;
	struct isdm_queue_attr qa = {};
	struct sockaddr_storage src;
	struct isdm_caps ini;
	struct ist_conn *ic;
	bool enabled, removed;
	const char *why, *failed;	/* why refused; why failed during the accept */
	int ret;

	memcpy(&src, &cm_id->route.addr.dst_addr, sizeof(src));
	spin_lock_bh(&np->np_thread_lock);
	enabled = np->enabled;
	spin_unlock_bh(&np->np_thread_lock);
	if (!enabled) {
		pr_info_ratelimited("rejecting %pISpc: portal disabled\n", &src);
		goto reject;
	}

	ret = isdm_cm_req_parse(event->param.conn.private_data,
				event->param.conn.private_data_len, &ini);
	if (ret) {
		pr_warn_ratelimited("rejecting %pISpc: malformed iSER CM private data (%u bytes, %d)\n",
				    &src, event->param.conn.private_data_len, ret);
		goto reject;
	}

	ist_np_make_room(isnp, &src);

	ic = kzalloc(sizeof(*ic), GFP_KERNEL);
	if (!ic)
		goto reject;
	ic->cm_kind = IST_CM_CONN;
	ic->base.cm_id = cm_id;
	ic->isnp = isnp;
	kref_get(&isnp->ref);
	ic->src = src;
	ic->state = IST_CONN_ACCEPTED;
	mutex_init(&ic->lock);
	kref_init(&ic->ref);
	INIT_LIST_HEAD(&ic->np_entry);
	init_completion(&ic->login_req_comp);
	init_completion(&ic->login_tx_done);
	complete_all(&ic->login_tx_done);
	INIT_DELAYED_WORK(&ic->prelogin_work, ist_prelogin_timeout);
	INIT_WORK(&ic->release_work, ist_release_work);
	INIT_WORK(&ic->free_work, ist_conn_destroy_work);
	INIT_LIST_HEAD(&ic->rdma_wait);
	spin_lock_init(&ic->rdma_wait_lock);
	INIT_DELAYED_WORK(&ic->rdma_retry_work, ist_rdma_retry_work);
	INIT_LIST_HEAD(&ic->send_list);
	spin_lock_init(&ic->send_lock);
	spin_lock_init(&ic->itt_lock);
	ic->login_tx.hdr = ic->login_hdr;

	ret = isdm_conn_attach(&ic->base, cm_id->device, &ist_conn_ops);
	if (ret) {
		ist_np_put(isnp);
		kfree(ic);
		pr_warn_ratelimited("rejecting %pISpc: device %s unusable (%d)\n",
				    &src, dev_name(&cm_id->device->dev), ret);
		goto reject;
	}

	why = "no login buffer";
	ret = isdm_login_buf_alloc(ic->base.dev, &ic->login,
				   ISDM_HDR_LEN_EXT + ISDM_BHS_LEN +
				   IST_AHS_MAX + IST_LOGIN_DATA_MAX,
				   IST_LOGIN_DATA_MAX, ist_login_recv_done);
	if (ret)
		goto free;

	/*
	 * Queue sizes. Receives: the login buffer now, up to IST_MAX_RX at
	 * full feature phase (ist_get_rx_pdu() posts what the session's
	 * window needs). Sends: IST_MAX_SENDS responses plus a few
	 * unexpected PDUs. RDMA: IST_MAX_RDMA_CMDS commands of IST_RDMA_PAGES
	 * pages each, in as many contexts as rdma_rw splits such a command
	 * into (by the SGEs of an RDMA Read, or the pages of an MR where it
	 * registers them); rdma_create_qp() adds their WRs to the send
	 * queue. Send SGEs: the device's limit, which is also how many pages
	 * one RDMA Write carries (rdma_rw takes its per-WR limits from the
	 * QP): with 2, a 32 MiB command needed 4096 WRs, more than the whole
	 * send queue, and could never be posted.
	 */
	qa.recv_wr = IST_MAX_RX;
	qa.send_wr = IST_MAX_SENDS + IST_EXTRA_SENDS;
	qa.rdma_ctxs = IST_MAX_RDMA_CMDS *
		rdma_rw_mr_factor(ic->base.dev->ib_dev, cm_id->port_num,
				  IST_RDMA_PAGES);
	qa.send_sge = ic->base.dev->ib_dev->attrs.max_send_sge;
	isdm_credits_init(&ic->rdma, qa.rdma_ctxs);
	qa.poll_ctx = IB_POLL_WORKQUEUE;
	qa.qp_context = ic;
	qa.event_handler = ist_qp_event;
	/* a device out of QPs or CQs fails here: the peer is refused */
	why = "no queues";
	ret = isdm_queues_create(cm_id, ic->base.dev, &ic->base.q, &qa);
	if (ret)
		goto free;

	why = "login receive not posted";
	ret = isdm_rx_post(ic->base.q.qp, ic->base.dev, &ic->login.rx);
	if (ret)
		goto free;

	/* the connection's later events go to ist_conn_cm_event() */
	cm_id->context = &ic->cm_kind;
	why = "accept failed";
	ret = ist_accept(ic, event, &ini);
	if (ret) {
		cm_id->context = &isnp->cm_kind;
		goto free;
	}
	pr_debug("accepted %pISpc: %s header, %s, ORD %u\n", &src,
		 ic->base.mode.zbva ? "12-byte" : "28-byte",
		 ic->base.mode.send_inv ? "SendInv" : "no SendInv", ic->ord);

	/*
	 * On the list and armed in one step. The first message may already
	 * have arrived and failed the connection, or a device removal that
	 * began since the attach may have failed it: either found it off
	 * its portal, where ist_conn_drop_unbound() does nothing, and left
	 * its reason in @unbound_fail. Such a connection is torn down here
	 * instead (once: ist_conn_unlink()); a failure from now on finds it
	 * listed. A timer armed for a connection already torn down would
	 * fire on a freed one, so nothing may touch @ic after the unlock
	 * unless it was unlinked here.
	 */
	mutex_lock(&isnp->lock);
	ic->listed_at = jiffies;
	list_add_tail(&ic->np_entry, &isnp->accepted);
	isnp->nr_accepted++;
	ist_prelogin_arm(ic);
	mutex_lock(&ic->lock);
	removed = ic->dev_removed;
	failed = ic->unbound_fail;
	mutex_unlock(&ic->lock);
	if (failed && !ist_conn_unlink(isnp, ic))
		failed = NULL;
	mutex_unlock(&isnp->lock);
	if (!failed)
		return 0;
	if (removed)
		/* a line of its own: the removal's many closings share one */
		pr_info_ratelimited("closing connection from %pISpc before login: device removed during accept\n",
				    &src);
	else
		pr_info_ratelimited("closing connection from %pISpc before login: %s before its accept ended\n",
				    &src, failed);
	ist_conn_drop_unlinked(ic, NULL);
	return 0;

free:
	pr_warn_ratelimited("rejecting %pISpc: %s on %s (%d)\n", &src, why,
			    dev_name(&cm_id->device->dev), ret);
	ist_conn_free_unaccepted(ic);	/* destroys the queues too */
reject:
	rdma_reject(cm_id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	/*
	 * Non-zero: rdma_cm destroys the new id. Returning rdma_reject()'s 0
	 * would leak it, and with it a reference that keeps rdma_cm's device
	 * removal waiting forever.
	 */
	return -ECONNREFUSED;
}

static int ist_conn_cm_event(struct ist_conn *ic, struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		ic->established = true;
		ist_conn_ready(ic);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		ist_conn_fail(ic, rdma_event_msg(ev->event), ev->status);
		break;
	default:
		pr_debug("conn %p: CM event %s\n", ic, rdma_event_msg(ev->event));
		break;
	}
	return 0;
}

static int ist_cma_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev);

static struct rdma_cm_id *ist_listen(struct ist_np *isnp)
{
	struct sockaddr *sa = (struct sockaddr *)&isnp->np->np_sockaddr;
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, ist_cma_handler, &isnp->cm_kind,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return id;
	/* IPv4 and IPv6 portals may share a port */
	ret = rdma_set_afonly(id, 1);
	if (!ret)
		ret = rdma_bind_addr(id, sa);
	if (!ret)
		ret = rdma_listen(id, 0);
	if (ret) {
		rdma_destroy_id(id);
		return ERR_PTR(ret);
	}
	return id;
}

/*
 * The listener's device went away (or its address moved). rdma_cm must
 * not destroy the id for us: ist_free_np() may be destroying it at the
 * same time. Hand it to the relisten work, which destroys it and listens
 * again once an RDMA device serves the portal's address.
 */
static int ist_np_cm_event(struct ist_np *isnp, struct rdma_cm_id *cm_id,
			   struct rdma_cm_event *ev)
{
	bool lost = false;

	switch (ev->event) {
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		mutex_lock(&isnp->lock);
		if (isnp->cm_id == cm_id && !isnp->dead_id) {
			isnp->cm_id = NULL;
			isnp->dead_id = cm_id;
			lost = true;
			if (!isnp->closing)
				queue_delayed_work(ist_wq, &isnp->relisten_work, 0);
		}
		mutex_unlock(&isnp->lock);
		if (lost)
			pr_info("portal %pISpc: %s, listening again when an RDMA device serves the address\n",
				&isnp->np->np_sockaddr, rdma_event_msg(ev->event));
		return 0;
	default:
		pr_debug("portal %pISpc: CM event %s\n",
			 &isnp->np->np_sockaddr, rdma_event_msg(ev->event));
		return 0;
	}
}

static void ist_relisten_work(struct work_struct *work)
{
	struct ist_np *isnp = container_of(to_delayed_work(work), struct ist_np,
					   relisten_work);
	struct rdma_cm_id *dead, *id;
	bool closing;

	mutex_lock(&isnp->lock);
	dead = isnp->dead_id;
	isnp->dead_id = NULL;
	closing = isnp->closing || isnp->cm_id;
	mutex_unlock(&isnp->lock);
	if (dead)
		rdma_destroy_id(dead);	/* lets rdma_cm finish the removal */
	if (closing)
		return;

	id = ist_listen(isnp);
	mutex_lock(&isnp->lock);
	if (IS_ERR(id)) {
		if (!isnp->closing)
			queue_delayed_work(ist_wq, &isnp->relisten_work,
					   msecs_to_jiffies(IST_RELISTEN_MS));
		id = NULL;
	} else if (!isnp->closing && !isnp->cm_id) {
		isnp->cm_id = id;
		id = NULL;
		pr_info("portal %pISpc: listening again on %s\n",
			&isnp->np->np_sockaddr,
			dev_name(&isnp->cm_id->device->dev));
	}
	mutex_unlock(&isnp->lock);
	if (id)		/* ist_free_np() runs: it does not know this one */
		rdma_destroy_id(id);
}

/*
 * Listening ids and connection ids share this handler (a new connection's
 * id inherits the listener's); the tag the context points to says which
 * one an event is for. A connection's id keeps getting events until
 * ist_conn_destroy_work() destroys it, whatever happened to its QP.
 */
static int ist_cma_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev)
{
	enum ist_cm_kind *kind = cm_id->context;

	if (*kind == IST_CM_CONN)
		return ist_conn_cm_event(container_of(kind, struct ist_conn,
						      cm_kind), ev);
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return ist_connect_request(cm_id, ev);
	return ist_np_cm_event(container_of(kind, struct ist_np, cm_kind),
			       cm_id, ev);
}

/* ------------------------------------------------------------------ */
/* LIO portal callbacks                                               */
/* ------------------------------------------------------------------ */

int ist_setup_np(struct iscsi_np *np, struct sockaddr_storage *ksockaddr)
{
	struct rdma_cm_id *id;
	struct ist_np *isnp;

	isnp = kzalloc(sizeof(*isnp), GFP_KERNEL);
	if (!isnp)
		return -ENOMEM;
	isnp->cm_kind = IST_CM_PORTAL;
	kref_init(&isnp->ref);
	sema_init(&isnp->sem, 0);
	mutex_init(&isnp->lock);
	INIT_LIST_HEAD(&isnp->accepted);
	INIT_LIST_HEAD(&isnp->pending);
	INIT_DELAYED_WORK(&isnp->relisten_work, ist_relisten_work);
	isnp->np = np;
	memcpy(&np->np_sockaddr, ksockaddr, sizeof(*ksockaddr));

	id = ist_listen(isnp);
	if (IS_ERR(id)) {
		pr_err("portal %pISpc: cannot listen (%ld)\n", ksockaddr,
		       PTR_ERR(id));
		kfree(isnp);
		return PTR_ERR(id);
	}
	isnp->cm_id = id;
	np->np_context = isnp;
	pr_info("iSER portal %pISpc enabled\n", ksockaddr);
	return 0;
}

int ist_accept_np(struct iscsi_np *np, struct iscsit_conn *conn)
{
	struct ist_np *isnp = np->np_context;
	struct ist_conn *ic;

	for (;;) {
		if (down_interruptible(&isnp->sem))
			return -ENODEV;
		spin_lock_bh(&np->np_thread_lock);
		if (np->np_thread_state >= ISCSI_NP_THREAD_RESET) {
			spin_unlock_bh(&np->np_thread_lock);
			return -ENODEV;
		}
		spin_unlock_bh(&np->np_thread_lock);

		mutex_lock(&isnp->lock);
		ic = list_first_entry_or_null(&isnp->pending, struct ist_conn,
					      np_entry);
		if (ic) {
			/* off the list and BOUND in one step */
			list_del_init(&ic->np_entry);
			/* LIO's reference, dropped in ist_lio_free_conn() */
			ist_conn_get(ic);
			mutex_lock(&ic->lock);
			ic->conn = conn;
			conn->context = ic;
			if (ic->state == IST_CONN_PENDING)
				ic->state = IST_CONN_BOUND;
			mutex_unlock(&ic->lock);
		}
		mutex_unlock(&isnp->lock);
		if (ic)
			break;
	}

	conn->login_family = np->np_sockaddr.ss_family;
	conn->login_sockaddr = ic->base.cm_id->route.addr.dst_addr;
	conn->local_sockaddr = ic->base.cm_id->route.addr.src_addr;
	return 0;
}

void ist_free_np(struct iscsi_np *np)
{
	struct ist_np *isnp = np->np_context;
	struct rdma_cm_id *id, *dead;
	struct ist_conn *ic;

	mutex_lock(&isnp->lock);
	isnp->closing = true;
	id = isnp->cm_id;
	isnp->cm_id = NULL;
	mutex_unlock(&isnp->lock);
	/* a running relisten work sees @closing and drops its new id */
	cancel_delayed_work_sync(&isnp->relisten_work);
	mutex_lock(&isnp->lock);
	dead = isnp->dead_id;
	isnp->dead_id = NULL;
	mutex_unlock(&isnp->lock);
	/* after this no CONNECT_REQUEST can add to the lists */
	if (id)
		rdma_destroy_id(id);
	if (dead)
		rdma_destroy_id(dead);

	for (;;) {
		mutex_lock(&isnp->lock);
		ic = list_first_entry_or_null(&isnp->accepted, struct ist_conn,
					      np_entry);
		if (!ic)
			ic = list_first_entry_or_null(&isnp->pending,
						      struct ist_conn, np_entry);
		if (ic)
			ist_conn_unlink(isnp, ic);
		mutex_unlock(&isnp->lock);
		if (!ic)
			break;
		ist_conn_drop_unlinked(ic, "portal disabled");
	}
	pr_info("iSER portal %pISpc disabled\n", &np->np_sockaddr);
	np->np_context = NULL;
	isnp->np = NULL;
	/* connections still being released hold the rest */
	ist_np_put(isnp);
}
