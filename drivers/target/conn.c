// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: connection references and state, the "fail once" path, the
 * pre-login timer and the pre-login bounds, device removal.
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
 * source address (ist_np_make_room(): an old one is evicted when a bound
 * is reached, and a host's login storm may pass its source's bound).
 *
 * References: one for the CM side, dropped by the release work; one for
 * LIO, taken in ist_accept_np() and dropped in ist_lio_free_conn(); one for
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
 * reinstatement and LIO calls ist_wait_conn() and ist_lio_free_conn().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <net/sock.h>
#include <target/iscsi/iscsi_target_core.h>

#include "ist.h"

static unsigned int prelogin_timeout = 15;
module_param(prelogin_timeout, uint, 0644);
MODULE_PARM_DESC(prelogin_timeout,
		 "Seconds a connection may wait for its first login PDU, and a login for its next one (default 15)");

static unsigned int max_prelogin_per_portal = 64;
module_param(max_prelogin_per_portal, uint, 0644);
MODULE_PARM_DESC(max_prelogin_per_portal,
		 "Connections per portal waiting for their first login PDU (default 64)");

static unsigned int max_prelogin_per_source = 8;
module_param(max_prelogin_per_source, uint, 0644);
MODULE_PARM_DESC(max_prelogin_per_source,
		 "Connections per source address waiting for their first login PDU, unless younger than prelogin_grace_ms and the portal has room (default 8)");

static unsigned int prelogin_grace_ms = 5000;
module_param(prelogin_grace_ms, uint, 0644);
MODULE_PARM_DESC(prelogin_grace_ms,
		 "Milliseconds a connection may wait for its first login PDU before its source's bound can evict it (default 5000)");

static void ist_np_release(struct kref *ref)
{
	kfree(container_of(ref, struct ist_np, ref));
}

/**
 * ist_np_put() - drop a reference of a portal
 * @isnp: the portal; freed by the last put
 */
void ist_np_put(struct ist_np *isnp)
{
	kref_put(&isnp->ref, ist_np_release);
}

/**
 * ist_conn_get() - take a reference of a connection
 * @ic: the connection
 */
void ist_conn_get(struct ist_conn *ic)
{
	kref_get(&ic->ref);
}

/* The queues (if the id is still there, with it) and the buffers. */
static void ist_conn_destroy_bufs(struct ist_conn *ic)
{
	isdm_queues_destroy(&ic->base.q);
	isdm_rx_ring_free(ic->base.dev, &ic->rx_ring);
	isdm_tx_ring_free(ic->base.dev, &ic->tx_ring);
	isdm_tx_unmap(ic->base.dev, &ic->login_tx);
	isdm_login_buf_free(ic->base.dev, &ic->login);
}

/**
 * ist_conn_free_unaccepted() - free a connection whose rdma_cm id rdma_cm destroys
 *	(CONNECT_REQUEST)
 * @ic: the connection, never accepted
 */
void ist_conn_free_unaccepted(struct ist_conn *ic)
{
	ist_conn_destroy_bufs(ic);
	isdm_conn_detach(&ic->base);
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

/**
 * ist_conn_destroy_work() - destroy the rdma_cm id, then the QP, then the rest
 * @work: the connection's @free_work, queued by the last put
 */
void ist_conn_destroy_work(struct work_struct *work)
{
	struct ist_conn *ic = container_of(work, struct ist_conn, free_work);

	/* a device removal's call for it has returned, and none comes */
	isdm_conn_unregister(&ic->base);
	cancel_delayed_work_sync(&ic->rdma_retry_work);
	/* the id first: no handler can then see the connection half gone */
	isdm_queues_destroy_id(&ic->base.q);
	ist_conn_destroy_bufs(ic);
	isdm_conn_detach(&ic->base);
	ist_np_put(ic->isnp);
	kfree(ic);
}

/**
 * ist_conn_put() - drop a reference of a connection
 * @ic: the connection; the last put queues its @free_work
 */
void ist_conn_put(struct ist_conn *ic)
{
	kref_put(&ic->ref, ist_conn_release);
}

/**
 * ist_prelogin_arm() - start the login timer of a connection
 * @ic: the connection: a new one (its portal's @lock held), or one whose
 *	login waits for its next login PDU (its @lock held)
 *
 * The timer holds a reference while it is queued or runs: a work that
 * already runs cannot be cancelled, and it must not find its connection
 * freed. Whoever cancels it successfully drops that reference; otherwise
 * the work drops it when done. Cancelling with _sync is no option: the
 * callers hold ist_np.lock or ist_conn.lock, which the work takes, or run
 * in a CM handler.
 */
void ist_prelogin_arm(struct ist_conn *ic)
{
	ist_conn_get(ic);
	if (!queue_delayed_work(ist_wq, &ic->prelogin_work,
				prelogin_timeout * HZ))
		ist_conn_put(ic);	/* armed already */
}

/**
 * ist_prelogin_cancel() - stop the login timer unless it runs already
 * @ic: the connection (see ist_prelogin_arm())
 */
void ist_prelogin_cancel(struct ist_conn *ic)
{
	if (cancel_delayed_work(&ic->prelogin_work))
		ist_conn_put(ic);	/* never the last: the CM side's is held */
}

/**
 * ist_conn_terminate() - disconnect once
 * @ic: the connection; the caller holds ic->lock
 */
void ist_conn_terminate(struct ist_conn *ic)
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

/**
 * ist_conn_unlink() - take a connection LIO does not own off its portal's
 *	list
 * @isnp: the portal, its @lock held
 * @ic: the connection
 *
 * Whoever does owns its teardown, so the timer, an eviction, a CM event
 * and the portal going away may race: exactly one of them gets true.
 *
 * Return: true for the one caller that took it off.
 */
bool ist_conn_unlink(struct ist_np *isnp, struct ist_conn *ic)
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

/**
 * ist_conn_drop_unlinked() - tear down a connection the caller unlinked
 * @ic: the connection (ist_conn_unlink() returned true)
 * @why: for the log line; NULL when the caller logged it
 *
 * The release work does the disconnect too: this may run in the listener's
 * CONNECT_REQUEST handler (an eviction), where rdma_disconnect() of another
 * id can block on iWARP until that id's ESTABLISHED event, queued behind
 * the running handler, has been handled.
 */
void ist_conn_drop_unlinked(struct ist_conn *ic, const char *why)
{
	if (why)
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

/**
 * ist_login_wake() - wake LIO's login work waiting for the next login PDU
 * @ic: the connection, bound to LIO; the caller holds ic->lock
 *
 * For the next login PDU, copied into LIO's login structure, or for a
 * connection that went away. LIO's login work runs only when a transport
 * queues it (for TCP, a socket state change does; on 6.12 also LIO's
 * login timer). A connection that goes away between login PDUs must wake
 * it, or on 6.1 the half-done login keeps its session and ACL forever:
 * ist_get_login_rx() then fails and LIO drops the login. While LIO still
 * works on a PDU, ist_put_login_tx() wakes it once it waits again; not at
 * all once the final response is built (LIO has released the login).
 */
void ist_login_wake(struct ist_conn *ic)
{
	lockdep_assert_held(&ic->lock);
	complete(&ic->login_req_comp);
	ic->login_queued = true;
	/*
	 * On LIO's own workqueue: queued there while it runs (6.12's LIO
	 * queues it itself when its login timer fires), the work runs again
	 * only after it returns, never beside it.
	 */
	schedule_delayed_work(&ic->conn->login_work, 0);
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
	bool first = false;

	mutex_lock(&ic->lock);
	state = ic->state;
	/* LIO's reinstatement is asked for once, and logged once */
	if (state == IST_CONN_BOUND || state == IST_CONN_FULL_FEATURE)
		first = isdm_conn_fail_once(&ic->base);
	/* for ist_connect_request(), when it has not listed it yet */
	if ((state == IST_CONN_ACCEPTED || state == IST_CONN_PENDING) &&
	    !ic->unbound_fail)
		ic->unbound_fail = why;
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
 * @what: the work request, for the log line (isdm_wc_log())
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
	if (isdm_wc_log(wc, what, &ic->src))
		ist_conn_fail(ic, "work request flushed (the queue pair is in error)",
			      0);
	else
		ist_conn_fail(ic, "work request failed", wc->status);
}

/**
 * ist_release_work() - disconnect (if nobody did), drain, drop the CM
 *	side's reference
 * @work: the connection's @release_work
 */
void ist_release_work(struct work_struct *work)
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

/**
 * ist_prelogin_timeout() - close a connection whose first login PDU, or
 *	whose login's next one, did not come in time
 * @work: the connection's @prelogin_work
 *
 * 6.1's LIO times a login out only while its login work runs, and that
 * work runs once a login PDU is here: a login whose initiator stops
 * between two login PDUs would hold the connection and LIO's half-done
 * login for as long as the initiator likes. 6.12's LIO ends such a login
 * after 15 s on its own as well; whichever acts first, the other finds
 * the login closed (ist_wait_conn()).
 */
void ist_prelogin_timeout(struct work_struct *work)
{
	struct ist_conn *ic = container_of(to_delayed_work(work),
					   struct ist_conn, prelogin_work);
	bool stalled;

	mutex_lock(&ic->lock);
	stalled = ic->state == IST_CONN_BOUND && ic->login_waiting &&
		  !ic->login_closed;
	mutex_unlock(&ic->lock);
	if (stalled)
		ist_conn_fail(ic, "no next login request in time", 0);
	else
		ist_conn_drop_unbound(ic, "no login request in time");
	ist_conn_put(ic);		/* the timer's */
}

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

/* @ic has waited for its first login PDU less than prelogin_grace_ms */
static bool ist_prelogin_young(const struct ist_conn *ic)
{
	return time_before(jiffies, ic->listed_at +
			   msecs_to_jiffies(READ_ONCE(prelogin_grace_ms)));
}

/**
 * ist_np_make_room() - make room for one more pre-login connection
 * @isnp: the portal
 * @src: the new connection's source address
 *
 * Make room for one more pre-login connection from @src. A source at its
 * bound (max_prelogin_per_source) loses its own oldest connection once
 * that one has waited prelogin_grace_ms: a silent peer's. While all of
 * them are younger, the source is a host logging many sessions in at once
 * (iscsid sends each connection's first login PDU a moment after the
 * connection is up, and in a storm of logins it takes a while to reach
 * the last ones): the new connection is admitted above the source's bound
 * as long as the portal has room, and evicts the source's own oldest when
 * it has not, so that no source over its bound ever evicts another's. A
 * source within its bound evicts the portal's oldest when the portal is
 * at its bound (max_prelogin_per_portal), which stays a hard bound.
 *
 * Runs in the listener's CM handler: the victim is unlinked here and left
 * to its release work, without a reference of ours, so nothing here can
 * be its last put.
 */
void ist_np_make_room(struct ist_np *isnp,
		      const struct sockaddr_storage *src)
{
	struct ist_conn *ic, *oldest_src = NULL, *victim = NULL;
	unsigned int from_src = 0, per_src, per_portal;
	bool portal_full;

	per_src = READ_ONCE(max_prelogin_per_source);
	per_portal = READ_ONCE(max_prelogin_per_portal);
	mutex_lock(&isnp->lock);
	list_for_each_entry(ic, &isnp->accepted, np_entry) {
		if (!ist_same_source(&ic->src, src))
			continue;
		if (!oldest_src)
			oldest_src = ic;
		from_src++;
	}
	portal_full = per_portal && isnp->nr_accepted >= per_portal;
	if (per_src && from_src >= per_src) {
		if (!ist_prelogin_young(oldest_src) || portal_full)
			victim = oldest_src;
	} else if (portal_full) {
		victim = list_first_entry(&isnp->accepted, struct ist_conn,
					  np_entry);
	}
	if (victim && !ist_conn_unlink(isnp, victim))
		victim = NULL;
	mutex_unlock(&isnp->lock);

	if (victim)
		ist_conn_drop_unlinked(victim, "too many connections waiting for login");
}

/*
 * The core's device removal: fail the connection and return. Its teardown
 * (LIO's and ours, all in the kernel) ends in ist_conn_destroy_work(),
 * which detaches it from the device; the core waits for that. A connection
 * still in its CONNECT_REQUEST handler is failed by that handler once it
 * is on its portal (ist_connect_request()).
 */
static void ist_conn_device_removed(struct isdm_conn *base)
{
	struct ist_conn *ic = container_of(base, struct ist_conn, base);

	/* the last put was made: its destroy work does what we would */
	if (!kref_get_unless_zero(&ic->ref))
		return;
	mutex_lock(&ic->lock);
	ic->dev_removed = true;
	mutex_unlock(&ic->lock);
	ist_conn_fail(ic, "device removed", -ENODEV);
	ist_conn_put(ic);
}

/* how the core reaches the target's connections */
const struct isdm_conn_ops ist_conn_ops = {
	.device_removed	= ist_conn_device_removed,
};
