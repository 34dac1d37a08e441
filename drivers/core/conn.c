// SPDX-License-Identifier: GPL-2.0
/*
 * Queues and descriptors of an iSER connection, shared by the initiator
 * and the target: one CQ from the CQ pool, one RC QP, receive descriptors
 * sized by the caller from the negotiated data segment lengths. The send
 * side is in tx.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sizes.h>
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
 * Return: 0, or a negative errno from the CQ pool or rdma_create_qp().
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

	ret = rdma_create_qp(cm_id, dev->pd, &init);
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

/* The rest of a descriptor whose @d->buf and @d->dma are set. */
static void isdm_rx_desc_fill(struct isdm_device *dev, struct isdm_rx_desc *d,
			      u32 size,
			      void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	d->size = size;
	d->sge.addr = d->dma;
	d->sge.length = size;
	d->sge.lkey = dev->pd->local_dma_lkey;
	d->cqe.done = done;
}

/**
 * isdm_rx_desc_init() - allocate and map one receive buffer
 * @dev: the device the buffer is used on
 * @d: the descriptor
 * @size: bytes: the largest iSER message the buffer must hold
 * @done: completion handler
 *
 * Return: 0, -ENOMEM.
 */
static int isdm_rx_desc_init(struct isdm_device *dev,
			     struct isdm_rx_desc *d, u32 size,
			     void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	d->buf = kmalloc(size, GFP_KERNEL);
	if (!d->buf)
		return -ENOMEM;
	d->dma = ib_dma_map_single(dev->ib_dev, d->buf, size, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev->ib_dev, d->dma)) {
		kfree(d->buf);
		d->buf = NULL;
		return -ENOMEM;
	}
	isdm_rx_desc_fill(dev, d, size, done);
	return 0;
}

/**
 * isdm_rx_desc_destroy() - unmap and free a receive buffer
 * @dev: the device it was mapped for
 * @d: the descriptor; safe on one that was never or already destroyed
 */
static void isdm_rx_desc_destroy(struct isdm_device *dev,
				 struct isdm_rx_desc *d)
{
	if (!d->buf)
		return;
	ib_dma_unmap_single(dev->ib_dev, d->dma, d->size, DMA_FROM_DEVICE);
	kfree(d->buf);
	d->buf = NULL;
}

/*
 * Receive buffers are packed into chunks of at most this many bytes: one
 * physically contiguous allocation of order 4 at most, mapped once.
 */
#define ISDM_RX_CHUNK_MAX	SZ_64K

/*
 * Bytes of chunk @c: the whole pages its buffers take. Every chunk but the
 * last holds @r->per_chunk buffers; the last holds the rest, and taking
 * only their pages saves up to a chunk (145 buffers of 512 bytes take
 * 64 KiB and 12 KiB, not two 64 KiB chunks).
 */
static u32 isdm_rx_chunk_bytes(const struct isdm_rx_ring *r, u32 c)
{
	return PAGE_ALIGN(r->lead + min(r->per_chunk, r->nr - c * r->per_chunk) *
			  r->stride);
}

/**
 * isdm_rx_ring_alloc() - allocate, map and describe a connection's receive
 *	buffers, packed at their exact size
 * @dev: the device the buffers are used on
 * @r: the ring to fill; zeroed by the caller
 * @nr: buffers
 * @size: bytes of each (the largest iSER message it must hold)
 * @data_off: offset of the data segment in a message without an AHS (the
 *	iSER header and the BHS), placed on an %ISDM_RX_DATA_ALIGN boundary
 *	in every buffer; 0 places nothing
 * @done: completion handler of each descriptor
 *
 * kmalloc() rounds a buffer up to a power of two (a target's buffer of
 * 8 KiB of data plus headers took 16 KiB). Here each buffer takes @size
 * rounded up to the DMA cache alignment, and buffers are packed into
 * chunks of whole pages, at most %ISDM_RX_CHUNK_MAX each (one buffer per
 * chunk when a buffer is larger), each mapped once; the last chunk takes
 * only the pages its buffers need (isdm_rx_chunk_bytes()); a buffer never
 * spans two chunks. @r->desc[i] describes
 * buffer i; post them with isdm_rx_post().
 *
 * With @data_off, the stride is a multiple of %ISDM_RX_DATA_ALIGN and each
 * chunk starts with the few bytes that move its first buffer's data
 * segment onto that boundary: data the target hands to a block device in
 * place must be aligned as a block queue's DMA alignment asks, or the
 * device writes it to the wrong sectors (brd) or the DMA fails.
 *
 * Return: 0, -EINVAL (no buffer asked for) or -ENOMEM; on error what was
 * allocated is freed by isdm_rx_ring_free().
 */
int isdm_rx_ring_alloc(struct isdm_device *dev, struct isdm_rx_ring *r,
		       u32 nr, u32 size, u32 data_off,
		       void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	struct ib_device *ib_dev = dev->ib_dev;
	u32 i, c, bytes, align = dma_get_cache_alignment();

	if (!nr || !size || data_off >= size)
		return -EINVAL;
	if (data_off) {
		align = max_t(u32, align, ISDM_RX_DATA_ALIGN);
		r->lead = ALIGN(data_off, ISDM_RX_DATA_ALIGN) - data_off;
	}
	r->stride = ALIGN(size, align);
	r->per_chunk = clamp_t(u32, (ISDM_RX_CHUNK_MAX - r->lead) / r->stride,
			       1, nr);
	r->nr = nr;
	r->nr_chunks = DIV_ROUND_UP(nr, r->per_chunk);
	r->desc = kcalloc(nr, sizeof(*r->desc), GFP_KERNEL);
	r->chunk = kcalloc(r->nr_chunks, sizeof(*r->chunk), GFP_KERNEL);
	r->chunk_dma = kcalloc(r->nr_chunks, sizeof(*r->chunk_dma),
			       GFP_KERNEL);
	if (!r->desc || !r->chunk || !r->chunk_dma)
		return -ENOMEM;
	for (c = 0; c < r->nr_chunks; c++) {
		bytes = isdm_rx_chunk_bytes(r, c);
		r->chunk[c] = alloc_pages_exact(bytes, GFP_KERNEL);
		if (!r->chunk[c])
			return -ENOMEM;
		r->chunk_dma[c] = ib_dma_map_single(ib_dev, r->chunk[c], bytes,
						    DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(ib_dev, r->chunk_dma[c])) {
			free_pages_exact(r->chunk[c], bytes);
			r->chunk[c] = NULL;
			return -ENOMEM;
		}
		atomic_long_add(bytes, &isdm_rx_ring_bytes);
	}
	for (i = 0; i < nr; i++) {
		struct isdm_rx_desc *d = &r->desc[i];
		u32 off = r->lead + (i % r->per_chunk) * r->stride;

		c = i / r->per_chunk;
		d->buf = (u8 *)r->chunk[c] + off;
		d->dma = r->chunk_dma[c] + off;
		isdm_rx_desc_fill(dev, d, size, done);
	}
	return 0;
}
EXPORT_SYMBOL_GPL(isdm_rx_ring_alloc);

/**
 * isdm_rx_ring_free() - unmap and free what isdm_rx_ring_alloc() set up
 * @dev: the device the buffers were mapped for
 * @r: the ring; safe on one never or partly allocated, or already freed
 *
 * The QP must be drained (no buffer posted).
 */
void isdm_rx_ring_free(struct isdm_device *dev, struct isdm_rx_ring *r)
{
	u32 c, bytes;

	for (c = 0; r->chunk && c < r->nr_chunks; c++) {
		if (!r->chunk[c])
			continue;
		bytes = isdm_rx_chunk_bytes(r, c);
		ib_dma_unmap_single(dev->ib_dev, r->chunk_dma[c], bytes,
				    DMA_FROM_DEVICE);
		free_pages_exact(r->chunk[c], bytes);
		atomic_long_sub(bytes, &isdm_rx_ring_bytes);
	}
	kfree(r->chunk);
	kfree(r->chunk_dma);
	kfree(r->desc);
	memset(r, 0, sizeof(*r));
}
EXPORT_SYMBOL_GPL(isdm_rx_ring_free);

/**
 * isdm_rx_post() - post one receive buffer
 * @qp: the connection's QP
 * @dev: the device (for the DMA sync)
 * @d: the descriptor
 *
 * Return: 0 or the error of ib_post_recv().
 */
int isdm_rx_post(struct ib_qp *qp, struct isdm_device *dev,
		 struct isdm_rx_desc *d)
{
	struct ib_recv_wr wr = {
		.wr_cqe		= &d->cqe,
		.sg_list	= &d->sge,
		.num_sge	= 1,
	};

	ib_dma_sync_single_for_device(dev->ib_dev, d->dma, d->size,
				      DMA_FROM_DEVICE);
	return ib_post_recv(qp, &wr, NULL);
}
EXPORT_SYMBOL_GPL(isdm_rx_post);

/**
 * isdm_rx_log_bad() - the one log line for a message isdm_rx_parse()
 *	refused
 * @peer: the peer's address for the line, or NULL
 * @buf: the message
 * @len: its length
 * @mode: the connection's mode (where the BHS starts)
 * @err: what isdm_rx_parse() returned
 *
 * Both sides name a refused message alike: who sent it, its length, the
 * iSER flags byte and the opcode when the message holds them, and what is
 * wrong with it in words (isdm_rx_strerror()). Rate-limited: a peer sends
 * as many as it likes. The caller fails its connection.
 *
 * Context: any; does not sleep.
 */
void isdm_rx_log_bad(const struct sockaddr_storage *peer, const void *buf,
		     u32 len, const struct isdm_mode *mode, int err)
{
	const u8 *b = buf;
	char who[64] = "";

	if (peer)
		snprintf(who, sizeof(who), "connection with %pISpc: ", peer);
	if (len >= mode->hdr_len + ISDM_BHS_LEN)
		pr_err_ratelimited("%sbad PDU received (%u bytes, iSER 0x%02x, opcode 0x%02x): %s (%d)\n",
				   who, len, b[0],
				   b[mode->hdr_len] & ISDM_BHS_OPCODE_MASK,
				   isdm_rx_strerror(err), err);
	else
		pr_err_ratelimited("%sbad PDU received (%u bytes): %s (%d)\n",
				   who, len, isdm_rx_strerror(err), err);
}
EXPORT_SYMBOL_GPL(isdm_rx_log_bad);

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
