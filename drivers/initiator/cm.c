// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: connection establishment over rdma_cm. The transport's
 * ep_connect, ep_poll, ep_disconnect and get_ep_param; address and route
 * resolution, the queues, the CM REQ with its Annex A12 private data
 * (module parameters zbva and send_inv) and the target's REP; the RC
 * transport timers (ack_timeout, retry_count); the CM event handler.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>

#include "isi.h"

#define ISI_RESOLVE_MS		1000

/* Annex A12 switches: what the CM REQ offers (Documentation/interop.md) */
static struct isdm_feature_param zbva = { .on = true };
module_param_cb(zbva, &isdm_param_zbva_ops, &zbva, 0644);
MODULE_PARM_DESC(zbva,
		 "auto: offer zero-based addressing (12-byte iSER header); off: declare the ZBVA exception (28-byte header, absolute addresses) (default auto)");

static struct isdm_feature_param send_inv = { .on = true };
module_param_cb(send_inv, &isdm_param_send_inv_ops, &send_inv, 0644);
MODULE_PARM_DESC(send_inv,
		 "on: offer Send with Invalidate; off: declare the exception, so every STag is invalidated locally (default on)");

/* RC transport timers: how soon unacknowledged Sends fail a dead path */
static unsigned int ack_timeout;
module_param_cb(ack_timeout, &isdm_param_ack_timeout_ops, &ack_timeout, 0644);
MODULE_PARM_DESC(ack_timeout,
		 "local ACK timeout of new connections, 4.096 us * 2^N a try: 10..31, or 0 for rdma_cm's (RoCE: 19 on 6.1, 17 on 6.12) (default 0)");

static unsigned int retry_count = 7;
module_param_cb(retry_count, &isdm_param_retry_count_ops, &retry_count, 0644);
MODULE_PARM_DESC(retry_count,
		 "transport resends of an unacknowledged WR before the connection fails, for both ends (REQ): 1..7 (default 7)");

static void isi_qp_event(struct ib_event *ev, void *ctx)
{
	struct isi_conn *ic = ctx;

	isdm_qp_event_log(ev, &ic->dst);
}

static int isi_addr_resolved(struct isi_conn *ic)
{
	int ret;

	/*
	 * -ENODEV for a device being removed; -EOPNOTSUPP, logged by the
	 * core, for one without fast registration
	 */
	ret = isdm_conn_attach(&ic->base, ic->base.cm_id->device,
			       &isi_conn_ops);
	if (ret)
		return ret;
	/* before route resolution: rdma_cm sizes the path's lifetime by it */
	ret = isdm_cm_set_ack_timeout(ic->base.cm_id, &ack_timeout);
	if (ret)
		return ret;
	return rdma_resolve_route(ic->base.cm_id, ISI_RESOLVE_MS);
}

static int isi_route_resolved(struct isi_conn *ic)
{
	struct ib_device *ib_dev = ic->base.dev->ib_dev;
	struct isdm_queue_attr qa = {};
	struct rdma_conn_param param = {};
	struct isdm_cm_req req;
	int ret;

	ret = isi_rx_init(ic);
	if (ret)
		return ret;
	/*
	 * Per task: REG_MR, the Send and the LOCAL_INV after a response
	 * without remote invalidation; then the unsolicited Data-Outs in
	 * flight and the LOCAL_INV of an MR a reset left valid. A full queue
	 * is backpressure, not an error: the Send waits (isdm_credits_take(),
	 * -EAGAIN to libiscsi). 504, plus the drain WR and soft-RoCE's empty
	 * slot, is 506: 512 slots once rounded up to a power of two (with
	 * room for four WRs per task it took 1024).
	 */
	isdm_credits_init(&ic->sq, ISI_CMDS_MAX * 3 + ISI_DATAOUT_MAX);
	qa.send_wr = ic->sq.size;
	/* one per task and the unsolicited ones (isi_rx_count()), login */
	qa.recv_wr = ISI_CMDS_MAX + ISI_RX_EXTRA + 1;
	/* the buffer, then the shared spill buffer (isi_rx_post()) */
	qa.recv_sge = 2;
	/* headers, then data by MR, or the pages of an all-immediate WRITE */
	qa.send_sge = 1 + ISI_IMM_SGE;
	qa.poll_ctx = IB_POLL_SOFTIRQ;
	qa.qp_context = ic;
	qa.event_handler = isi_qp_event;
	ret = isdm_queues_create(ic->base.cm_id, ic->base.dev, &ic->base.q,
				 &qa);
	if (ret)
		return ret;
	ic->imm_sge = min_t(u32, ib_dev->attrs.max_send_sge, 1 + ISI_IMM_SGE) - 1;

	/* a Send that finds no receive buffer is retried after 0.32 ms */
	ret = rdma_set_min_rnr_timer(ic->base.cm_id, IB_RNR_TIMER_000_32);
	if (ret)
		return ret;
	isdm_caps_offer(ic->base.dev, &zbva, &send_inv, &ic->offer);
	isdm_cm_req_build(&req, &ic->offer);
	param.private_data = &req;
	param.private_data_len = sizeof(req);
	param.responder_resources = ib_dev->attrs.max_qp_rd_atom;
	param.initiator_depth = 1;
	param.retry_count = READ_ONCE(retry_count);
	param.rnr_retry_count = 7;
	return rdma_connect_locked(ic->base.cm_id, &param);
}

static int isi_established(struct isi_conn *ic, struct rdma_cm_event *ev)
{
	struct ib_qp_init_attr init_attr;
	struct ib_qp_attr attr;
	int ret;

	ret = isdm_cm_rep_parse(ev->param.conn.private_data,
				ev->param.conn.private_data_len,
				&ic->offer, &ic->base.mode);
	if (ret) {
		pr_err_ratelimited("bad CM REP private data: %d\n", ret);
		return ret;
	}
	if (ic->base.mode.peer_violation)
		pr_warn_ratelimited("target's REP claims a feature we did not offer; ignored\n");
	ic->rep_pd = ev->param.conn.private_data &&
		     ev->param.conn.private_data_len;
	if (!ib_query_qp(ic->base.q.qp, &attr, IB_QP_MAX_QP_RD_ATOMIC |
			 IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_TIMEOUT |
			 IB_QP_RETRY_CNT, &init_attr)) {
		ic->ord = attr.max_rd_atomic;
		ic->ird = attr.max_dest_rd_atomic;
		ic->ack_timeout = attr.timeout;
		ic->retry_cnt = attr.retry_cnt;
	}
	ic->established = true;
	ic->state = ISI_UP;
	wake_up_all(&ic->wq);
	pr_debug("connected: zbva %d send_inv %d hdr %u\n", ic->base.mode.zbva,
		 ic->base.mode.send_inv, ic->base.mode.hdr_len);
	return 0;
}

static int isi_cma_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev)
{
	struct isi_conn *ic = cm_id->context;
	bool cm_destroys = false;
	int ret = 0;

	mutex_lock(&ic->lock);
	if (ic->base.cm_id != cm_id)
		goto out;
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (ic->state == ISI_PENDING)
			ret = isi_addr_resolved(ic);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (ic->state == ISI_PENDING)
			ret = isi_route_resolved(ic);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (ic->state == ISI_PENDING)
			ret = isi_established(ic, ev);
		break;
	case RDMA_CM_EVENT_REJECTED:
		pr_info_ratelimited("connection rejected: %s\n",
				    rdma_reject_msg(cm_id, ev->status));
		isi_cm_failed(ic, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		pr_info_ratelimited("connection failed: %s (%d)\n",
				    rdma_event_msg(ev->event), ev->status);
		isi_cm_failed(ic, -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		isi_cm_failed(ic, -ECONNRESET);
		/*
		 * An id the core's removal did not release: bound to the
		 * device by address resolution, but never attached (the
		 * attach came after the removal began, or not yet). It has
		 * no queues; rdma_cm waits for it to be destroyed, so it
		 * must not wait for iscsid's ep_disconnect: rdma_cm
		 * destroys it when we return non-zero.
		 */
		if (!ic->base.dev) {
			ic->base.cm_id = NULL;
			cm_destroys = true;
		}
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		if (isi_in_use(ic))
			pr_info_ratelimited("connection with %pISpc ended by the CM: %s\n",
					    &ic->dst, rdma_event_msg(ev->event));
		isi_cm_failed(ic, -ECONNRESET);
		break;
	default:
		break;
	}
	if (ret) {
		pr_info_ratelimited("connection to %pISpc: setup failed at %s (%d)\n",
				    &ic->dst, rdma_event_msg(ev->event), ret);
		isi_cm_failed(ic, ret);
	}
out:
	mutex_unlock(&ic->lock);
	/* otherwise the id stays ours: released by rdma_destroy_id() */
	return cm_destroys;
}

/**
 * isi_ep_connect() - the transport's ep_connect: connect to a target
 * @shost: not used
 * @dst: the target's address, IPv4 or IPv6
 * @non_blocking: return at once instead of waiting until the connection
 *	is up or has failed
 *
 * Creates the connection (&struct isi_conn) and its rdma_cm id and starts
 * resolving @dst; the CM event handler does the rest.
 *
 * Return: the endpoint, or an ERR_PTR().
 */
struct iscsi_endpoint *isi_ep_connect(struct Scsi_Host *shost,
				      struct sockaddr *dst,
				      int non_blocking)
{
	struct iscsi_endpoint *ep;
	struct isi_conn *ic;
	int ret;

	if (dst->sa_family != AF_INET && dst->sa_family != AF_INET6)
		return ERR_PTR(-EAFNOSUPPORT);
	ep = iscsi_create_endpoint(0);
	if (!ep)
		return ERR_PTR(-ENOMEM);
	ic = kzalloc(sizeof(*ic), GFP_KERNEL);
	if (!ic) {
		ret = -ENOMEM;
		goto destroy_ep;
	}
	mutex_init(&ic->lock);
	init_waitqueue_head(&ic->wq);
	init_completion(&ic->stop_comp);
	INIT_WORK(&ic->release_work, isi_release_work);
	INIT_LIST_HEAD(&ic->fr_free);
	spin_lock_init(&ic->fr_lock);
	ic->reg_cqe.done = isi_reg_done;
	INIT_LIST_HEAD(&ic->entry);
	ic->ep = ep;
	memcpy(&ic->dst, dst, rdma_addr_size(dst));
	ic->state = ISI_PENDING;
	ep->dd_data = ic;

	ic->base.cm_id = rdma_create_id(&init_net, isi_cma_handler, ic,
					RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(ic->base.cm_id)) {
		ret = PTR_ERR(ic->base.cm_id);
		kfree(ic);
		goto destroy_ep;
	}
	mutex_lock(&isi_conn_mutex);
	list_add_tail(&ic->entry, &isi_conn_list);
	mutex_unlock(&isi_conn_mutex);

	ret = rdma_resolve_addr(ic->base.cm_id, NULL, dst, ISI_RESOLVE_MS);
	if (ret) {
		pr_info_ratelimited("rdma_resolve_addr failed: %d\n", ret);
		isi_conn_release(ic);
		goto destroy_ep;
	}
	if (!non_blocking)
		wait_event_interruptible(ic->wq,
					 READ_ONCE(ic->state) != ISI_PENDING);
	return ep;

destroy_ep:
	iscsi_destroy_endpoint(ep);
	return ERR_PTR(ret);
}

/**
 * isi_ep_poll() - the transport's ep_poll
 * @ep: the endpoint
 * @timeout_ms: how long to wait for the connection to leave %ISI_PENDING
 *
 * Return: 1 when the connection is up, 0 while it is pending, -1 when it
 * failed, or a negative errno when a signal ended the wait.
 */
int isi_ep_poll(struct iscsi_endpoint *ep, int timeout_ms)
{
	struct isi_conn *ic = ep->dd_data;
	long rc;

	rc = wait_event_interruptible_timeout(ic->wq,
					      READ_ONCE(ic->state) != ISI_PENDING,
					      msecs_to_jiffies(timeout_ms));
	if (rc < 0)
		return rc;
	switch (READ_ONCE(ic->state)) {
	case ISI_UP:
		return 1;
	case ISI_PENDING:
		return 0;
	default:
		return -1;
	}
}

/**
 * isi_ep_disconnect() - the transport's ep_disconnect
 * @ep: the endpoint, destroyed here
 *
 * Terminates the connection and releases it: now if no iSCSI connection
 * is bound to it, otherwise from the release work once stop_conn has
 * unbound it.
 */
void isi_ep_disconnect(struct iscsi_endpoint *ep)
{
	struct isi_conn *ic = ep->dd_data;
	bool bound;

	mutex_lock(&ic->lock);
	isi_conn_terminate(ic);
	ic->ep = NULL;
	bound = ic->iconn;
	if (bound)
		queue_work(isi_release_wq, &ic->release_work);
	mutex_unlock(&ic->lock);
	if (!bound)
		isi_conn_release(ic);
	ep->dd_data = NULL;
	iscsi_destroy_endpoint(ep);
}

/**
 * isi_get_ep_param() - the transport's get_ep_param
 * @ep: the endpoint
 * @param: %ISCSI_PARAM_CONN_PORT or %ISCSI_PARAM_CONN_ADDRESS
 * @buf: the value is printed here
 *
 * Return: the length printed; -ENOTCONN without a connection or an
 * rdma_cm id; -EINVAL for another parameter.
 */
int isi_get_ep_param(struct iscsi_endpoint *ep, enum iscsi_param param,
		     char *buf)
{
	struct isi_conn *ic = ep->dd_data;
	int ret = -ENOTCONN;

	switch (param) {
	case ISCSI_PARAM_CONN_PORT:
	case ISCSI_PARAM_CONN_ADDRESS:
		if (!ic)
			return -ENOTCONN;
		mutex_lock(&ic->lock);
		if (ic->base.cm_id) {
			struct rdma_addr *addr = &ic->base.cm_id->route.addr;

			ret = iscsi_conn_get_addr_param(&addr->dst_addr, param,
							buf);
		}
		mutex_unlock(&ic->lock);
		return ret;
	default:
		return -EINVAL;
	}
}
