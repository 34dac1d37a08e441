// SPDX-License-Identifier: GPL-2.0
/*
 * The send side of an iSER connection, shared by the initiator and the
 * target: one Send descriptor type whose headers are built, mapped and
 * turned into a work request in one place, the mapping of the wire
 * layer's Send-type rules onto work requests, and a ring of premapped
 * header buffers for Sends that can be numbered.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/dma-mapping.h>
#include <rdma/ib_verbs.h>

#include "isdm/isdm.h"

/* Every Send is signalled; SendSE and SendInvSE carry the solicited flag. */
static void isdm_send_wr_init(struct ib_send_wr *wr,
			      const struct isdm_send_op *op)
{
	wr->send_flags = IB_SEND_SIGNALED;
	switch (op->kind) {
	case ISDM_SEND_INV_SE:
		wr->opcode = IB_WR_SEND_WITH_INV;
		wr->ex.invalidate_rkey = op->inv_stag;
		wr->send_flags |= IB_SEND_SOLICITED;
		break;
	case ISDM_SEND_SE:
		wr->opcode = IB_WR_SEND;
		wr->send_flags |= IB_SEND_SOLICITED;
		break;
	default:
		wr->opcode = IB_WR_SEND;
		break;
	}
}

/**
 * isdm_tx_map() - map (or sync) a Send's header buffer and prepare its
 *	work request
 * @dev: the device the Send goes out on
 * @tx: the descriptor; @tx->hdr holds what is sent
 * @off: where in @tx->hdr the message starts
 * @len: how many bytes of @tx->hdr it takes
 * @op: Send, SendSE or SendInvSE, from the wire layer
 * @done: completion handler
 *
 * A premapped buffer (a ring slot, isdm_tx_ring_slot()) is only synced for
 * the device; any other is mapped for the Send, until isdm_tx_unmap().
 * Fills @tx->sge[0] with the @len bytes at @off and the work request with
 * @op's opcode and flags; the data SGEs @tx->sge[1..] and @tx->num_sge are
 * the caller's. Used as it is for messages without an iSER header of
 * their own (isdm_hello_post()).
 *
 * Context: any; does not sleep.
 * Return: 0, or -ENOMEM when the buffer cannot be mapped.
 */
static int isdm_tx_map(struct isdm_device *dev, struct isdm_tx *tx, u32 off,
		       u32 len, const struct isdm_send_op *op,
		       void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	struct ib_device *ib_dev = dev->ib_dev;

	if (tx->premapped) {
		ib_dma_sync_single_for_device(ib_dev, tx->dma, off + len,
					      DMA_TO_DEVICE);
	} else {
		tx->dma = ib_dma_map_single(ib_dev, tx->hdr, off + len,
					    DMA_TO_DEVICE);
		if (ib_dma_mapping_error(ib_dev, tx->dma)) {
			tx->dma = 0;
			return -ENOMEM;
		}
		tx->map_len = off + len;
	}
	tx->sge[0].addr = tx->dma + off;
	tx->sge[0].length = len;
	tx->sge[0].lkey = dev->pd->local_dma_lkey;
	tx->cqe.done = done;

	memset(&tx->wr, 0, sizeof(tx->wr));
	tx->wr.wr_cqe = &tx->cqe;
	tx->wr.sg_list = tx->sge;
	isdm_send_wr_init(&tx->wr, op);
	return 0;
}

/**
 * isdm_tx_build() - build the iSER header of a PDU's Send, map the
 *	headers and prepare the work request
 * @c: the connection: its device and what it negotiated (header form,
 *	Send with Invalidate)
 * @tx: the descriptor; the BHS is at isdm_tx_bhs(@tx) already
 * @adv: STags the PDU's command advertised, for the Send-with-Invalidate
 *	rule of a SCSI Response (target), or NULL
 * @st: STags this PDU advertises in its iSER header (initiator's SCSI
 *	Command), or NULL
 * @inline_len: bytes right behind the BHS in @tx->hdr sent in the same
 *	SGE as the headers (a ring slot's inline data), or 0
 * @done: completion handler
 *
 * The iSER header ends where the BHS starts (%ISDM_HDR_LEN_EXT), so the
 * 12-byte and the 28-byte form share one layout and the message starts
 * %ISDM_HDR_LEN_EXT - @c->mode.hdr_len bytes into @tx->hdr. The Send type
 * comes from isdm_send_op(), then isdm_tx_map() does the rest.
 *
 * Context: any; does not sleep.
 * Return: 0, -ENOMEM when the headers cannot be mapped, or the wire
 * layer's error for a PDU that is never a Send or a bad header.
 */
int isdm_tx_build(struct isdm_conn *c, struct isdm_tx *tx,
		  const struct isdm_stags *adv, const struct isdm_stags *st,
		  u32 inline_len,
		  void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	const struct isdm_mode *mode = &c->mode;
	u32 off = ISDM_HDR_LEN_EXT - mode->hdr_len;
	struct isdm_send_op op;
	int ret;

	ret = isdm_send_op(isdm_tx_bhs(tx), adv, mode, &op);
	if (ret)
		return ret;
	/* a ring slot written once for the connection (isdm_tx_ring_alloc()) */
	if (st || !tx->hdr_ready) {
		ret = isdm_hdr_build(tx->hdr + off, mode->hdr_len, mode, st);
		if (ret < 0)
			return ret;
	}
	return isdm_tx_map(c->dev, tx, off,
			   mode->hdr_len + ISDM_BHS_LEN + inline_len, &op, done);
}
EXPORT_SYMBOL_GPL(isdm_tx_build);

/**
 * isdm_tx_unmap() - unmap the headers of a Send
 * @dev: the device they were mapped for
 * @tx: the descriptor; nothing is done for a premapped one, one never
 *	mapped or one already unmapped
 *
 * Context: any; does not sleep.
 */
void isdm_tx_unmap(struct isdm_device *dev, struct isdm_tx *tx)
{
	if (!tx->dma || tx->premapped)
		return;
	ib_dma_unmap_single(dev->ib_dev, tx->dma, tx->map_len, DMA_TO_DEVICE);
	tx->dma = 0;
}
EXPORT_SYMBOL_GPL(isdm_tx_unmap);

/**
 * isdm_tx_post() - post a Send, alone or behind a chain of work requests
 * @c: the connection
 * @tx: the Send, prepared by isdm_tx_build(), with @tx->num_sge set
 * @first: the first WR of a chain that ends in @tx->wr (RDMA Writes,
 *	registrations), or NULL to post @tx alone
 *
 * Context: any; does not sleep.
 * Return: 0 or the error of ib_post_send(); on error the headers stay
 * mapped (isdm_tx_unmap()).
 */
int isdm_tx_post(struct isdm_conn *c, struct isdm_tx *tx,
		 struct ib_send_wr *first)
{
	tx->wr.num_sge = tx->num_sge;
	return ib_post_send(c->q.qp, first ? first : &tx->wr, NULL);
}
EXPORT_SYMBOL_GPL(isdm_tx_post);

/**
 * isdm_hello_post() - send an iSER Hello or HelloReply
 * @c: the connection
 * @tx: the descriptor of the message; its buffer is @msg
 * @msg: the message, built by isdm_hello_build() or
 *	isdm_hello_reply_build(); it must stay in place until @done runs
 * @len: its length
 * @done: completion handler; it unmaps @tx (isdm_tx_unmap())
 *
 * A Hello and a HelloReply carry no iSCSI PDU and no iSER header of their
 * own: the whole message is one SGE of a SendSE (RFC 5046 appendix A,
 * figures 6 and 7). Mapped for the Send and posted, or, when either
 * fails, left unmapped.
 *
 * Context: any; does not sleep.
 * Return: 0, -ENOMEM when the message cannot be mapped, or the error of
 * ib_post_send().
 */
int isdm_hello_post(struct isdm_conn *c, struct isdm_tx *tx, void *msg,
		    u32 len, void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	const struct isdm_send_op op = { .kind = ISDM_SEND_SE };
	int ret;

	tx->hdr = msg;
	tx->num_sge = 1;
	ret = isdm_tx_map(c->dev, tx, 0, len, &op, done);
	if (ret)
		return ret;
	ret = isdm_tx_post(c, tx, NULL);
	if (ret)
		isdm_tx_unmap(c->dev, tx);
	return ret;
}
EXPORT_SYMBOL_GPL(isdm_hello_post);

/**
 * isdm_wc_log() - log a work request that completed in error
 * @wc: its completion, not %IB_WC_SUCCESS
 * @what: what the work request was: "receive", "send", "RDMA Read"...
 * @peer: the peer's address for the line, or NULL
 *
 * The policy both sides follow: a flushed work request is no news (the
 * queue pair went into error through another one, or the connection is
 * being closed) and gets a debug line only; any other status gets one
 * rate-limited line with the status's text and the device's vendor
 * error. The caller fails its connection in either case.
 *
 * Context: any; does not sleep.
 * Return: true for a flushed work request.
 */
bool isdm_wc_log(const struct ib_wc *wc, const char *what,
		 const struct sockaddr_storage *peer)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR) {
		pr_debug("%s work request flushed\n", what);
		return true;
	}
	if (peer)
		pr_err_ratelimited("connection with %pISpc: %s completion failed: %s (%d), vendor error 0x%x\n",
				   peer, what, ib_wc_status_msg(wc->status),
				   wc->status, wc->vendor_err);
	else
		pr_err_ratelimited("%s completion failed: %s (%d), vendor error 0x%x\n",
				   what, ib_wc_status_msg(wc->status),
				   wc->status, wc->vendor_err);
	return false;
}
EXPORT_SYMBOL_GPL(isdm_wc_log);

/**
 * isdm_tx_ring_free() - unmap and free what isdm_tx_ring_alloc() set up
 * @dev: the device the slots were mapped for
 * @r: the ring; safe on one never or partly allocated, or already freed
 *
 * No Send from the ring may be posted (the QP is drained).
 */
void isdm_tx_ring_free(struct isdm_device *dev, struct isdm_tx_ring *r)
{
	u32 i, nr_pages = r->per_page ? DIV_ROUND_UP(r->nr, r->per_page) : 0;

	for (i = 0; r->pages && i < nr_pages && r->pages[i]; i++) {
		if (r->dma[i])
			ib_dma_unmap_single(dev->ib_dev, r->dma[i], PAGE_SIZE,
					    DMA_TO_DEVICE);
		free_page((unsigned long)r->pages[i]);
	}
	kfree(r->pages);
	kfree(r->dma);
	memset(r, 0, sizeof(*r));
}
EXPORT_SYMBOL_GPL(isdm_tx_ring_free);

/* slot @idx of @r: its page in *@page; returns its offset in that page */
static u32 isdm_tx_ring_pos(const struct isdm_tx_ring *r, u32 idx, u32 *page)
{
	*page = idx / r->per_page;
	return (idx % r->per_page) * r->stride;
}

/**
 * isdm_tx_ring_alloc() - allocate and map a connection's premapped Send
 *	header buffers
 * @dev: the device the Sends go out on
 * @r: the ring to fill; zeroed by the caller
 * @nr: slots (for example one per command tag, so that a tag is its slot)
 * @slot_size: bytes of each slot: the headers (%ISDM_TX_HDR_MAX) and any
 *	data sent inline with them; at most a page
 * @mode: the connection's mode, or NULL
 *
 * Page by page, each page zeroed and mapped once for the life of the
 * ring, so that no allocation is larger than a page however many slots
 * there are; a slot never spans two pages. A Send from a slot is only
 * synced for the device (isdm_tx_map()), never mapped.
 *
 * With @mode, each slot gets the iSER header of a Send that advertises
 * no STag (a target's every Send: RFC 5046 7.3), in @mode's form, here
 * once: isdm_tx_build() writes it only for a Send that advertises STags.
 * The caller never writes ahead of the BHS (isdm_tx_bhs()) in a slot.
 *
 * Context: process context, may sleep.
 * Return: 0 (with no slot when @nr is 0), -EINVAL for a slot smaller
 * than the headers or larger than a page or a @mode without a header
 * form, or -ENOMEM; on error nothing stays allocated.
 */
int isdm_tx_ring_alloc(struct isdm_device *dev, struct isdm_tx_ring *r,
		       u32 nr, u32 slot_size, const struct isdm_mode *mode)
{
	struct ib_device *ib_dev = dev->ib_dev;
	u32 stride = ALIGN(slot_size, dma_get_cache_alignment());
	u8 hdr[ISDM_HDR_LEN_EXT];
	u32 i, nr_pages, page, off;
	int hdr_len = 0;

	if (slot_size < ISDM_TX_HDR_MAX || stride > PAGE_SIZE)
		return -EINVAL;
	/* the header every slot gets, built and checked once */
	if (mode) {
		hdr_len = isdm_hdr_build(hdr, sizeof(hdr), mode, NULL);
		if (hdr_len < 0)
			return hdr_len;
	}
	if (!nr)
		return 0;
	r->stride = stride;
	r->per_page = PAGE_SIZE / stride;
	r->nr = nr;
	nr_pages = DIV_ROUND_UP(nr, r->per_page);
	r->pages = kcalloc(nr_pages, sizeof(*r->pages), GFP_KERNEL);
	r->dma = kcalloc(nr_pages, sizeof(*r->dma), GFP_KERNEL);
	if (!r->pages || !r->dma)
		goto fail;
	for (i = 0; i < nr_pages; i++) {
		r->pages[i] = (void *)get_zeroed_page(GFP_KERNEL);
		if (!r->pages[i])
			goto fail;
		r->dma[i] = ib_dma_map_single(ib_dev, r->pages[i], PAGE_SIZE,
					      DMA_TO_DEVICE);
		if (ib_dma_mapping_error(ib_dev, r->dma[i])) {
			r->dma[i] = 0;
			goto fail;
		}
	}
	/* it ends where the BHS starts (isdm_tx_build()) */
	for (i = 0; hdr_len && i < nr; i++) {
		off = isdm_tx_ring_pos(r, i, &page);
		memcpy((u8 *)r->pages[page] + off + ISDM_HDR_LEN_EXT - hdr_len,
		       hdr, hdr_len);
	}
	r->hdr_ready = hdr_len > 0;
	return 0;
fail:
	isdm_tx_ring_free(dev, r);
	return -ENOMEM;
}
EXPORT_SYMBOL_GPL(isdm_tx_ring_alloc);

/**
 * isdm_tx_ring_slot() - point a Send descriptor at a ring slot
 * @r: the ring
 * @tx: the descriptor; its @hdr, @dma, @premapped and @hdr_ready are set
 * @idx: the slot
 *
 * Context: any; does not sleep.
 * Return: false when @r has no slot @idx (no ring, or @idx too large);
 * @tx is left as it was.
 */
bool isdm_tx_ring_slot(const struct isdm_tx_ring *r, struct isdm_tx *tx,
		       u32 idx)
{
	u32 page, off;

	if (idx >= r->nr)
		return false;
	off = isdm_tx_ring_pos(r, idx, &page);
	tx->hdr = (u8 *)r->pages[page] + off;
	tx->dma = r->dma[page] + off;
	tx->premapped = true;
	tx->hdr_ready = r->hdr_ready;
	return true;
}
EXPORT_SYMBOL_GPL(isdm_tx_ring_slot);
