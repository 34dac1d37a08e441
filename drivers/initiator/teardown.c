// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: the end of a connection: stop_conn, the drain, the release
 * (at once, or from the release work) and the release of everything on a
 * device that goes away.
 *
 * Lifetime: an &struct isi_conn is created by ep_connect and outlives the
 * endpoint. ep_disconnect and stop_conn may come in either order; the
 * connection is released once the endpoint is gone and, if it was bound,
 * stop_conn has unbound it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "isi.h"

struct workqueue_struct *isi_release_wq;

/**
 * isi_conn_terminate() - stop the connection: disconnect and flush
 *	everything posted
 * @ic: the connection, its lock held
 *
 * A failure to report (a CM event, a failed completion, device removal)
 * is reported before; from here on none is (isi_fail()).
 */
void isi_conn_terminate(struct isi_conn *ic)
{
	lockdep_assert_held(&ic->lock);
	if (ic->state == ISI_PENDING || ic->state == ISI_UP) {
		ic->state = ISI_TERMINATING;
		wake_up_all(&ic->wq);
	}
	/*
	 * A deliberate end: the flushes the drain brings are no failure to
	 * report (libiscsi would log a connection error for every logout and
	 * every reopen of iscsid), and receives after it are dropped.
	 */
	isdm_conn_fail_once(&ic->base);
	if (ic->established && ic->base.cm_id) {
		ic->established = false;
		rdma_disconnect(ic->base.cm_id);
	}
	isdm_queues_drain(&ic->base.q);
}

/*
 * The core's order (isdm_queues_destroy()): drain, the MRs, the QP and the
 * CQ, then the buffers their work requests used. The rdma_cm id outlives
 * them; the caller destroys it without ic->lock.
 */
static void isi_conn_free_queues(struct isi_conn *ic)
{
	isdm_queues_drain(&ic->base.q);
	isi_fr_pool_destroy(ic);
	isdm_queues_destroy(&ic->base.q);
	isi_rx_destroy(ic);
}

/**
 * isi_conn_release() - free the connection and everything it holds
 * @ic: the connection, which nothing uses any more
 *
 * Takes it off the module's list, drains and frees its queues, MRs and
 * buffers, destroys its rdma_cm id (waiting for a running CM handler) and
 * drops its device.
 */
void isi_conn_release(struct isi_conn *ic)
{
	struct rdma_cm_id *cm_id;

	/* a device removal's call for it has returned, and none comes */
	isdm_conn_unregister(&ic->base);
	mutex_lock(&isi_conn_mutex);
	list_del_init(&ic->entry);
	mutex_unlock(&isi_conn_mutex);

	mutex_lock(&ic->lock);
	ic->state = ISI_DOWN;
	if (ic->base.dev)
		isi_conn_free_queues(ic);
	cm_id = ic->base.cm_id;
	ic->base.cm_id = NULL;
	mutex_unlock(&ic->lock);

	/* waits for a running CM handler; none runs after it */
	if (cm_id)
		rdma_destroy_id(cm_id);
	isdm_conn_detach(&ic->base);
	kfree(ic);
}

/**
 * isi_release_work() - release a bound connection once stop_conn has
 *	unbound it
 * @work: &isi_conn.release_work, queued by ep_disconnect
 */
void isi_release_work(struct work_struct *work)
{
	struct isi_conn *ic = container_of(work, struct isi_conn,
					   release_work);

	wait_for_completion(&ic->stop_comp);
	isi_conn_release(ic);
}

/**
 * isi_conn_stop() - the transport's stop_conn
 * @cls_conn: the iSCSI connection
 * @flag: how libiscsi stops it (STOP_CONN_RECOVER, STOP_CONN_TERM)
 *
 * Terminates the connection, shows its host down in debugfs and unbinds
 * the iSCSI connection, which lets a waiting release go on.
 */
void isi_conn_stop(struct iscsi_cls_conn *cls_conn, int flag)
{
	struct iscsi_conn *conn = cls_conn->dd_data;
	struct isi_conn *ic = conn->dd_data;

	if (!ic) {
		iscsi_conn_stop(cls_conn, flag);
		return;
	}
	mutex_lock(&ic->lock);
	isi_conn_terminate(ic);
	/* drained: the spill buffer goes back to the session while it exists */
	isi_rx_spill_return(ic);
	isi_host_update(ic, conn, false);
	iscsi_conn_stop(cls_conn, flag);
	WRITE_ONCE(ic->iconn, NULL);
	conn->dd_data = NULL;
	complete(&ic->stop_comp);
	mutex_unlock(&ic->lock);
}

/*
 * The core's device removal: let go of everything on the device now,
 * whatever iscsid does. The connection fails (iscsid recovers the session
 * or tears it down later); what iscsid holds, the endpoint and the iSCSI
 * connection, stays, without RDMA resources. A release of the connection
 * waits for this to return (isdm_conn_unregister()).
 */
static void isi_conn_device_removed(struct isdm_conn *base)
{
	struct isi_conn *ic = container_of(base, struct isi_conn, base);
	struct rdma_cm_id *cm_id;

	mutex_lock(&ic->lock);
	isi_cm_failed(ic, -ENODEV);
	/* no transmit runs or starts (it does not take ic->lock) */
	if (ic->iconn)
		iscsi_suspend_tx(ic->iconn);
	/* every completion has run: no task reference is left with us */
	isi_conn_terminate(ic);
	if (ic->iconn)
		isi_detach_tasks(ic, ic->iconn);
	isi_conn_free_queues(ic);
	cm_id = ic->base.cm_id;
	ic->base.cm_id = NULL;
	/* nothing on the device is left: drop it (ic->base.dev becomes NULL) */
	isdm_conn_detach(&ic->base);
	mutex_unlock(&ic->lock);

	/* waits for a running CM handler, which takes only ic->lock */
	if (cm_id)
		rdma_destroy_id(cm_id);
}

/* how the core reaches the initiator's connections */
const struct isdm_conn_ops isi_conn_ops = {
	.device_removed	= isi_conn_device_removed,
};
