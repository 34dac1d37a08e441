// SPDX-License-Identifier: GPL-2.0
/*
 * Queues of an iSER connection, shared by the initiator and the target:
 * one CQ from the CQ pool, one RC QP, and the buffers of the login phase.
 * The receive side is in rx.c, the send side in tx.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/dma-mapping.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/rw.h>

#include "isdm/isdm.h"
#include "core.h"

/**
 * isdm_queues_create() - create the CQ and the QP of a connection
 * @cm_id: the connection's rdma_cm id; the QP is created on it
 * @dev: the core's device object (its PD is used)
 * @q: filled on success; pass it to isdm_queues_destroy()
 * @attr: the queue sizes and callbacks the side computed
 *
 * The CQ comes from the device's CQ pool and is sized for every work
 * request that can complete: signalled sends, RDMA contexts (each signals
 * at most its last WR), receives, and the two drain WRs of ib_drain_qp().
 * rdma_create_qp() adds the WRs that the RDMA contexts need on top of
 * @attr->send_wr (rdma_rw_init_qp()).
 *
 * Return: 0, or a negative errno from the CQ pool or rdma_create_qp()
 * (or -ENOMEM injected by debugfs iser_dm/fail_queues, see main.c).
 */
int isdm_queues_create(struct rdma_cm_id *cm_id, struct isdm_device *dev,
		       struct isdm_queues *q, const struct isdm_queue_attr *attr)
{
	struct ib_device *ib_dev = dev->ib_dev;
	struct ib_qp_init_attr init = {};
	int ret;

	q->cq_size = attr->send_wr + attr->rdma_ctxs + attr->recv_wr + 2;
	q->cq = ib_cq_pool_get(ib_dev, q->cq_size, -1, attr->poll_ctx);
	if (IS_ERR(q->cq)) {
		ret = PTR_ERR(q->cq);
		q->cq = NULL;
		return ret;
	}

	init.event_handler = attr->event_handler;
	init.qp_context = attr->qp_context;
	init.send_cq = q->cq;
	init.recv_cq = q->cq;
	/* one more of each for ib_drain_qp() */
	init.cap.max_send_wr = attr->send_wr + 1;
	init.cap.max_recv_wr = attr->recv_wr + 1;
	init.cap.max_rdma_ctxs = attr->rdma_ctxs;
	init.cap.max_send_sge = min_t(u32, ib_dev->attrs.max_send_sge,
				      attr->send_sge);
	init.cap.max_recv_sge = max_t(u32, attr->recv_sge, 1);
	init.port_num = cm_id->port_num;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	init.qp_type = IB_QPT_RC;

	ret = isdm_queues_fault() ? -ENOMEM :
	      rdma_create_qp(cm_id, dev->pd, &init);
	if (ret) {
		ib_cq_pool_put(q->cq, q->cq_size);
		q->cq = NULL;
		return ret;
	}
	q->qp = cm_id->qp;
	q->cm_id = cm_id;
	return 0;
}
EXPORT_SYMBOL_GPL(isdm_queues_create);

/**
 * isdm_qp_event_log() - log an asynchronous event of a connection's QP
 * @ev: the event, as the QP's event handler got it
 * @peer: the peer's address, for the line
 *
 * The events that move the QP to the error state outside any work
 * request's completion (a catastrophic error, an invalid request, a remote
 * access error: IBTA 11.6.3) get one rate-limited line each: every work
 * request is flushed next, and a flushed completion does not say why.
 * Any other event gets a debug line. The side's completion handlers fail
 * the connection when the flushes arrive; this only names the cause.
 *
 * Context: any (the device's event context); does not sleep.
 */
void isdm_qp_event_log(const struct ib_event *ev,
		       const struct sockaddr_storage *peer)
{
	switch (ev->event) {
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		pr_err_ratelimited("connection with %pISpc: QP event %s (%d): the queue pair is in the error state\n",
				   peer, ib_event_msg(ev->event), ev->event);
		break;
	default:
		pr_debug("connection with %pISpc: QP event %s (%d)\n", peer,
			 ib_event_msg(ev->event), ev->event);
		break;
	}
}
EXPORT_SYMBOL_GPL(isdm_qp_event_log);

/**
 * isdm_queues_drain() - flush every posted work request, once
 * @q: the connection's queues
 *
 * Waits until the send and receive queues are empty: every posted WR has
 * completed, in error if the QP was not connected any more. Only the first
 * call drains; later calls return at once, so every teardown path may call
 * it. Context: process context, may sleep.
 */
void isdm_queues_drain(struct isdm_queues *q)
{
	if (!q->qp || test_and_set_bit(0, &q->drained))
		return;
	ib_drain_qp(q->qp);
}
EXPORT_SYMBOL_GPL(isdm_queues_drain);

/**
 * isdm_queues_destroy() - destroy what isdm_queues_create() made
 * @q: the connection's queues; safe to call more than once
 *
 * Drains first if nobody did. The rdma_cm id itself stays with the caller.
 *
 * Both sides tear a connection down in one order: drain; the MRs; this
 * (the QP, then the CQ); then the buffers the work requests used (receive
 * ring, Send descriptors, login buffers), which no WR can reach any more.
 */
void isdm_queues_destroy(struct isdm_queues *q)
{
	if (q->qp) {
		isdm_queues_drain(q);
		rdma_destroy_qp(q->cm_id);
		q->qp = NULL;
	}
	if (q->cq) {
		ib_cq_pool_put(q->cq, q->cq_size);
		q->cq = NULL;
	}
}
EXPORT_SYMBOL_GPL(isdm_queues_destroy);

/**
 * isdm_queues_destroy_id() - destroy the rdma_cm id, then its QP and CQ
 * @q: queues made by isdm_queues_create() on @q->cm_id; safe to call more
 *	than once
 *
 * The order nvmet-rdma uses: once rdma_destroy_id() has returned, no CM
 * event handler runs for the id any more, so none can find the id without
 * its QP (rdma_destroy_qp() clears cm_id->qp while the id still gets
 * events). The QP then goes with ib_destroy_qp(), since the id that
 * rdma_destroy_qp() takes is gone. Drains first if nobody did.
 *
 * Context: process context; never in a CM handler (rdma_destroy_id() waits
 * for the id's running handler).
 */
void isdm_queues_destroy_id(struct isdm_queues *q)
{
	if (q->qp)
		isdm_queues_drain(q);
	if (q->cm_id) {
		rdma_destroy_id(q->cm_id);
		q->cm_id = NULL;
	}
	if (q->qp) {
		ib_destroy_qp(q->qp);
		q->qp = NULL;
	}
	isdm_queues_destroy(q);		/* the CQ */
}
EXPORT_SYMBOL_GPL(isdm_queues_destroy_id);

/**
 * isdm_login_buf_free() - unmap and free what isdm_login_buf_alloc() set up
 * @dev: the device the buffers were mapped for
 * @lb: the buffers; safe on ones never or partly allocated, or already
 *	freed
 *
 * The QP must be drained (neither buffer in use).
 */
void isdm_login_buf_free(struct isdm_device *dev, struct isdm_login_buf *lb)
{
	isdm_rx_desc_destroy(dev, &lb->rx);
	if (lb->data_dma)
		ib_dma_unmap_single(dev->ib_dev, lb->data_dma, lb->data_size,
				    DMA_TO_DEVICE);
	lb->data_dma = 0;
	kfree(lb->data);
	lb->data = NULL;
}
EXPORT_SYMBOL_GPL(isdm_login_buf_free);

/**
 * isdm_login_buf_alloc() - allocate and map the buffers of the login phase
 * @dev: the device the connection uses
 * @lb: the buffers to fill; zeroed by the caller
 * @rx_size: bytes of the receive buffer: the largest Login (or Text) PDU
 *	with its iSER header and any AHS the side accepts
 * @data_size: bytes of the data segment of the Login (or Text) PDUs the
 *	side sends
 * @done: completion handler of the receive buffer
 *
 * One receive descriptor (post it with isdm_rx_post()) and one buffer for
 * the keys the side sends, mapped once for the life of the connection and
 * filled per PDU by isdm_login_buf_send_data().
 *
 * Context: process context, may sleep.
 * Return: 0 or -ENOMEM; on error nothing stays allocated.
 */
int isdm_login_buf_alloc(struct isdm_device *dev, struct isdm_login_buf *lb,
			 u32 rx_size, u32 data_size,
			 void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	struct ib_device *ib_dev = dev->ib_dev;
	int ret;

	ret = isdm_rx_desc_init(dev, &lb->rx, rx_size, done);
	if (ret)
		return ret;
	lb->data = kzalloc(data_size, GFP_KERNEL);
	if (!lb->data)
		goto fail;
	lb->data_size = data_size;
	lb->data_dma = ib_dma_map_single(ib_dev, lb->data, data_size,
					 DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ib_dev, lb->data_dma)) {
		lb->data_dma = 0;
		goto fail;
	}
	return 0;
fail:
	isdm_login_buf_free(dev, lb);
	return -ENOMEM;
}
EXPORT_SYMBOL_GPL(isdm_login_buf_alloc);

/**
 * isdm_login_buf_send_data() - put the data segment of a Login (or Text)
 *	PDU into the login buffer and behind the headers of its Send
 * @dev: the device
 * @lb: the connection's login buffers
 * @tx: the Send; its second SGE is set and @tx->num_sge becomes 2
 * @data: the keys to send
 * @len: their length; 0 leaves @tx alone
 *
 * The buffer must not be in use by an earlier Send that has not completed.
 *
 * Context: any; does not sleep.
 * Return: 0, or -EINVAL when @len exceeds the buffer.
 */
int isdm_login_buf_send_data(struct isdm_device *dev,
			     struct isdm_login_buf *lb, struct isdm_tx *tx,
			     const void *data, u32 len)
{
	if (!len)
		return 0;
	if (len > lb->data_size)
		return -EINVAL;
	ib_dma_sync_single_for_cpu(dev->ib_dev, lb->data_dma, len,
				   DMA_TO_DEVICE);
	memcpy(lb->data, data, len);
	ib_dma_sync_single_for_device(dev->ib_dev, lb->data_dma, len,
				      DMA_TO_DEVICE);
	tx->sge[1].addr = lb->data_dma;
	tx->sge[1].length = len;
	tx->sge[1].lkey = dev->pd->local_dma_lkey;
	tx->num_sge = 2;
	return 0;
}
EXPORT_SYMBOL_GPL(isdm_login_buf_send_data);
