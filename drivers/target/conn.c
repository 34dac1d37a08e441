// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: portals, connection set-up and teardown, and login.
 *
 * Lifecycle of a connection (&enum ist_conn_state):
 *
 *   CONNECT_REQUEST -> ACCEPTED -> (first login PDU) -> PENDING
 *     -> (LIO's login thread, ist_accept_np) -> BOUND
 *     -> (final login response, ist_get_rx_pdu) -> FULL_FEATURE
 *     -> TERMINATING -> DOWN
 *
 * A connection reaches LIO only once its first login PDU has arrived, so
 * peers that connect and stay silent never occupy LIO's one login thread;
 * they are closed after prelogin_timeout and bounded per portal and per
 * source address (the oldest is evicted when a bound is reached).
 *
 * References: one for the CM side, dropped by the release work; one for
 * LIO, taken in ist_accept_np() and dropped in ist_free_conn(); one for
 * the pre-login timer while it is queued or runs. The last put only queues
 * the free work, which destroys the rdma_cm id, then the QP, then the
 * buffers: no release ever runs in a CM handler, the connection's own or
 * the listener's.
 *
 * Lock order: ist_np.lock, then ist_conn.lock.
 *
 * Teardown is always: rdma_disconnect(), drain the QP, release in a work
 * item. Before LIO owns a connection the driver tears it down itself (the
 * release work disconnects); once LIO owns it, the driver asks LIO for a
 * reinstatement and LIO calls ist_wait_conn() and ist_free_conn().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <net/sock.h>
#include <rdma/ib_cm.h>
#include <target/iscsi/iscsi_target_core.h>
#include <target/target_core_fabric.h>

#include "isdm/compat.h"
#include "ist.h"

static unsigned int prelogin_timeout = 15;
module_param(prelogin_timeout, uint, 0644);
MODULE_PARM_DESC(prelogin_timeout,
		 "Seconds a connection may wait for its first login PDU (default 15)");

static unsigned int max_prelogin_per_portal = 64;
module_param(max_prelogin_per_portal, uint, 0644);
MODULE_PARM_DESC(max_prelogin_per_portal,
		 "Connections per portal waiting for their first login PDU (default 64)");

static unsigned int max_prelogin_per_source = 8;
module_param(max_prelogin_per_source, uint, 0644);
MODULE_PARM_DESC(max_prelogin_per_source,
		 "Connections per source address waiting for their first login PDU (default 8)");

/* Annex A12 switches: what the CM REP grants (Documentation/interop.md) */
static struct isdm_feature_param zbva = { .on = true };
module_param_cb(zbva, &isdm_param_zbva_ops, &zbva, 0644);
MODULE_PARM_DESC(zbva,
		 "auto: accept zero-based addressing when offered (12-byte iSER header); off: declare the ZBVA exception (28-byte header) (default auto)");

static struct isdm_feature_param send_inv = { .on = true };
module_param_cb(send_inv, &isdm_param_send_inv_ops, &send_inv, 0644);
MODULE_PARM_DESC(send_inv,
		 "on: use Send with Invalidate when offered; off: declare the exception (plain SendSE responses) (default on)");

/* all connections, for device removal */
static LIST_HEAD(ist_conn_list);
static DEFINE_MUTEX(ist_conn_list_mutex);

static void ist_release_work(struct work_struct *work);
static void ist_free_work(struct work_struct *work);
static void ist_prelogin_timeout(struct work_struct *work);
static void ist_login_recv_done(struct ib_cq *cq, struct ib_wc *wc);
static void ist_login_send_done(struct ib_cq *cq, struct ib_wc *wc);

/* ------------------------------------------------------------------ */
/* state and teardown                                                 */
/* ------------------------------------------------------------------ */

static void ist_np_release(struct kref *ref)
{
	kfree(container_of(ref, struct ist_np, ref));
}

static void ist_np_put(struct ist_np *isnp)
{
	kref_put(&isnp->ref, ist_np_release);
}

static void ist_conn_get(struct ist_conn *ic)
{
	kref_get(&ic->ref);
}

/* The queues (if the id is still there, with it) and the buffers. */
static void ist_conn_destroy_bufs(struct ist_conn *ic)
{
	isdm_queues_destroy(&ic->base.q);
	isdm_rx_ring_free(ic->base.dev, &ic->rx_ring);
	ic->rx = NULL;
	isdm_tx_ring_free(ic->base.dev, &ic->tx_ring);
	isdm_tx_unmap(ic->base.dev, &ic->login_tx);
	isdm_login_buf_free(ic->base.dev, &ic->login);
}

/* Free a connection whose rdma_cm id rdma_cm destroys (CONNECT_REQUEST). */
static void ist_conn_free(struct ist_conn *ic)
{
	ist_conn_destroy_bufs(ic);
	isdm_device_put(ic->base.dev);
	ist_np_put(ic->isnp);
	kfree(ic);
}

/*
 * The last reference is gone. The release is deferred to a work item: the
 * last put may come from a CM handler (an eviction runs in the listener's
 * CONNECT_REQUEST), and rdma_destroy_id() of another id there nests two
 * ids' handler mutexes and, on iWARP, waits for events queued behind the
 * running handler on iw_cm's ordered workqueue.
 */
static void ist_conn_release(struct kref *ref)
{
	struct ist_conn *ic = container_of(ref, struct ist_conn, ref);

	queue_work(ist_wq, &ic->free_work);
}

static void ist_free_work(struct work_struct *work)
{
	struct ist_conn *ic = container_of(work, struct ist_conn, free_work);

	cancel_delayed_work_sync(&ic->rdma_retry_work);
	/* the id first: no handler can then see the connection half gone */
	isdm_queues_destroy_id(&ic->base.q);
	ist_conn_destroy_bufs(ic);

	mutex_lock(&ist_conn_list_mutex);
	list_del(&ic->entry);
	mutex_unlock(&ist_conn_list_mutex);

	isdm_device_put(ic->base.dev);
	ist_np_put(ic->isnp);
	kfree(ic);
}

static void ist_conn_put(struct ist_conn *ic)
{
	kref_put(&ic->ref, ist_conn_release);
}

/*
 * The pre-login timer holds a reference while it is queued or runs: a
 * work that already runs cannot be cancelled, and it must not find its
 * connection freed. Whoever cancels it successfully drops that reference;
 * otherwise the work drops it when done. Cancelling with _sync is no
 * option: the callers hold ist_np.lock, which the work takes, or run in a
 * CM handler.
 */
static void ist_prelogin_arm(struct ist_conn *ic)
{
	ist_conn_get(ic);
	if (!queue_delayed_work(ist_wq, &ic->prelogin_work,
				prelogin_timeout * HZ))
		ist_conn_put(ic);	/* cannot happen: armed once */
}

static void ist_prelogin_cancel(struct ist_conn *ic)
{
	if (cancel_delayed_work(&ic->prelogin_work))
		ist_conn_put(ic);	/* never the last: the CM side's is held */
}

/* Disconnect once; the caller holds ic->lock. */
static void ist_conn_terminate(struct ist_conn *ic)
{
	int ret;

	lockdep_assert_held(&ic->lock);
	if (ic->state >= IST_CONN_TERMINATING)
		return;
	ic->state = IST_CONN_TERMINATING;
	ret = rdma_disconnect(ic->base.cm_id);
	if (ret)
		pr_debug("conn %p: rdma_disconnect: %d\n", ic, ret);
}

/*
 * Take a connection LIO does not own off its portal's list. Whoever does
 * owns its teardown, so the timer, an eviction, a CM event and the portal
 * going away may race: exactly one of them gets true.
 */
static bool ist_conn_unlink(struct ist_np *isnp, struct ist_conn *ic)
{
	lockdep_assert_held(&isnp->lock);
	if (list_empty(&ic->np_entry))
		return false;
	mutex_lock(&ic->lock);
	if (ic->state == IST_CONN_ACCEPTED)
		isnp->nr_accepted--;
	mutex_unlock(&ic->lock);
	list_del_init(&ic->np_entry);
	ist_prelogin_cancel(ic);
	return true;
}

/*
 * Tear down a connection the caller unlinked. The release work does the
 * disconnect too: this may run in the listener's CONNECT_REQUEST handler
 * (an eviction), where rdma_disconnect() of another id can block on iWARP
 * until that id's ESTABLISHED event, queued behind the running handler,
 * has been handled.
 */
static void ist_conn_drop_unlinked(struct ist_conn *ic, const char *why)
{
	pr_info_ratelimited("closing connection from %pISpc before login: %s\n",
			    &ic->src, why);
	queue_work(ist_wq, &ic->release_work);
}

/* Tear down a connection LIO does not own, unless someone else does. */
static void ist_conn_drop_unbound(struct ist_conn *ic, const char *why)
{
	struct ist_np *isnp = ic->isnp;
	bool mine;

	mutex_lock(&isnp->lock);
	mine = ist_conn_unlink(isnp, ic);
	mutex_unlock(&isnp->lock);
	if (mine)
		ist_conn_drop_unlinked(ic, why);
}

/*
 * LIO's login work runs only when we queue it (for TCP, a socket state
 * change does that too). A connection that goes away between login PDUs
 * must wake it, or the half-done login keeps its session and ACL forever:
 * ist_get_login_rx() then fails and LIO drops the login. While LIO still
 * works on a PDU, ist_put_login_tx() wakes it once it waits again; not at
 * all once the final response is built (LIO has released the login).
 */
static void ist_login_wake(struct ist_conn *ic)
{
	lockdep_assert_held(&ic->lock);
	complete(&ic->login_req_comp);
	queue_delayed_work(ist_login_wq, &ic->conn->login_work, 0);
}

static bool ist_login_abort(struct ist_conn *ic)
{
	bool abort;

	mutex_lock(&ic->lock);
	abort = ic->state == IST_CONN_BOUND && ic->conn && !ic->login_done &&
		!ic->login_closed;
	if (abort) {
		ic->login_closed = true;
		if (ic->login_waiting)
			ist_login_wake(ic);
	}
	mutex_unlock(&ic->lock);
	return abort;
}

/**
 * ist_conn_fail() - take down a connection after an error
 * @ic: the connection
 * @why: for the log line
 * @err: the error
 *
 * A connection LIO owns is reinstated by LIO, which then calls
 * ist_wait_conn(); one it does not own is torn down here.
 */
void ist_conn_fail(struct ist_conn *ic, const char *why, int err)
{
	enum ist_conn_state state;
	bool first;

	mutex_lock(&ic->lock);
	state = ic->state;
	/* LIO's reinstatement is asked for once, and logged once */
	first = !ic->failed;
	/* read without the lock by ist_recv_done() */
	if (state == IST_CONN_BOUND || state == IST_CONN_FULL_FEATURE)
		WRITE_ONCE(ic->failed, true);
	mutex_unlock(&ic->lock);

	switch (state) {
	case IST_CONN_ACCEPTED:
	case IST_CONN_PENDING:
		ist_conn_drop_unbound(ic, why);
		break;
	case IST_CONN_BOUND:
		if (!first)
			break;
		if (ist_login_abort(ic))
			pr_info_ratelimited("connection from %pISpc: %s during login; login dropped\n",
					    &ic->src, why);
		fallthrough;
	case IST_CONN_FULL_FEATURE:
		if (!first)
			break;
		if (err)
			pr_err_ratelimited("connection from %pISpc: %s (%d); closing\n",
					   &ic->src, why, err);
		else
			pr_info_ratelimited("connection from %pISpc: %s; closing\n",
					    &ic->src, why);
		iscsit_cause_connection_reinstatement(ic->conn, 0);
		break;
	default:
		break;
	}
}

/**
 * ist_wc_failed() - a work request of @ic did not complete
 * @ic: the connection
 * @wc: its completion, not IB_WC_SUCCESS
 * @what: the work request, for the log line
 *
 * A flushed one fails the connection too: the queue pair may have gone
 * into error through a work request whose own error completion no handler
 * saw (rdma_rw signals only the last RDMA Read or Write of a chain, and
 * ib_core drops an error completion that has no cqe), so a flush may be
 * the first and only sign of a failed RDMA transfer, for example one that
 * overran the initiator's STag. While the connection is being closed
 * anyway, ist_conn_fail() does nothing.
 */
void ist_wc_failed(struct ist_conn *ic, const struct ib_wc *wc,
		   const char *what)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		ist_conn_fail(ic, "work request flushed (the queue pair is in error)",
			      0);
	else
		ist_conn_fail(ic, what, wc->status);
}

static void ist_release_work(struct work_struct *work)
{
	struct ist_conn *ic = container_of(work, struct ist_conn, release_work);

	mutex_lock(&ic->lock);
	ist_conn_terminate(ic);		/* unbound ones; LIO's did it already */
	mutex_unlock(&ic->lock);
	isdm_queues_drain(&ic->base.q);
	mutex_lock(&ic->lock);
	ic->state = IST_CONN_DOWN;
	mutex_unlock(&ic->lock);
	ist_conn_put(ic);
}

static void ist_prelogin_timeout(struct work_struct *work)
{
	struct ist_conn *ic = container_of(to_delayed_work(work),
					   struct ist_conn, prelogin_work);

	ist_conn_drop_unbound(ic, "no login request in time");
	ist_conn_put(ic);		/* the timer's */
}

/* ------------------------------------------------------------------ */
/* connection requests                                                */
/* ------------------------------------------------------------------ */

static bool ist_same_source(const struct sockaddr_storage *a,
			    const struct sockaddr_storage *b)
{
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr);
	return false;
}

/*
 * Make room for one more pre-login connection from @src: evict the oldest
 * from the same source when that source is at its bound, else the oldest
 * of the portal when the portal is. Runs in the listener's CM handler:
 * the victim is unlinked here and left to its release work, without a
 * reference of ours, so nothing here can be its last put.
 */
static void ist_np_make_room(struct ist_np *isnp,
			     const struct sockaddr_storage *src)
{
	struct ist_conn *ic, *oldest_src = NULL, *victim = NULL;
	unsigned int from_src = 0;

	mutex_lock(&isnp->lock);
	list_for_each_entry(ic, &isnp->accepted, np_entry) {
		if (!ist_same_source(&ic->src, src))
			continue;
		if (!oldest_src)
			oldest_src = ic;
		from_src++;
	}
	if (max_prelogin_per_source && from_src >= max_prelogin_per_source)
		victim = oldest_src;
	else if (max_prelogin_per_portal &&
		 isnp->nr_accepted >= max_prelogin_per_portal)
		victim = list_first_entry(&isnp->accepted, struct ist_conn,
					  np_entry);
	if (victim && !ist_conn_unlink(isnp, victim))
		victim = NULL;
	mutex_unlock(&isnp->lock);

	if (victim)
		ist_conn_drop_unlinked(victim, "too many connections waiting for login");
}

static void ist_qp_event(struct ib_event *ev, void *ctx)
{
	struct ist_conn *ic = ctx;

	if (ev->event == IB_EVENT_COMM_EST)
		rdma_notify(ic->base.cm_id, ev->event);
	else
		pr_debug("conn %p: QP event %s\n", ic, ib_event_msg(ev->event));
}

static int ist_accept(struct ist_conn *ic, struct rdma_cm_event *event,
		      const struct isdm_caps *ini)
{
	struct rdma_conn_param cp = {};
	struct isdm_cm_rep rep;
	struct ib_device *ib_dev = ic->base.dev->ib_dev;
	struct isdm_caps ours;

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
	return rdma_accept(ic->base.cm_id, &cp);
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
	bool enabled;
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
	INIT_LIST_HEAD(&ic->entry);
	init_completion(&ic->login_req_comp);
	init_completion(&ic->login_tx_done);
	complete_all(&ic->login_tx_done);
	INIT_DELAYED_WORK(&ic->prelogin_work, ist_prelogin_timeout);
	INIT_WORK(&ic->release_work, ist_release_work);
	INIT_WORK(&ic->free_work, ist_free_work);
	INIT_LIST_HEAD(&ic->rdma_wait);
	spin_lock_init(&ic->rdma_wait_lock);
	INIT_DELAYED_WORK(&ic->rdma_retry_work, ist_rdma_retry_work);
	INIT_LIST_HEAD(&ic->send_list);
	spin_lock_init(&ic->send_lock);
	ic->login_tx.hdr = ic->login_hdr;
	ic->hello_tx.hdr = (u8 *)&ic->hello_reply;

	ic->base.dev = isdm_device_get(cm_id->device);
	if (IS_ERR(ic->base.dev)) {
		ret = PTR_ERR(ic->base.dev);
		ist_np_put(isnp);
		kfree(ic);
		pr_warn_ratelimited("rejecting %pISpc: device %s unusable (%d)\n",
				    &src, dev_name(&cm_id->device->dev), ret);
		goto reject;
	}

	ret = isdm_login_buf_alloc(ic->base.dev, &ic->login,
				   ISDM_HDR_LEN_EXT + ISDM_BHS_LEN +
				   IST_AHS_MAX + IST_LOGIN_DATA_MAX,
				   IST_LOGIN_DATA_MAX, ist_login_recv_done);
	if (ret)
		goto free;

	/*
	 * Queue sizes. Receives: the login buffer now, up to IST_MAX_RX at
	 * full feature phase (ist_get_rx_pdu() posts what the session's
	 * window needs). Sends: one response per receive buffer plus a few
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
	qa.send_wr = IST_MAX_RX + IST_EXTRA_SENDS;
	qa.rdma_ctxs = IST_MAX_RDMA_CMDS *
		rdma_rw_mr_factor(ic->base.dev->ib_dev, cm_id->port_num,
				  IST_RDMA_PAGES);
	qa.send_sge = ic->base.dev->ib_dev->attrs.max_send_sge;
	ic->rdma_wrs = qa.rdma_ctxs;
	atomic_set(&ic->rdma_avail, ic->rdma_wrs);
	qa.poll_ctx = IB_POLL_WORKQUEUE;
	qa.qp_context = ic;
	qa.event_handler = ist_qp_event;
	ret = isdm_queues_create(cm_id, ic->base.dev, &ic->base.q, &qa);
	if (ret)
		goto free;

	ret = isdm_rx_post(ic->base.q.qp, ic->base.dev, &ic->login.rx);
	if (ret)
		goto free;

	/* the connection's later events go to ist_conn_cm_event() */
	cm_id->context = &ic->cm_kind;
	ret = ist_accept(ic, event, &ini);
	if (ret) {
		cm_id->context = &isnp->cm_kind;
		goto free;
	}
	pr_debug("accepted %pISpc: %s header, %s, ORD %u\n", &src,
		 ic->base.mode.zbva ? "12-byte" : "28-byte",
		 ic->base.mode.send_inv ? "SendInv" : "no SendInv", ic->ord);

	mutex_lock(&ist_conn_list_mutex);
	list_add_tail(&ic->entry, &ist_conn_list);
	mutex_unlock(&ist_conn_list_mutex);

	/*
	 * On the list and armed in one step: the first message may already
	 * have arrived and failed the connection (ist_conn_drop_unbound()),
	 * and a timer armed after that would fire on a freed connection.
	 * Nothing may touch @ic after the unlock.
	 */
	mutex_lock(&isnp->lock);
	list_add_tail(&ic->np_entry, &isnp->accepted);
	isnp->nr_accepted++;
	ist_prelogin_arm(ic);
	mutex_unlock(&isnp->lock);
	return 0;

free:
	ist_conn_free(ic);	/* destroys the queues too */
reject:
	rdma_reject(cm_id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	/*
	 * Non-zero: rdma_cm destroys the new id. Returning rdma_reject()'s 0
	 * would leak it, and with it a reference that keeps rdma_cm's device
	 * removal waiting forever.
	 */
	return -ECONNREFUSED;
}

/* Hand a connection to LIO's login thread once it is usable. */
static void ist_conn_ready(struct ist_conn *ic)
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
 * ist_free_work() destroys it, whatever happened to its QP.
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
			/* LIO's reference, dropped in ist_free_conn() */
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

/* for debugfs: sessions ist_close_session_now() sent each way */
static atomic_t ist_erl0_closes = ATOMIC_INIT(0);
static atomic_t ist_t2r_skipped = ATOMIC_INIT(0);

/*
 * Keep LIO's Time2Retain timer out of every session close it can avoid.
 * LIO closes a session from that timer in softirq context, where the
 * close takes a mutex (transport_deregister_session() ->
 * target_for_each_device()) and se_tpg->session_lock, which LIO also
 * holds where it takes locks that are not softirq-safe (6.1 and 6.12; the
 * debug kernel reports a sleeping function called from invalid context
 * and an irq lock inversion). Even a handler that only finds the session
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
 *   DefaultTime2Retain 0 the timer may expire in between (the likely
 *   way to the irq lock inversion the debug kernel reported in
 *   ffp-hostile, whose reinstating logins offer 0). Such a session is
 *   closed at once whatever the timer does, so tell LIO not to start it:
 *   session_continuation, which otherwise means that a login is adding a
 *   connection to the failed session; none can to this one, since the
 *   login path skips a session being closed.
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
 * side by side (ffp-hostile's addconn).
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
	ist_sends_reap_quiet(ic);
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

void ist_free_conn(struct iscsit_conn *conn)
{
	struct ist_conn *ic = conn->context;

	isdm_queues_drain(&ic->base.q);
	ist_conn_put(ic);
}

/* ------------------------------------------------------------------ */
/* login                                                              */
/* ------------------------------------------------------------------ */

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

static void ist_login_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ist_conn *ic = wc->qp->qp_context;
	struct isdm_rx_pdu pdu;
	struct iscsi_login *login;
	int ret;

	if (wc->status != IB_WC_SUCCESS) {
		ist_wc_failed(ic, wc, "login receive failed");
		return;
	}
	ib_dma_sync_single_for_cpu(ic->base.dev->ib_dev, ic->login.rx.dma,
				   ic->login.rx.size, DMA_FROM_DEVICE);
	ret = isdm_rx_parse(ic->login.rx.buf, wc->byte_len, &ic->base.mode,
			    ISDM_ROLE_TARGET, ISDM_PHASE_LOGIN,
			    IST_LOGIN_DATA_MAX, &pdu);
	if (ret) {
		pr_warn_ratelimited("connection from %pISpc: bad login PDU (%u bytes, %d)\n",
				    &ic->src, wc->byte_len, ret);
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
	login = ic->conn ? ic->conn->conn_login : NULL;
	if (ic->state != IST_CONN_BOUND || !login || login->first_request) {
		mutex_unlock(&ic->lock);
		ist_conn_fail(ic, "unexpected login PDU", -EPROTO);
		return;
	}
	ic->login_len = wc->byte_len;
	ic->login_waiting = false;
	ist_login_to_lio(ic, login);
	queue_delayed_work(ist_login_wq, &ic->conn->login_work, 0);
	complete(&ic->login_req_comp);
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
	if (ret)
		return ret;
	reinit_completion(&ic->login_req_comp);
	mutex_lock(&ic->lock);
	ret = ic->login_closed ? -ENOTCONN : 0;
	mutex_unlock(&ic->lock);
	return ret;
}

static void ist_login_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ist_conn *ic = wc->qp->qp_context;

	if (wc->status != IB_WC_SUCCESS)
		ist_wc_failed(ic, wc, "login send failed");
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
	int ret;

	if (length > IST_LOGIN_DATA_MAX)
		return -EINVAL;
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
		if (ic->login_closed)
			ist_login_wake(ic);
		else
			ic->login_waiting = true;
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
	bool gone;
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
	mutex_lock(&ic->lock);
	gone = ic->failed;
	mutex_unlock(&ic->lock);
	if (gone) {
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
				 IST_TX_SLOT);
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
	ic->rx = ic->rx_ring.desc;
	ic->nr_rx = n;
	for (i = 0; i < n; i++) {
		ret = isdm_rx_post(ic->base.q.qp, ic->base.dev, &ic->rx[i]);
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

/* ------------------------------------------------------------------ */
/* debugfs: what each connection negotiated                           */
/* ------------------------------------------------------------------ */

static struct dentry *ist_debugfs_root;

static const char *ist_state_name(enum ist_conn_state state)
{
	switch (state) {
	case IST_CONN_ACCEPTED:
		return "accepted";
	case IST_CONN_PENDING:
		return "pending";
	case IST_CONN_BOUND:
		return "login";
	case IST_CONN_FULL_FEATURE:
		return "full-feature";
	case IST_CONN_TERMINATING:
		return "terminating";
	case IST_CONN_DOWN:
		return "down";
	}
	return "?";
}

/*
 * One block per connection, blank-line separated, "key: value" lines.
 * A connection stays on the list until its free work, so it can be read
 * under the list mutex; its fields under its own lock (list, then
 * connection: nothing takes them the other way round).
 */
static int ist_conns_show(struct seq_file *m, void *unused)
{
	struct ist_conn *ic;
	bool first = true;

	mutex_lock(&ist_conn_list_mutex);
	list_for_each_entry(ic, &ist_conn_list, entry) {
		mutex_lock(&ic->lock);
		if (!first)
			seq_putc(m, '\n');
		first = false;
		seq_printf(m, "peer: %pISpc\n", &ic->src);
		seq_printf(m, "state: %s\n", ist_state_name(ic->state));
		seq_printf(m, "header: %u (%s)\n", ic->base.mode.hdr_len,
			   ic->base.mode.hdr_len == ISDM_HDR_LEN_RFC ?
			   "RFC 7145 12-byte" : "Annex A12 28-byte expanded");
		seq_printf(m, "zbva: %d\n", ic->base.mode.zbva);
		seq_printf(m, "send_with_invalidate: %d\n",
			   ic->base.mode.send_inv);
		seq_printf(m, "ord: %u\n", ic->ord);
		seq_printf(m, "hellos: %u\n", READ_ONCE(ic->view.hellos));
		if (READ_ONCE(ic->view.hellos))
			seq_printf(m, "hello_reply: version %u%s\n",
				   READ_ONCE(ic->view.hello_ver),
				   READ_ONCE(ic->view.hello_rej) ?
				   ", rejected" : "");
		if (ic->state >= IST_CONN_FULL_FEATURE && ic->nr_rx) {
			seq_printf(m, "session: %s\n", ic->view.discovery ?
				   "discovery" : "normal");
			seq_printf(m, "rx_buffers: %u\n", ic->nr_rx);
			seq_printf(m, "rx_data_bytes: %u\n", ic->rx_max_data);
			seq_printf(m, "target_recv_dsl: %u\n",
				   ic->view.tgt_rdsl);
			seq_printf(m, "initiator_recv_dsl: %u\n",
				   ic->view.ini_rdsl);
			seq_printf(m, "max_xmit_dsl: %u\n", ic->view.max_xmit);
			seq_printf(m, "rx_held: %d\n",
				   atomic_read(&ic->rx_held));
			seq_printf(m, "imm_in_place: %ld\n",
				   atomic_long_read(&ic->imm_in_place));
			seq_printf(m, "quiet_sends: %ld\n",
				   atomic_long_read(&ic->quiet_sends));
			seq_printf(m, "quiet_held: %u\n",
				   ist_sends_quiet_held(ic));
		}
		mutex_unlock(&ic->lock);
	}
	mutex_unlock(&ist_conn_list_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ist_conns);

/**
 * ist_debugfs_init() - create /sys/kernel/debug/ib_isert/
 *
 * connections: what each connection negotiated; closed_erl0 and
 * closed_no_timer: sessions whose last connection went and which this
 * module had LIO close at once, by falling back to ERL0 or without
 * starting the Time2Retain timer of a session being closed anyway (see
 * ist_close_session_now()). Without debugfs the view is simply absent.
 */
void ist_debugfs_init(void)
{
	ist_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("connections", 0444, ist_debugfs_root, NULL,
			    &ist_conns_fops);
	debugfs_create_atomic_t("closed_erl0", 0444, ist_debugfs_root,
				&ist_erl0_closes);
	debugfs_create_atomic_t("closed_no_timer", 0444, ist_debugfs_root,
				&ist_t2r_skipped);
}

/**
 * ist_debugfs_exit() - remove the view; waits for its readers
 */
void ist_debugfs_exit(void)
{
	debugfs_remove(ist_debugfs_root);
}

/* ------------------------------------------------------------------ */
/* device removal                                                     */
/* ------------------------------------------------------------------ */

/**
 * ist_remove_device() - the core's ib_client says @ib_dev is going away
 * @ib_dev: the device
 *
 * Fails every connection on the device and returns: their teardown (LIO's
 * and ours, all in the kernel) drops their device references, for which
 * the core waits.
 */
void ist_remove_device(struct ib_device *ib_dev)
{
	struct ist_conn *ic, *victim;

	for (;;) {
		victim = NULL;
		mutex_lock(&ist_conn_list_mutex);
		list_for_each_entry(ic, &ist_conn_list, entry) {
			if (ic->base.dev->ib_dev == ib_dev &&
			    !ic->dev_removed &&
			    kref_get_unless_zero(&ic->ref)) {
				ic->dev_removed = true;
				victim = ic;
				break;
			}
		}
		mutex_unlock(&ist_conn_list_mutex);
		if (!victim)
			break;
		ist_conn_fail(victim, "device removed", -ENODEV);
		ist_conn_put(victim);
	}
}
