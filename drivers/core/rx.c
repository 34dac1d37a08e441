// SPDX-License-Identifier: GPL-2.0
/*
 * The receive side of an iSER connection, shared by the initiator and the
 * target: receive buffers packed in chunks, their posting, and the
 * prologue of every receive completion (isdm_rx_begin(), isdm_rx_check()),
 * which checks a received PDU and names what is wrong with it in one
 * uniform log line. Each side keeps only its opcode dispatch.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/dma-mapping.h>
#include <rdma/ib_verbs.h>

#include "isdm/isdm.h"
#include "core.h"

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
int isdm_rx_desc_init(struct isdm_device *dev, struct isdm_rx_desc *d,
		      u32 size, void (*done)(struct ib_cq *cq, struct ib_wc *wc))
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
void isdm_rx_desc_destroy(struct isdm_device *dev, struct isdm_rx_desc *d)
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
static void isdm_rx_log_bad(const struct sockaddr_storage *peer,
			    const void *buf, u32 len,
			    const struct isdm_mode *mode, int err)
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

/**
 * isdm_rx_begin() - the first step of a receive completion
 * @c: the connection
 * @d: the receive buffer that completed
 *
 * Once the connection failed (a PDU was refused, the peer went away),
 * nothing that arrived behind the failing PDU may reach the layer above
 * or the log: the peer sees the connection fail and retries elsewhere,
 * and a peer that sent many bad PDUs would otherwise use up the log's
 * rate limit. The buffer is then not posted again. Otherwise the buffer
 * is made the CPU's.
 *
 * Context: the CQ's completion context; does not sleep.
 * Return: false when the completion is to be dropped.
 */
bool isdm_rx_begin(struct isdm_conn *c, struct isdm_rx_desc *d)
{
	if (isdm_conn_failed(c))
		return false;
	ib_dma_sync_single_for_cpu(c->dev->ib_dev, d->dma, d->size,
				   DMA_FROM_DEVICE);
	return true;
}
EXPORT_SYMBOL_GPL(isdm_rx_begin);

/**
 * isdm_rx_check() - check a received control-type PDU
 * @c: the connection (its mode)
 * @buf: the received message, iSER header first
 * @len: its length
 * @spec: the receiving side's rules
 * @pdu: the decoded PDU, filled on success
 *
 * Runs isdm_rx_parse() and then the AHS rule of @spec: no AHS taken, or
 * the AHS and the CDB length checked with isdm_check_ahs() (a SCSI
 * Command without AHS too). A refused PDU gets the uniform
 * line of isdm_rx_log_bad(), or "PDU 0x.. with an AHS refused" or "PDU
 * 0x.. with a bad AHS (errno)", each naming the peer; the caller fails
 * the connection. With @spec->reject set, a PDU that iSER forbids in a
 * Send (-EPROTOTYPE) or that is not allowed in this phase (-EPERM) comes
 * back unlogged: the target answers those with a Reject (RFC 5046 7.3).
 *
 * Context: any; does not sleep.
 * Return: 0, the negative errno of isdm_rx_parse() or isdm_check_ahs(),
 * or -ENOMSG for an AHS where @spec takes none.
 */
int isdm_rx_check(struct isdm_conn *c, const void *buf, u32 len,
		  const struct isdm_rx_spec *spec, struct isdm_rx_pdu *pdu)
{
	const u8 *bhs;
	int ret;

	ret = isdm_rx_parse(buf, len, &c->mode, spec->role, spec->phase,
			    spec->max_data, pdu);
	if (ret) {
		if (spec->reject && (ret == -EPERM || ret == -EPROTOTYPE))
			return ret;
		isdm_rx_log_bad(spec->peer, buf, len, &c->mode, ret);
		return ret;
	}
	if (!spec->ahs) {
		if (likely(!pdu->ahs_len))
			return 0;
		pr_err_ratelimited("connection with %pISpc: PDU 0x%02x with an AHS refused\n",
				   spec->peer, pdu->opcode);
		return -ENOMSG;
	}
	bhs = (const u8 *)buf + pdu->bhs_off;
	ret = isdm_check_ahs(bhs, bhs + ISDM_BHS_LEN, pdu->ahs_len);
	if (ret)
		pr_err_ratelimited("connection with %pISpc: PDU 0x%02x with a bad AHS (%d)\n",
				   spec->peer, pdu->opcode, ret);
	return ret;
}
EXPORT_SYMBOL_GPL(isdm_rx_check);
