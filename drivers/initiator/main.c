// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: iSER initiator: the open-iscsi transport "iser" on the iSER
 * datamover core. Module, transport callbacks, connection establishment
 * over rdma_cm and connection lifetime.
 *
 * Lifetime: an &struct isi_conn is created by ep_connect and outlives the
 * endpoint. ep_disconnect and stop_conn may come in either order; the
 * connection is released once the endpoint is gone and, if it was bound,
 * stop_conn has unbound it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <scsi/scsi_host.h>

#include "isdm/compat.h"
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

static const char * const isi_hello_names[] = {
	[ISI_HELLO_AUTO] = "auto",
	[ISI_HELLO_ON] = "on",
	[ISI_HELLO_OFF] = "off",
};

static int hello = ISI_HELLO_AUTO;

static int isi_hello_param_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(isi_hello_names, val);

	if (i < 0)
		return -EINVAL;
	WRITE_ONCE(*(int *)kp->arg, i);
	return 0;
}

static int isi_hello_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", isi_hello_names[READ_ONCE(*(int *)kp->arg)]);
}

static const struct kernel_param_ops isi_hello_ops = {
	.set	= isi_hello_param_set,
	.get	= isi_hello_param_get,
};
module_param_cb(hello, &isi_hello_ops, &hello, 0644);
MODULE_PARM_DESC(hello,
		 "iSER Hello after login: auto (only over iWARP to a target whose MPA reply carries no Annex A12 header, i.e. not a Linux one; never on InfiniBand/RoCE), on (always; the target must answer with a HelloReply within 5 s), off (never) (default auto)");

static unsigned int max_io_kb = ISI_MAX_IO_KB_DEF;

static int isi_max_io_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, ISI_MAX_IO_KB_MIN,
				     ISI_MAX_IO_KB_MAX);
}

static const struct kernel_param_ops isi_max_io_ops = {
	.set	= isi_max_io_set,
	.get	= param_get_uint,
};
module_param_cb(max_io_kb, &isi_max_io_ops, &max_io_kb, 0644);
MODULE_PARM_DESC(max_io_kb,
		 "largest transfer of one SCSI command in KiB (64-16384, default 512), bounded by the RDMA device; read when a session is created");

struct workqueue_struct *isi_release_wq;
static struct scsi_transport_template *isi_scsi_transport;
static LIST_HEAD(isi_conn_list);
/*
 * protects isi_conn_list; taken before an isi_conn's lock, never while
 * one is held
 */
static DEFINE_MUTEX(isi_conn_mutex);
/* /sys/kernel/debug/ib_iser: one directory per SCSI host */
static struct dentry *isi_debugfs_root;

static struct iscsi_transport isi_transport;

/* ---- connection lifetime ---- */

/* Stop the connection: disconnect and flush everything posted. */
static void isi_conn_terminate(struct isi_conn *ic)
{
	lockdep_assert_held(&ic->lock);
	if (ic->state == ISI_PENDING || ic->state == ISI_UP) {
		ic->state = ISI_TERMINATING;
		wake_up_all(&ic->wq);
	}
	if (ic->established && ic->base.cm_id) {
		ic->established = false;
		rdma_disconnect(ic->base.cm_id);
	}
	isdm_queues_drain(&ic->base.q);
}

static void isi_conn_release(struct isi_conn *ic)
{
	struct rdma_cm_id *cm_id;

	mutex_lock(&isi_conn_mutex);
	list_del_init(&ic->entry);
	mutex_unlock(&isi_conn_mutex);

	mutex_lock(&ic->lock);
	ic->state = ISI_DOWN;
	isdm_queues_drain(&ic->base.q);
	if (ic->base.dev) {
		isi_fr_pool_destroy(ic);
		isi_rx_destroy(ic);
	}
	isdm_queues_destroy(&ic->base.q);
	cm_id = ic->base.cm_id;
	ic->base.cm_id = NULL;
	mutex_unlock(&ic->lock);

	/* waits for a running CM handler; none runs after it */
	if (cm_id)
		rdma_destroy_id(cm_id);
	if (ic->base.dev)
		isdm_device_put(ic->base.dev);
	kfree(ic);
}

static void isi_release_work(struct work_struct *work)
{
	struct isi_conn *ic = container_of(work, struct isi_conn,
					   release_work);

	wait_for_completion(&ic->stop_comp);
	isi_conn_release(ic);
}

/* ---- rdma_cm ---- */

static void isi_qp_event(struct ib_event *ev, void *ctx)
{
	pr_debug("QP event %s (%d)\n", ib_event_msg(ev->event), ev->event);
}

static int isi_addr_resolved(struct isi_conn *ic)
{
	struct ib_device *ib_dev = ic->base.cm_id->device;
	struct isdm_device *dev;

	if (ic->base.dev)
		return -EALREADY;
	if (!(ib_dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS)) {
		pr_err("%s: no memory management extensions\n",
		       dev_name(&ib_dev->dev));
		return -EOPNOTSUPP;
	}
	/* -ENODEV for a device being removed */
	dev = isdm_device_get(ib_dev);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	ic->base.dev = dev;
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
	 * is backpressure, not an error: the Send waits (isi_sq_reserve(),
	 * -EAGAIN to libiscsi). 504, plus the drain WR and soft-RoCE's empty
	 * slot, is 506: 512 slots once rounded up to a power of two (with
	 * room for four WRs per task it took 1024).
	 */
	ic->sq_size = ISI_CMDS_MAX * 3 + ISI_DATAOUT_MAX;
	qa.send_wr = ic->sq_size;
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
	param.retry_count = 7;
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
			 IB_QP_MAX_DEST_RD_ATOMIC, &init_attr)) {
		ic->ord = attr.max_rd_atomic;
		ic->ird = attr.max_dest_rd_atomic;
	}
	ic->established = true;
	ic->state = ISI_UP;
	wake_up_all(&ic->wq);
	pr_debug("connected: zbva %d send_inv %d hdr %u\n", ic->base.mode.zbva,
		 ic->base.mode.send_inv, ic->base.mode.hdr_len);
	return 0;
}

static void isi_cm_failed(struct isi_conn *ic, int err)
{
	if (ic->state == ISI_UP)
		isi_fail(ic, ISCSI_ERR_CONN_FAILED);
	if (ic->state == ISI_PENDING || ic->state == ISI_UP)
		ic->state = ISI_TERMINATING;
	wake_up_all(&ic->wq);
}

static int isi_cma_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev)
{
	struct isi_conn *ic = cm_id->context;
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
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		isi_cm_failed(ic, -ECONNRESET);
		break;
	default:
		break;
	}
	if (ret) {
		pr_info_ratelimited("connection setup failed at %s: %d\n",
				    rdma_event_msg(ev->event), ret);
		isi_cm_failed(ic, ret);
	}
out:
	mutex_unlock(&ic->lock);
	/* the id stays ours: released by rdma_destroy_id() */
	return 0;
}

/* ---- endpoints ---- */

static struct iscsi_endpoint *isi_ep_connect(struct Scsi_Host *shost,
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

static int isi_ep_poll(struct iscsi_endpoint *ep, int timeout_ms)
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

static void isi_ep_disconnect(struct iscsi_endpoint *ep)
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

static int isi_get_ep_param(struct iscsi_endpoint *ep, enum iscsi_param param,
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

/* ---- error handling ---- */

/*
 * After an error handler of libiscsi succeeded, tasks it ended without a
 * SCSI Response may have left their MRs valid; the midlayer frees their
 * buffers once we return, so invalidate those MRs first (isi_fr_fence()).
 * isi_conn_mutex keeps the connection from being freed: its release takes
 * the mutex before it frees, and only after the stop cleared dd_data.
 */
static void isi_eh_fence(struct scsi_cmnd *sc)
{
	struct iscsi_cls_session *cls_session =
		starget_to_session(scsi_target(sc->device));
	struct iscsi_session *session = cls_session->dd_data;
	struct isi_conn *ic = NULL;
	int ret = 0;

	mutex_lock(&isi_conn_mutex);
	spin_lock_bh(&session->frwd_lock);
	if (session->leadconn)
		ic = session->leadconn->dd_data;
	spin_unlock_bh(&session->frwd_lock);
	if (ic) {
		mutex_lock(&ic->lock);
		ret = isi_fr_fence(ic);
		mutex_unlock(&ic->lock);
	}
	mutex_unlock(&isi_conn_mutex);
	if (ret > 0)
		pr_info_ratelimited("error handling: invalidated %d MR(s) of tasks that ended without a response\n",
				    ret);
	else if (ret < 0)
		pr_err_ratelimited("error handling: invalidating the MRs of ended tasks failed: %d\n",
				   ret);
}

static int isi_eh_abort(struct scsi_cmnd *sc)
{
	int ret = iscsi_eh_abort(sc);

	if (ret == SUCCESS)
		isi_eh_fence(sc);
	return ret;
}

static int isi_eh_device_reset(struct scsi_cmnd *sc)
{
	int ret = iscsi_eh_device_reset(sc);

	if (ret == SUCCESS)
		isi_eh_fence(sc);
	return ret;
}

static int isi_eh_recover_target(struct scsi_cmnd *sc)
{
	int ret = iscsi_eh_recover_target(sc);

	if (ret == SUCCESS)
		isi_eh_fence(sc);
	return ret;
}

/* ---- sessions and connections ---- */

static ISDM_SHT_CONST struct scsi_host_template isi_sht = {
	.module			= THIS_MODULE,
	.name			= "iSCSI Initiator over iSER (ib_iser out-of-tree)",
	.proc_name		= "iscsi_iser",
	.queuecommand		= iscsi_queuecommand,
	.change_queue_depth	= scsi_change_queue_depth,
	/* per session from max_io_kb, see isi_session_create() */
	.sg_tablesize		= ISI_MAX_IO_KB_DEF / (SZ_4K / SZ_1K),
	.max_sectors		= ISI_MAX_IO_KB_DEF * (SZ_1K >> SECTOR_SHIFT),
	.cmd_per_lun		= ISI_CMDS_MAX,
	.eh_timed_out		= iscsi_eh_cmd_timed_out,
	.eh_abort_handler	= isi_eh_abort,
	.eh_device_reset_handler = isi_eh_device_reset,
	.eh_target_reset_handler = isi_eh_recover_target,
	.target_alloc		= iscsi_target_alloc,
	.this_id		= -1,
	.track_queue_depth	= 1,
	.cmd_size		= sizeof(struct iscsi_cmd),
};

static int isi_conn_show(struct seq_file *m, void *unused)
{
	struct isi_host *ih = m->private;

	mutex_lock(&ih->lock);
	seq_printf(m, "state: %s\n", ih->up ? "up" : "down");
	seq_printf(m, "connections_started: %u\n", ih->starts);
	if (ih->starts) {
		seq_printf(m, "header: %u (%s)\n", ih->mode.hdr_len,
			   ih->mode.hdr_len == ISDM_HDR_LEN_RFC ?
			   "RFC 7145 12-byte" : "Annex A12 28-byte expanded");
		seq_printf(m, "zbva: %d\n", ih->mode.zbva);
		seq_printf(m, "send_with_invalidate: %d\n", ih->mode.send_inv);
		seq_printf(m, "ird: %u\n", ih->ird);
		seq_printf(m, "ord: %u\n", ih->ord);
		seq_printf(m, "max_io_bytes: %u\n", ih->max_io);
		seq_printf(m, "rx_buffers: %u\n", ih->nr_rx);
		seq_printf(m, "rx_buffer_bytes: %u\n", ISI_RX_SMALL);
		seq_printf(m, "rx_data_bytes: %u\n", ih->rx_data_max);
		seq_printf(m, "rx_spill_bytes: %u\n",
			   ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + ih->rx_data_max);
		seq_printf(m, "rx_spilled: %d\n",
			   atomic_read(&ih->rx_spilled));
		seq_printf(m, "bounce_held: %d\n",
			   atomic_read(&ih->bounce_held));
		seq_printf(m, "hello: %d\n", ih->hello);
		if (ih->hello)
			seq_printf(m, "hello_reply: version %u ord %u\n",
				   ih->hello_ver, ih->hello_ord);
	}
	mutex_unlock(&ih->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(isi_conn);

/* Record what @ic negotiated in its host's debugfs data. */
static void isi_host_update(struct isi_conn *ic, struct iscsi_conn *conn,
			    bool up)
{
	struct Scsi_Host *shost = conn->session->host;
	struct isi_host *ih = iscsi_host_priv(shost);

	mutex_lock(&ih->lock);
	ih->up = up;
	if (up) {
		ih->starts++;
		ih->mode = ic->base.mode;
		ih->ird = ic->ird;
		ih->ord = ic->ord;
		ih->max_io = shost->max_sectors << SECTOR_SHIFT;
		ih->nr_rx = ic->nr_rx;
		ih->rx_data_max = ic->rx_data_max;
		ih->hello = ic->hello_state == ISI_HELLO_DONE;
		ih->hello_ord = ic->hello_res.ord;
		ih->hello_ver = ic->hello_res.cur_ver;
	}
	mutex_unlock(&ih->lock);
}

static struct iscsi_cls_session *
isi_session_create(struct iscsi_endpoint *ep, u16 cmds_max, u16 qdepth,
		   u32 initial_cmdsn)
{
	struct iscsi_cls_session *cls_session;
	struct device *parent;
	struct Scsi_Host *shost;
	struct isi_host *ih;
	struct isi_conn *ic;
	u32 want, pages;
	char name[24];
	int ret;

	if (!ep || !ep->dd_data) {
		pr_err_ratelimited("session without a connected endpoint\n");
		return NULL;
	}
	ic = ep->dd_data;
	want = READ_ONCE(max_io_kb);
	/* the device may be removed meanwhile: then the state is not UP */
	mutex_lock(&ic->lock);
	if (ic->state != ISI_UP) {
		mutex_unlock(&ic->lock);
		return NULL;
	}
	pages = isi_io_pages(ic->base.dev->ib_dev, want);
	if (pages * (SZ_4K / SZ_1K) < want)
		pr_info_ratelimited("max_io_kb %u: %s registers at most %u KiB per command\n",
				    want, dev_name(&ic->base.dev->ib_dev->dev),
				    pages * (SZ_4K / SZ_1K));
	mutex_unlock(&ic->lock);

	shost = iscsi_host_alloc(&isi_sht, sizeof(struct isi_host), 0);
	if (!shost)
		return NULL;
	ih = iscsi_host_priv(shost);
	mutex_init(&ih->lock);
	shost->transportt = isi_scsi_transport;
	shost->cmd_per_lun = qdepth;
	shost->max_lun = 512;
	shost->max_id = 0;
	shost->max_channel = 0;
	shost->max_cmd_len = 16;
	/* chained scatterlists beyond SG_CHUNK_SIZE entries */
	shost->sg_tablesize = pages;
	shost->max_sectors = pages * (SZ_4K >> SECTOR_SHIFT);
	shost->can_queue = min_t(u16, cmds_max, ISI_CMDS_MAX);
	/* FRWR with IB_MR_TYPE_MEM_REG: every middle entry a whole page */
	shost->virt_boundary_mask = SZ_4K - 1;

	/*
	 * The device's parent, held by a reference rather than by ic->lock:
	 * adding the host takes the transport class's
	 * attribute_container_mutex, which the removal of a connection's
	 * sysfs files holds while it waits for their readers, and those
	 * take ep_mutex, under which isi_conn_bind() takes ic->lock (a
	 * lockdep cycle). If the device goes away meanwhile, the host is
	 * added under a parent being removed, or fails to be; either way
	 * the connection is no longer UP and bind refuses it.
	 */
	mutex_lock(&ic->lock);
	if (ic->state != ISI_UP) {
		mutex_unlock(&ic->lock);
		goto free_host;
	}
	parent = get_device(ic->base.dev->ib_dev->dev.parent);
	mutex_unlock(&ic->lock);
	ret = iscsi_host_add(shost, parent);
	put_device(parent);
	if (ret)
		goto free_host;

	cls_session = iscsi_session_setup(&isi_transport, shost,
					  shost->can_queue, 0,
					  sizeof(struct isi_task),
					  initial_cmdsn, 0);
	if (!cls_session)
		goto remove_host;
	snprintf(name, sizeof(name), "host%u", shost->host_no);
	ih->dbg = debugfs_create_dir(name, isi_debugfs_root);
	debugfs_create_file("conn", 0444, ih->dbg, ih, &isi_conn_fops);
	return cls_session;

remove_host:
	iscsi_host_remove(shost, false);
free_host:
	iscsi_host_free(shost);
	return NULL;
}

static void isi_session_destroy(struct iscsi_cls_session *cls_session)
{
	struct Scsi_Host *shost = iscsi_session_to_shost(cls_session);
	struct isi_host *ih = iscsi_host_priv(shost);

	/* waits for readers of the files */
	debugfs_remove(ih->dbg);
	iscsi_session_teardown(cls_session);
	iscsi_host_remove(shost, false);
	iscsi_host_free(shost);
}

static struct iscsi_cls_conn *isi_conn_create(struct iscsi_cls_session *sess,
					      u32 cid)
{
	return iscsi_conn_setup(sess, 0, cid);
}

static int isi_conn_bind(struct iscsi_cls_session *cls_session,
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
put_ep:
	iscsi_put_endpoint(ep);
	return ret;
}

/*
 * Does this connection send a Hello (module parameter hello)? auto: only to
 * a target that has shown it is not a Linux-style (Annex A12) one, which is
 * only visible over iWARP: there the MPA reply's private data has its true
 * length, and Linux targets (the in-tree one and ours) always put the A12
 * header in it, while a plain RFC 5046 target sends none and expects the
 * Hello. Over InfiniBand and RoCE the REP's private data always has its
 * full size, zeros when the target wrote none, so nothing tells them apart
 * and no Hello is sent.
 */
static bool isi_hello_wanted(struct isi_conn *ic)
{
	switch (READ_ONCE(hello)) {
	case ISI_HELLO_ON:
		return true;
	case ISI_HELLO_OFF:
		return false;
	default:
		return rdma_protocol_iwarp(ic->base.dev->ib_dev,
					   ic->base.cm_id->port_num) &&
		       !ic->rep_pd;
	}
}

/* The Hello exchange is over, or the connection is going. */
static bool isi_hello_waits(struct isi_conn *ic)
{
	/* pairs with isi_hello_end() */
	return smp_load_acquire(&ic->hello_state) != ISI_HELLO_SENT ||
	       READ_ONCE(ic->state) != ISI_UP;
}

/*
 * RFC 5046 5.1.1: after the final Login Response, the initiator's first
 * iSER message is the Hello; the target's first is the HelloReply. Wait for
 * it a bounded time, without the connection's lock (a CM event that ends
 * the connection takes it, and wakes us).
 */
static int isi_hello_exchange(struct isi_conn *ic)
{
	struct sockaddr *dst =
		(struct sockaddr *)&ic->base.cm_id->route.addr.dst_addr;
	long left;
	int ret;

	ret = isi_hello_send(ic);
	if (ret) {
		pr_err_ratelimited("%pISpc: cannot send the iSER Hello: %d\n",
				   dst, ret);
		return ret;
	}
	left = msecs_to_jiffies(ISI_HELLO_TIMEOUT_MS);
	left = wait_event_interruptible_timeout(ic->wq, isi_hello_waits(ic),
						left);
	/* pairs with isi_hello_end(): hello_res is complete in DONE */
	switch (smp_load_acquire(&ic->hello_state)) {
	case ISI_HELLO_DONE:
		pr_debug("%pISpc: HelloReply: version %u, iSER-ORD %u\n", dst,
			 ic->hello_res.cur_ver, ic->hello_res.ord);
		return 0;
	case ISI_HELLO_FAILED:
		return -EPROTO;		/* isi_hello_reply() said why */
	}
	if (left < 0)
		return left;
	if (READ_ONCE(ic->state) != ISI_UP) {
		pr_err_ratelimited("%pISpc: the connection ended before the HelloReply came; closing\n",
				   dst);
		return -ENOTCONN;
	}
	pr_err_ratelimited("%pISpc: no HelloReply within %u ms (a Linux-style target does not answer Hello: use ib_iser hello=auto or off); closing\n",
			   dst, ISI_HELLO_TIMEOUT_MS);
	return -ETIMEDOUT;
}

static int isi_conn_start(struct iscsi_cls_conn *cls_conn)
{
	struct iscsi_conn *conn = cls_conn->dd_data;
	struct isi_conn *ic = conn->dd_data;
	bool first = false;
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
		ret = isi_rx_ffp_post(ic, nr, data_max);
		if (ret) {
			pr_err_ratelimited("full-feature receives: %d\n", ret);
			goto unlock;
		}
		ic->ffp = true;
		first = true;
	}
unlock:
	mutex_unlock(&ic->lock);
	if (ret)
		return ret;
	if (first) {
		if (isi_hello_wanted(ic)) {
			ret = isi_hello_exchange(ic);
			if (ret)
				return ret;
		}
		isi_host_update(ic, conn, true);
	}
	return iscsi_conn_start(cls_conn);
}

static void isi_conn_stop(struct iscsi_cls_conn *cls_conn, int flag)
{
	struct iscsi_conn *conn = cls_conn->dd_data;
	struct isi_conn *ic = conn->dd_data;

	if (!ic) {
		iscsi_conn_stop(cls_conn, flag);
		return;
	}
	mutex_lock(&ic->lock);
	isi_conn_terminate(ic);
	isi_host_update(ic, conn, false);
	iscsi_conn_stop(cls_conn, flag);
	WRITE_ONCE(ic->iconn, NULL);
	conn->dd_data = NULL;
	complete(&ic->stop_comp);
	mutex_unlock(&ic->lock);
}

static int isi_set_param(struct iscsi_cls_conn *cls_conn,
			 enum iscsi_param param, char *buf, int buflen)
{
	int value;

	switch (param) {
	case ISCSI_PARAM_HDRDGST_EN:
	case ISCSI_PARAM_DATADGST_EN:
	case ISCSI_PARAM_IFMARKER_EN:
	case ISCSI_PARAM_OFMARKER_EN:
		if (kstrtoint(buf, 10, &value) || value) {
			pr_err_ratelimited("parameter %d must be 0 with iSER\n",
					   param);
			return -EPROTO;
		}
		return 0;
	case ISCSI_PARAM_MAX_RECV_DLENGTH:
		if (kstrtoint(buf, 10, &value) || value < ISDM_RDSL_MIN ||
		    value > ISDM_RDSL_MAX)
			return -EINVAL;
		/*
		 * The target may send PDUs of what the initiator declared:
		 * a receive buffer holds at most ISI_RX_DATA_MAX.
		 */
		if (value > ISI_RX_DATA_MAX) {
			pr_err_ratelimited("MaxRecvDataSegmentLength %d is above the %d bytes ib_iser receives; configure at most %d\n",
					   value, ISI_RX_DATA_MAX,
					   ISI_RX_DATA_MAX);
			return -EINVAL;
		}
		return iscsi_set_param(cls_conn, param, buf, buflen);
	default:
		return iscsi_set_param(cls_conn, param, buf, buflen);
	}
}

static void isi_get_stats(struct iscsi_cls_conn *cls_conn,
			  struct iscsi_stats *stats)
{
	struct iscsi_conn *conn = cls_conn->dd_data;

	stats->txdata_octets = conn->txdata_octets;
	stats->rxdata_octets = conn->rxdata_octets;
	stats->scsicmd_pdus = conn->scsicmd_pdus_cnt;
	stats->dataout_pdus = conn->dataout_pdus_cnt;
	stats->scsirsp_pdus = conn->scsirsp_pdus_cnt;
	stats->datain_pdus = conn->datain_pdus_cnt;
	stats->r2t_pdus = conn->r2t_pdus_cnt;
	stats->tmfcmd_pdus = conn->tmfcmd_pdus_cnt;
	stats->tmfrsp_pdus = conn->tmfrsp_pdus_cnt;
	stats->custom_length = 0;
}

static umode_t isi_attr_is_visible(int param_type, int param)
{
	if (param_type == ISCSI_HOST_PARAM) {
		switch (param) {
		case ISCSI_HOST_PARAM_NETDEV_NAME:
		case ISCSI_HOST_PARAM_HWADDRESS:
		case ISCSI_HOST_PARAM_INITIATOR_NAME:
			return 0444;
		default:
			return 0;
		}
	}
	if (param_type != ISCSI_PARAM)
		return 0;
	switch (param) {
	case ISCSI_PARAM_MAX_RECV_DLENGTH:
	case ISCSI_PARAM_MAX_XMIT_DLENGTH:
	case ISCSI_PARAM_HDRDGST_EN:
	case ISCSI_PARAM_DATADGST_EN:
	case ISCSI_PARAM_CONN_ADDRESS:
	case ISCSI_PARAM_CONN_PORT:
	case ISCSI_PARAM_EXP_STATSN:
	case ISCSI_PARAM_PERSISTENT_ADDRESS:
	case ISCSI_PARAM_PERSISTENT_PORT:
	case ISCSI_PARAM_PING_TMO:
	case ISCSI_PARAM_RECV_TMO:
	case ISCSI_PARAM_INITIAL_R2T_EN:
	case ISCSI_PARAM_MAX_R2T:
	case ISCSI_PARAM_IMM_DATA_EN:
	case ISCSI_PARAM_FIRST_BURST:
	case ISCSI_PARAM_MAX_BURST:
	case ISCSI_PARAM_PDU_INORDER_EN:
	case ISCSI_PARAM_DATASEQ_INORDER_EN:
	case ISCSI_PARAM_TARGET_NAME:
	case ISCSI_PARAM_TPGT:
	case ISCSI_PARAM_USERNAME:
	case ISCSI_PARAM_PASSWORD:
	case ISCSI_PARAM_USERNAME_IN:
	case ISCSI_PARAM_PASSWORD_IN:
	case ISCSI_PARAM_FAST_ABORT:
	case ISCSI_PARAM_ABORT_TMO:
	case ISCSI_PARAM_LU_RESET_TMO:
	case ISCSI_PARAM_TGT_RESET_TMO:
	case ISCSI_PARAM_IFACE_NAME:
	case ISCSI_PARAM_INITIATOR_NAME:
	case ISCSI_PARAM_DISCOVERY_SESS:
		return 0444;
	default:
		return 0;
	}
}

static struct iscsi_transport isi_transport = {
	.owner			= THIS_MODULE,
	.name			= "iser",
	.caps			= CAP_RECOVERY_L0 | CAP_MULTI_R2T |
				  CAP_TEXT_NEGO,
	.create_session		= isi_session_create,
	.destroy_session	= isi_session_destroy,
	.create_conn		= isi_conn_create,
	.bind_conn		= isi_conn_bind,
	.unbind_conn		= iscsi_conn_unbind,
	.destroy_conn		= iscsi_conn_teardown,
	.attr_is_visible	= isi_attr_is_visible,
	.set_param		= isi_set_param,
	.get_conn_param		= iscsi_conn_get_param,
	.get_ep_param		= isi_get_ep_param,
	.get_session_param	= iscsi_session_get_param,
	.start_conn		= isi_conn_start,
	.stop_conn		= isi_conn_stop,
	.get_host_param		= iscsi_host_get_param,
	.set_host_param		= iscsi_host_set_param,
	.send_pdu		= iscsi_conn_send_pdu,
	.get_stats		= isi_get_stats,
	.init_task		= isi_init_task,
	.xmit_task		= isi_xmit_task,
	.cleanup_task		= isi_cleanup_task,
	.alloc_pdu		= isi_alloc_pdu,
	.session_recovery_timedout = iscsi_session_recovery_timedout,
	.ep_connect		= isi_ep_connect,
	.ep_poll		= isi_ep_poll,
	.ep_disconnect		= isi_ep_disconnect,
};

/* ---- device removal and module ---- */

/*
 * The device is going away: let go of everything on it now, whatever
 * iscsid does. The connection fails (iscsid recovers the session or tears
 * it down later); what iscsid holds, the endpoint and the iSCSI
 * connection, stays, without RDMA resources.
 */
static void isi_conn_detach_device(struct isi_conn *ic)
{
	struct rdma_cm_id *cm_id;
	struct isdm_device *dev;

	mutex_lock(&ic->lock);
	isi_cm_failed(ic, -ENODEV);
	/* no transmit runs or starts (it does not take ic->lock) */
	if (ic->iconn)
		iscsi_suspend_tx(ic->iconn);
	/* every completion has run: no task reference is left with us */
	isi_conn_terminate(ic);
	if (ic->iconn)
		isi_detach_tasks(ic, ic->iconn);
	isi_fr_pool_destroy(ic);
	isi_rx_destroy(ic);
	isdm_queues_destroy(&ic->base.q);
	cm_id = ic->base.cm_id;
	ic->base.cm_id = NULL;
	dev = ic->base.dev;
	ic->base.dev = NULL;
	mutex_unlock(&ic->lock);

	/* waits for a running CM handler, which takes only ic->lock */
	if (cm_id)
		rdma_destroy_id(cm_id);
	isdm_device_put(dev);
}

/**
 * isi_remove_device() - the core's ib_client says @ib_dev is going away
 * @ib_dev: the device
 *
 * Releases every RDMA resource of every connection on the device before
 * returning, without waiting for iscsid.
 */
static void isi_remove_device(struct ib_device *ib_dev)
{
	struct isi_conn *ic;
	unsigned int n = 0;

	/* isi_conn_release() takes the list mutex first: ic stays alive */
	mutex_lock(&isi_conn_mutex);
	list_for_each_entry(ic, &isi_conn_list, entry) {
		bool on_dev;

		/*
		 * under ic->lock: a CM handler that got the device before the
		 * removal began has stored it (isdm_device_get() refuses the
		 * device from then on)
		 */
		mutex_lock(&ic->lock);
		on_dev = ic->base.dev && ic->base.dev->ib_dev == ib_dev;
		mutex_unlock(&ic->lock);
		if (!on_dev)
			continue;
		isi_conn_detach_device(ic);
		n++;
	}
	mutex_unlock(&isi_conn_mutex);
	if (n)
		pr_info("%s removed: %u connection(s) failed and their resources released\n",
			dev_name(&ib_dev->dev), n);
}

static struct isdm_ulp isi_ulp = {
	.name		= KBUILD_MODNAME,
	.remove_device	= isi_remove_device,
};

static int __init isi_init(void)
{
	int ret;

	ret = isi_tx_init();
	if (ret)
		return ret;
	isi_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	isi_release_wq = alloc_workqueue("isi_release", WQ_UNBOUND, 0);
	if (!isi_release_wq) {
		ret = -ENOMEM;
		goto tx_exit;
	}
	ret = isdm_register_ulp(&isi_ulp);
	if (ret)
		goto destroy_wq;
	isi_scsi_transport = iscsi_register_transport(&isi_transport);
	if (!isi_scsi_transport) {
		pr_err("cannot register the iSCSI transport \"iser\" (is the in-tree ib_iser loaded?)\n");
		ret = -EEXIST;
		goto unregister_ulp;
	}
	return 0;

unregister_ulp:
	isdm_unregister_ulp(&isi_ulp);
destroy_wq:
	destroy_workqueue(isi_release_wq);
tx_exit:
	debugfs_remove(isi_debugfs_root);
	isi_tx_exit();
	return ret;
}

static void __exit isi_exit(void)
{
	struct isi_conn *ic;

	iscsi_unregister_transport(&isi_transport);
	destroy_workqueue(isi_release_wq);
	/* endpoints iscsid never disconnected */
	for (;;) {
		mutex_lock(&isi_conn_mutex);
		ic = list_first_entry_or_null(&isi_conn_list, struct isi_conn,
					      entry);
		mutex_unlock(&isi_conn_mutex);
		if (!ic)
			break;
		mutex_lock(&ic->lock);
		isi_conn_terminate(ic);
		mutex_unlock(&ic->lock);
		isi_conn_release(ic);
	}
	isdm_unregister_ulp(&isi_ulp);
	debugfs_remove(isi_debugfs_root);
	isi_tx_exit();
}

module_init(isi_init);
module_exit(isi_exit);

MODULE_DESCRIPTION("iSER initiator: the open-iscsi transport \"iser\"");
MODULE_VERSION(ISDM_VERSION);
MODULE_LICENSE("GPL");
