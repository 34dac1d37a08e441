// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: the data path. Sends of control-type PDUs (login, text, NOP-Out,
 * TMF, logout, SCSI Command, unsolicited Data-Out), FRWR registration of
 * SCSI buffers, and the receive path into libiscsi.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/sizes.h>
#include <rdma/ib_verbs.h>
#include <scsi/iscsi_proto.h>
#include <scsi/scsi_cmnd.h>
#include <scsi/scsi_host.h>

#include "isi.h"

static struct kmem_cache *isi_tx_cache;

static struct isi_conn *isi_qp_conn(struct ib_wc *wc)
{
	return wc->qp->qp_context;
}

/**
 * isi_fail() - report a connection failure to libiscsi, once
 * @ic: the connection
 * @err: the reason given to iscsid
 *
 * Every receive flushed after a QP error would report it again, and
 * libiscsi drops repeats only once the session has failed: a connection
 * bound but not started (waiting for a HelloReply, or one whose start
 * failed) turns each repeat into an event iscsid must read, and a hundred
 * of them exhaust its receive contexts. So only the first report goes up;
 * iscsid tears the whole connection down after it in any case.
 */
void isi_fail(struct isi_conn *ic, enum iscsi_err err)
{
	struct iscsi_conn *conn = READ_ONCE(ic->iconn);

	if (conn && !test_and_set_bit(ISI_F_FAILED, &ic->flags))
		iscsi_conn_failure(conn, err);
}

static void isi_wc_error(struct isi_conn *ic, struct ib_wc *wc,
			 const char *what)
{
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_err_ratelimited("%s completion failed: %s (%d) vendor_err 0x%x\n",
				   what, ib_wc_status_msg(wc->status),
				   wc->status, wc->vendor_err);
	isi_fail(ic, ISCSI_ERR_CONN_FAILED);
}

/* ---- fast registration descriptors ---- */

/**
 * isi_io_pages() - 4 KiB pages of the largest transfer of one command
 * @ib_dev: the RDMA device of the session's connection
 * @max_io_kb: what the administrator asked for (module parameter)
 *
 * An FRWR maps the transfer page by page, plus one page when the buffer
 * does not start on a page boundary, so the device's fast registration
 * page list bounds the transfer to one page less than its length.
 *
 * Return: the number of pages, at least 1.
 */
u32 isi_io_pages(struct ib_device *ib_dev, u32 max_io_kb)
{
	u32 dev = ib_dev->attrs.max_fast_reg_page_list_len;

	return clamp_t(u32, max_io_kb / (SZ_4K / SZ_1K), 1,
		       dev > 1 ? dev - 1 : 1);
}

/**
 * isi_fr_pool_init() - allocate one FRWR descriptor per SCSI task
 * @ic: the connection
 * @nr: SCSI tasks of the session
 * @pages: pages one descriptor maps (the session's sg_tablesize + 1)
 *
 * Return: 0, -ENOMEM or the error of ib_alloc_mr().
 */
int isi_fr_pool_init(struct isi_conn *ic, u32 nr, u32 pages)
{
	u32 i;

	ic->frs = kcalloc(nr, sizeof(*ic->frs), GFP_KERNEL);
	if (!ic->frs)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		struct ib_mr *mr = ib_alloc_mr(ic->base.dev->pd,
					       IB_MR_TYPE_MEM_REG, pages);

		if (IS_ERR(mr)) {
			ic->nr_frs = i;
			isi_fr_pool_destroy(ic);
			return PTR_ERR(mr);
		}
		ic->frs[i].mr = mr;
		list_add_tail(&ic->frs[i].entry, &ic->fr_free);
	}
	ic->nr_frs = nr;
	return 0;
}

/* Free the pages @fr held for an ended task: @fr no longer reaches them. */
static void isi_fr_release_held(struct isi_fr *fr)
{
	if (fr->held)
		__free_pages(fr->held, fr->held_order);
	fr->held = NULL;
}

/**
 * isi_fr_pool_destroy() - free the FRWR descriptors
 * @ic: the connection; its QP must be drained
 */
void isi_fr_pool_destroy(struct isi_conn *ic)
{
	u32 i;

	for (i = 0; i < ic->nr_frs; i++) {
		ib_dereg_mr(ic->frs[i].mr);
		isi_fr_release_held(&ic->frs[i]);
	}
	kfree(ic->frs);
	ic->frs = NULL;
	ic->nr_frs = 0;
	INIT_LIST_HEAD(&ic->fr_free);
}

/* A free MR that holds no pages of an ended task, or NULL. */
static struct isi_fr *isi_fr_get(struct isi_conn *ic)
{
	struct isi_fr *fr, *found = NULL;
	unsigned long flags;

	spin_lock_irqsave(&ic->fr_lock, flags);
	list_for_each_entry(fr, &ic->fr_free, entry) {
		if (!fr->held) {
			list_del(&fr->entry);
			found = fr;
			break;
		}
	}
	spin_unlock_irqrestore(&ic->fr_lock, flags);
	return found;
}

static void isi_fr_put(struct isi_conn *ic, struct isi_fr *fr)
{
	unsigned long flags;

	spin_lock_irqsave(&ic->fr_lock, flags);
	list_add(&fr->entry, &ic->fr_free);
	spin_unlock_irqrestore(&ic->fr_lock, flags);
}

static bool isi_sq_reserve(struct isi_conn *ic, int nr)
{
	if (atomic_add_return(nr, &ic->sq_used) > ic->sq_size) {
		atomic_sub(nr, &ic->sq_used);
		return false;
	}
	return true;
}

/* LOCAL_INVs of isi_fr_fence() in flight */
struct isi_fence {
	struct ib_cqe		cqe;
	atomic_t		pending;
	atomic_t		failed;
	struct completion	done;
};

static void isi_fence_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct isi_fence *f = container_of(wc->wr_cqe, struct isi_fence, cqe);
	struct isi_conn *ic = isi_qp_conn(wc);

	atomic_dec(&ic->sq_used);
	if (wc->status != IB_WC_SUCCESS) {
		atomic_inc(&f->failed);
		isi_wc_error(ic, wc, "local invalidation");
	}
	if (atomic_dec_and_test(&f->pending))
		complete(&f->done);
}

/**
 * isi_fr_fence() - invalidate every free MR that is still valid
 * @ic: the connection, its lock held
 *
 * A task that ends without a SCSI Response (error handling aborted it, or
 * reset its LUN or target) puts its MR back still valid: the target could
 * reach the buffer, which the SCSI midlayer frees once the error handler
 * returns (RFC 5046 8.3.2: iSER must invalidate the STags of such a task).
 * The error handlers call this before they return, and it waits until
 * the invalidations completed; on a connection that is no longer up the
 * QP is drained and reaches nothing.
 *
 * Return: the number of MRs invalidated, or a negative errno.
 */
int isi_fr_fence(struct isi_conn *ic)
{
	struct isi_fence f = { .cqe.done = isi_fence_done };
	struct ib_send_wr *wrs, *bad;
	struct isi_fr *fr, *tmp;
	LIST_HEAD(stale);
	unsigned long flags;
	int n = 0, i = 0, ret;

	lockdep_assert_held(&ic->lock);
	if (ic->state != ISI_UP || !ic->base.q.qp)
		return 0;
	spin_lock_irqsave(&ic->fr_lock, flags);
	list_for_each_entry_safe(fr, tmp, &ic->fr_free, entry) {
		if (fr->valid) {
			list_move_tail(&fr->entry, &stale);
			n++;
		}
	}
	spin_unlock_irqrestore(&ic->fr_lock, flags);
	if (!n)
		return 0;

	wrs = kcalloc(n, sizeof(*wrs), GFP_KERNEL);
	ret = -ENOMEM;
	if (!wrs)
		goto put_back;
	ret = -EAGAIN;
	if (!isi_sq_reserve(ic, n))
		goto free;
	list_for_each_entry(fr, &stale, entry) {
		wrs[i].opcode = IB_WR_LOCAL_INV;
		wrs[i].wr_cqe = &f.cqe;
		wrs[i].send_flags = IB_SEND_SIGNALED;
		wrs[i].ex.invalidate_rkey = fr->mr->rkey;
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
		i++;
	}
	init_completion(&f.done);
	atomic_set(&f.pending, n);
	atomic_set(&f.failed, 0);
	ret = ib_post_send(ic->base.q.qp, wrs,
			   (const struct ib_send_wr **)&bad);
	if (ret) {
		/* the WRs from @bad on were not posted */
		for (i = bad - wrs; i < n; i++) {
			atomic_dec(&ic->sq_used);
			if (atomic_dec_and_test(&f.pending))
				complete(&f.done);
		}
		pr_err_ratelimited("local invalidation of %d MRs failed: %d\n",
				   n, ret);
		isi_fail(ic, ISCSI_ERR_CONN_FAILED);
	}
	wait_for_completion(&f.done);
	if (!ret && !atomic_read(&f.failed)) {
		list_for_each_entry(fr, &stale, entry) {
			fr->valid = false;
			isi_fr_release_held(fr);
		}
		ret = n;
	} else if (!ret) {
		ret = -EIO;
	}
free:
	kfree(wrs);
put_back:
	spin_lock_irqsave(&ic->fr_lock, flags);
	list_splice_tail(&stale, &ic->fr_free);
	spin_unlock_irqrestore(&ic->fr_lock, flags);
	return ret;
}

/**
 * isi_reg_done() - completion of an unsignaled REG_MR or LOCAL_INV
 * @cq: the connection's CQ
 * @wc: only errors complete: they fail the connection
 */
void isi_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS)
		isi_wc_error(isi_qp_conn(wc), wc, "registration");
}

/* ---- sends ---- */

static void isi_unmap_data(struct isi_conn *ic, struct isi_task *it,
			   struct scsi_cmnd *sc)
{
	struct isi_fr *fr = it->fr;

	if (it->inv_slot) {
		atomic_dec(&ic->sq_used);
		it->inv_slot = false;
	}
	if (it->nents) {
		ib_dma_unmap_sg(ic->base.dev->ib_dev, it->sgl, it->sg_count,
				it->dir);
		it->nents = 0;
	}
	if (it->bounce) {
		/* a READ's data reaches the command before it completes */
		if (it->dir == DMA_FROM_DEVICE)
			sg_copy_from_buffer(scsi_sglist(sc), scsi_sg_count(sc),
					    page_address(it->bounce),
					    scsi_bufflen(sc));
		/*
		 * A task that ended without a SCSI Response leaves its MR
		 * valid until isi_fr_fence(): the target can still write
		 * into the bounce pages until then, so they go with the MR
		 * (the SCSI buffer itself stays the midlayer's until the
		 * error handler returns).
		 */
		if (fr && fr->valid) {
			struct isi_host *ih = iscsi_host_priv(sc->device->host);

			fr->held = it->bounce;
			fr->held_order = it->bounce_order;
			atomic_inc(&ih->bounce_held);
		} else {
			__free_pages(it->bounce, it->bounce_order);
		}
		it->bounce = NULL;
	}
	if (fr) {
		isi_fr_put(ic, fr);
		it->fr = NULL;
	}
	it->rsv = false;
	it->wsv = false;
}

static void isi_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct isi_tx *tx = container_of(wc->wr_cqe, struct isi_tx, send.cqe);
	struct isi_conn *ic = isi_qp_conn(wc);
	struct iscsi_task *task = tx->task;
	bool put_task = tx->put_task;

	atomic_sub(tx->nr_wr, &ic->sq_used);
	isdm_tx_unmap(ic->base.dev, &tx->send);
	if (wc->status != IB_WC_SUCCESS)
		isi_wc_error(ic, wc, "send");
	if (tx->dataout)
		kmem_cache_free(isi_tx_cache, tx);
	if (put_task)
		iscsi_put_task(task);
	iscsi_put_task(task);
}

/* Build the iSER header of @tx, whose BHS libiscsi built, and map both. */
static int isi_tx_prep(struct isi_conn *ic, struct isi_tx *tx,
		       const struct isdm_stags *st)
{
	return isdm_tx_build(&ic->base, &tx->send, NULL, st, 0, isi_send_done);
}

/*
 * Post @tx's Send, behind the chain that starts at @first (NULL: alone),
 * holding a task reference.
 */
static int isi_tx_post(struct isi_conn *ic, struct isi_tx *tx,
		       struct ib_send_wr *first)
{
	int ret;

	if (!iscsi_get_task(tx->task)) {
		ret = -EIO;
		goto unmap;
	}
	ret = isdm_tx_post(&ic->base, &tx->send, first);
	if (!ret)
		return 0;
	iscsi_put_task(tx->task);
	pr_err_ratelimited("ib_post_send failed: %d\n", ret);
unmap:
	isdm_tx_unmap(ic->base.dev, &tx->send);
	return ret;
}

static int isi_send_control(struct isi_conn *ic, struct iscsi_task *task)
{
	struct iscsi_conn *conn = task->conn;
	struct isi_task *it = task->dd_data;
	struct isi_tx *tx = &it->tx;
	u32 len = ntoh24(task->hdr->dlength);
	int ret;

	tx->send.num_sge = 1;
	/* only login and text requests carry data (conn->data) */
	if (len && (task != conn->login_task || len > ISI_LOGIN_DATA_MAX ||
		    len > task->data_count)) {
		pr_err_ratelimited("control PDU 0x%x with %u bytes of data refused\n",
				   task->hdr->opcode, len);
		return -EINVAL;
	}
	ret = isdm_login_buf_send_data(ic->base.dev, &ic->login, &tx->send,
				       task->data, len);
	if (ret)
		return ret;
	if (!isi_sq_reserve(ic, 1))
		return -EAGAIN;
	tx->nr_wr = 1;
	tx->task = task;
	tx->dataout = false;
	tx->put_task = task->hdr->itt == RESERVED_ITT;
	ret = isi_tx_prep(ic, tx, NULL);
	if (ret)
		goto unreserve;

	/* before the Full Feature Phase, the response comes into login.rx */
	if (task == conn->login_task && !ic->ffp && !ic->login_posted) {
		ret = isdm_rx_post(ic->base.q.qp, ic->base.dev, &ic->login.rx);
		if (ret) {
			isdm_tx_unmap(ic->base.dev, &tx->send);
			goto unreserve;
		}
		ic->login_posted = true;
	}
	ret = isi_tx_post(ic, tx, NULL);
	if (ret)
		goto unreserve;
	return 0;
unreserve:
	atomic_sub(1, &ic->sq_used);
	return ret;
}

/* Put the data of @sc in a page-aligned buffer of its own. */
static int isi_bounce(struct isi_task *it, struct scsi_cmnd *sc)
{
	u32 len = scsi_bufflen(sc);

	it->bounce_order = get_order(len);
	it->bounce = alloc_pages(GFP_ATOMIC, it->bounce_order);
	if (!it->bounce)
		return -ENOMEM;
	if (it->dir == DMA_TO_DEVICE)
		sg_copy_to_buffer(scsi_sglist(sc), scsi_sg_count(sc),
				  page_address(it->bounce), len);
	sg_init_one(&it->bounce_sg, page_address(it->bounce), len);
	it->sgl = &it->bounce_sg;
	it->sg_count = 1;
	return 0;
}

/* Map and register the SCSI buffer; fill the STags to advertise. */
static int isi_reg_data(struct isi_conn *ic, struct iscsi_task *task,
			struct isdm_stags *st, struct ib_send_wr **first,
			struct ib_reg_wr *reg, struct ib_send_wr *inv)
{
	struct isi_task *it = task->dd_data;
	struct scsi_cmnd *sc = task->sc;
	struct ib_device *ib_dev = ic->base.dev->ib_dev;
	bool write = sc->sc_data_direction == DMA_TO_DEVICE;
	u32 edtl = scsi_bufflen(sc);
	struct ib_mr *mr;
	int n, ret;

	it->dir = write ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
	it->sgl = scsi_sglist(sc);
	it->sg_count = scsi_sg_count(sc);
	if (ic->base.mode.zbva && (it->sgl->offset & (SZ_4K - 1))) {
		/*
		 * Zero-based: tagged offset 0 must be the first byte of a
		 * page of the MR, so a buffer that starts inside a page
		 * goes through a page-aligned bounce buffer.
		 */
		ret = isi_bounce(it, sc);
		if (ret)
			return ret;
	}
	it->nents = ib_dma_map_sg(ib_dev, it->sgl, it->sg_count, it->dir);
	if (!it->nents) {
		isi_unmap_data(ic, it, sc);
		return -ENOMEM;
	}
	it->fr = isi_fr_get(ic);
	if (!it->fr) {
		isi_unmap_data(ic, it, sc);
		return -EAGAIN;
	}
	mr = it->fr->mr;
	if (it->fr->valid) {
		memset(inv, 0, sizeof(*inv));
		inv->opcode = IB_WR_LOCAL_INV;
		inv->wr_cqe = &ic->reg_cqe;
		inv->ex.invalidate_rkey = mr->rkey;
		inv->next = &reg->wr;
		*first = inv;
	} else {
		*first = &reg->wr;
	}
	it->prev_key = mr->rkey & 0xff;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	n = ib_map_mr_sg(mr, it->sgl, it->nents, NULL, SZ_4K);
	if (n != it->nents) {
		pr_err_ratelimited("ib_map_mr_sg mapped %d of %d entries\n",
				   n, it->nents);
		goto undo;
	}
	if (ic->base.mode.zbva) {
		if (mr->iova & (SZ_4K - 1)) {
			pr_err_ratelimited("ZBVA: buffer starts at page offset %llu\n",
					   mr->iova & (SZ_4K - 1));
			goto undo;
		}
		mr->iova = 0;
	}

	memset(reg, 0, sizeof(*reg));
	reg->wr.opcode = IB_WR_REG_MR;
	reg->wr.wr_cqe = &ic->reg_cqe;
	reg->mr = mr;
	reg->key = mr->rkey;
	reg->access = IB_ACCESS_LOCAL_WRITE |
		      (write ? IB_ACCESS_REMOTE_READ : IB_ACCESS_REMOTE_WRITE);
	it->prev_valid = it->fr->valid;
	it->fr->valid = true;

	if (!write) {
		st->rsv = true;
		st->read_stag = mr->rkey;
		st->read_va = mr->iova;
		it->rsv = true;
	} else {
		u32 unsol = task->imm_count + task->unsol_r2t.data_length;

		if (unsol < edtl) {
			st->wsv = true;
			st->write_stag = mr->rkey;
			/* ZBVA: no VA, the tagged offset is the buffer offset */
			st->write_va = ic->base.mode.zbva ? 0 :
				       mr->iova + unsol;
			it->wsv = true;
		}
	}
	return 0;
undo:
	ib_update_fast_reg_key(mr, it->prev_key);
	isi_unmap_data(ic, it, sc);
	return -EINVAL;
}

/* Nothing was posted: the MR keeps its previous key and state. */
static void isi_reg_undo(struct isi_task *it)
{
	if (!it->fr)
		return;
	ib_update_fast_reg_key(it->fr->mr, it->prev_key);
	it->fr->valid = it->prev_valid;
}

/*
 * A WRITE whose data all goes as immediate data needs no STag: the target
 * never reads it. Like the in-tree initiator, send it from its pages with
 * the local DMA key, so there is no registration now and no local
 * invalidation before the MR's next use (which soft-RoCE, as IBA 10.6.5.1
 * allows, fences behind every earlier work request of the send queue: at
 * queue depth 32 that halved 4 KiB write IOPS).
 *
 * Return: true when @tx carries the data; false to register it instead.
 */
static bool isi_map_imm(struct isi_conn *ic, struct iscsi_task *task,
			struct isi_tx *tx)
{
	struct isi_task *it = task->dd_data;
	struct scsi_cmnd *sc = task->sc;
	struct scatterlist *sg;
	int i;

	if (sc->sc_data_direction != DMA_TO_DEVICE ||
	    scsi_get_prot_op(sc) != SCSI_PROT_NORMAL ||
	    task->imm_count != scsi_bufflen(sc) ||
	    task->unsol_r2t.data_length ||
	    scsi_sg_count(sc) > ic->imm_sge)
		return false;
	it->dir = DMA_TO_DEVICE;
	it->sgl = scsi_sglist(sc);
	it->sg_count = scsi_sg_count(sc);
	it->nents = ib_dma_map_sg(ic->base.dev->ib_dev, it->sgl, it->sg_count,
				  it->dir);
	if (!it->nents)
		return false;
	for_each_sg(it->sgl, sg, it->nents, i) {
		tx->send.sge[1 + i].addr = sg_dma_address(sg);
		tx->send.sge[1 + i].length = sg_dma_len(sg);
		tx->send.sge[1 + i].lkey = ic->base.dev->pd->local_dma_lkey;
	}
	tx->send.num_sge = 1 + it->nents;
	return true;
}

static int isi_send_command(struct isi_conn *ic, struct iscsi_task *task)
{
	struct isi_task *it = task->dd_data;
	struct scsi_cmnd *sc = task->sc;
	struct isi_tx *tx = &it->tx;
	struct isdm_stags st = {};
	struct ib_send_wr inv, *first = NULL;
	struct ib_reg_wr reg;
	int nr_wr = 1, ret;

	tx->send.num_sge = 1;
	if (scsi_bufflen(sc)) {
		if (sc->sc_data_direction != DMA_TO_DEVICE &&
		    sc->sc_data_direction != DMA_FROM_DEVICE)
			return -EINVAL;
		/*
		 * LOCAL_INV of a stale MR, REG_MR and the Send now; the
		 * LOCAL_INV after a response that did not invalidate the MR
		 * (isi_rsp_inv()) later
		 */
		nr_wr = 4;
	}
	if (!isi_sq_reserve(ic, nr_wr))
		return -EAGAIN;
	if (scsi_bufflen(sc) && isi_map_imm(ic, task, tx)) {
		/* no LOCAL_INV and REG_MR in front of the Send */
		atomic_sub(nr_wr - 1, &ic->sq_used);
		nr_wr = 1;
	} else if (scsi_bufflen(sc)) {
		ret = isi_reg_data(ic, task, &st, &first, &reg, &inv);
		if (ret)
			goto unreserve;
		/* isi_unmap_data() or isi_inv_done() gives it back */
		it->inv_slot = true;
		nr_wr--;
		reg.wr.next = &tx->send.wr;
		if (task->imm_count) {
			tx->send.sge[1].addr = it->fr->mr->iova;
			tx->send.sge[1].length = task->imm_count;
			tx->send.sge[1].lkey = it->fr->mr->lkey;
			tx->send.num_sge = 2;
		}
	}
	tx->nr_wr = nr_wr;
	tx->task = task;
	tx->dataout = false;
	tx->put_task = false;
	ret = isi_tx_prep(ic, tx, &st);
	if (ret)
		goto unmap;
	ret = isi_tx_post(ic, tx, first);
	if (ret)
		goto unmap;
	return 0;
unmap:
	isi_reg_undo(it);
	isi_unmap_data(ic, it, sc);
unreserve:
	atomic_sub(nr_wr, &ic->sq_used);
	return ret;
}

static int isi_send_dataout(struct isi_conn *ic, struct iscsi_task *task)
{
	struct isi_task *it = task->dd_data;
	struct iscsi_data *hdr;
	struct isi_tx *tx;
	u32 off, len;
	int ret;

	if (!it->fr)
		return -EINVAL;
	if (!isi_sq_reserve(ic, 1))
		return -EAGAIN;
	tx = kmem_cache_zalloc(isi_tx_cache, GFP_ATOMIC);
	if (!tx) {
		ret = -ENOMEM;
		goto unreserve;
	}
	tx->send.hdr = tx->hdr;
	hdr = isdm_tx_bhs(&tx->send);
	iscsi_prep_data_out_pdu(task, &task->unsol_r2t, hdr);
	off = be32_to_cpu(hdr->offset);
	len = ntoh24(hdr->dlength);
	if (off + len > scsi_bufflen(task->sc)) {
		ret = -EINVAL;
		goto free;
	}
	tx->send.sge[1].addr = it->fr->mr->iova + off;
	tx->send.sge[1].length = len;
	tx->send.sge[1].lkey = it->fr->mr->lkey;
	tx->send.num_sge = 2;
	tx->nr_wr = 1;
	tx->task = task;
	tx->dataout = true;
	ret = isi_tx_prep(ic, tx, NULL);
	if (ret)
		goto free;
	ret = isi_tx_post(ic, tx, NULL);
	if (ret)
		goto free;
	return 0;
free:
	kmem_cache_free(isi_tx_cache, tx);
unreserve:
	atomic_sub(1, &ic->sq_used);
	task->unsol_r2t.datasn--;
	return ret;
}

/**
 * isi_xmit_task() - the transport's xmit_task: send a task's PDUs
 * @task: a management task or a SCSI command
 *
 * Return: 0; -EAGAIN or -ENOMEM to have libiscsi retry later; another
 * negative errno fails the task.
 */
int isi_xmit_task(struct iscsi_task *task)
{
	struct iscsi_conn *conn = task->conn;
	struct isi_conn *ic = conn->dd_data;
	struct isi_task *it = task->dd_data;
	int ret;

	if (!ic || READ_ONCE(ic->state) != ISI_UP)
		return -ENOTCONN;
	if (!task->sc)
		return isi_send_control(ic, task);

	if (!it->cmd_sent) {
		ret = isi_send_command(ic, task);
		if (ret)
			goto out;
		it->cmd_sent = true;
	}
	while (iscsi_task_has_unsol_data(task)) {
		ret = isi_send_dataout(ic, task);
		if (ret)
			goto out;
		task->unsol_r2t.sent += task->unsol_r2t.data_count;
	}
	return 0;
out:
	/* called under the session's frwd_lock: no iscsi_conn_failure() */
	if (ret != -EAGAIN && ret != -ENOMEM)
		pr_err_ratelimited("cannot send task 0x%x: %d\n", task->itt, ret);
	return ret;
}

/**
 * isi_init_task() - the transport's init_task
 * @task: the task libiscsi is about to send
 *
 * Return: 0, or -ENODEV when the connection is not up.
 */
int isi_init_task(struct iscsi_task *task)
{
	struct isi_conn *ic = task->conn->dd_data;
	struct isi_task *it = task->dd_data;

	if (!ic || READ_ONCE(ic->state) != ISI_UP)
		return -ENODEV;
	if (task->sc) {
		it->fr = NULL;
		it->nents = 0;
		it->bounce = NULL;
		it->cmd_sent = false;
		it->rsv = false;
		it->wsv = false;
		it->rsp_seen = false;
		it->inv_slot = false;
	}
	return 0;
}

/**
 * isi_cleanup_task() - the transport's cleanup_task: release a task's
 *	registration and DMA mapping
 * @task: the task libiscsi frees
 */
void isi_cleanup_task(struct iscsi_task *task)
{
	struct isi_conn *ic = task->conn->dd_data;
	struct isi_task *it = task->dd_data;

	if (!task->sc)
		return;
	if (!ic) {
		/* the connection was stopped: its resources are gone */
		it->fr = NULL;
		it->nents = 0;
		if (it->bounce)
			__free_pages(it->bounce, it->bounce_order);
		it->bounce = NULL;
		return;
	}
	isi_unmap_data(ic, it, task->sc);
}

/**
 * isi_detach_tasks() - let go of the tasks' DMA mappings and registrations
 *	because the device goes away
 * @ic: the connection, drained, its transmit suspended
 * @conn: its iSCSI connection
 *
 * The tasks stay with libiscsi, which fails them later; their cleanup then
 * finds nothing of the device to release.
 */
void isi_detach_tasks(struct isi_conn *ic, struct iscsi_conn *conn)
{
	struct iscsi_session *session = conn->session;
	int i;

	spin_lock_bh(&session->back_lock);
	for (i = 0; i < session->cmds_max; i++) {
		struct iscsi_task *task = session->cmds[i];
		struct isi_task *it = task->dd_data;

		if (!task->sc)
			continue;
		if (it->nents)
			ib_dma_unmap_sg(ic->base.dev->ib_dev, it->sgl,
					it->sg_count, it->dir);
		it->nents = 0;
		it->fr = NULL;
		it->inv_slot = false;
		if (it->bounce)
			__free_pages(it->bounce, it->bounce_order);
		it->bounce = NULL;
	}
	spin_unlock_bh(&session->back_lock);
}

/**
 * isi_alloc_pdu() - the transport's alloc_pdu: the BHS lives in the Send
 * @task: the task
 * @opcode: unused
 *
 * Return: 0.
 */
int isi_alloc_pdu(struct iscsi_task *task, u8 opcode)
{
	struct isi_task *it = task->dd_data;

	it->tx.send.hdr = it->tx.hdr;
	task->hdr = isdm_tx_bhs(&it->tx.send);
	task->hdr_max = ISDM_BHS_LEN;
	return 0;
}

/* ---- receives ---- */

/*
 * A NOP-In or a TMF, Login, Text or Logout Response that names a task must
 * name a live task of the request it answers, and so must a Reject of a
 * NOP-Out for "too many immediate commands" (libiscsi takes that as the
 * answer to its ping). libiscsi of some kernels (Debian's 6.12.107) looks
 * these ITTs up without checking either: a TMF Response naming a READ
 * completed the READ as a success without its data, one naming a free
 * task dropped its last reference again (the task then went back to the
 * pool twice). SCSI Responses go through iscsi_itt_to_ctask(), which
 * checks; iSER carries no Data-In or R2T.
 *
 * @itt is set to the ITT looked at, for the log line.
 * Context: the session's back_lock held (task states change under it).
 */
static bool isi_itt_kind_ok(struct iscsi_conn *conn, struct iscsi_hdr *hdr,
			    u8 opcode, const u8 *data, u32 data_len,
			    itt_t *itt)
{
	const struct iscsi_hdr *rej = (const struct iscsi_hdr *)data;
	struct iscsi_task *task;
	u8 answers = opcode;

	*itt = hdr->itt;
	switch (opcode) {
	case ISDM_OP_NOP_IN:
	case ISDM_OP_TMF_RSP:
	case ISDM_OP_LOGIN_RSP:
	case ISDM_OP_TEXT_RSP:
	case ISDM_OP_LOGOUT_RSP:
		break;
	case ISDM_OP_REJECT:
		/* libiscsi looks only at this reason and opcode */
		if (((struct iscsi_reject *)hdr)->reason !=
		    ISCSI_REASON_IMM_CMD_REJECT ||
		    data_len < ISDM_BHS_LEN ||
		    (rej->opcode & ISDM_BHS_OPCODE_MASK) != ISDM_OP_NOP_OUT)
			return true;
		*itt = rej->itt;
		answers = ISDM_OP_NOP_IN;
		break;
	default:
		return true;
	}
	if (*itt == RESERVED_ITT)
		return true;	/* unsolicited: libiscsi's own checks */
	task = iscsi_itt_to_task(conn, *itt);
	if (!task)
		return true;	/* no such index: libiscsi refuses it */
	return task->state != ISCSI_TASK_FREE && !task->sc && task->hdr &&
	       isdm_rsp_answers(task->hdr->opcode, answers);
}

/* A Send with Invalidate must name the MR of the command it answers. */
static int isi_check_inv(struct isi_conn *ic, struct ib_wc *wc,
			 struct iscsi_hdr *hdr, u8 opcode)
{
	struct iscsi_task *task;
	struct isi_task *it;
	u32 rkey = wc->ex.invalidate_rkey;

	if (!ic->base.mode.send_inv) {
		pr_err_ratelimited("remote invalidation of 0x%x not negotiated\n",
				   rkey);
		return -EPROTO;
	}
	if (opcode != ISDM_OP_SCSI_RSP) {
		pr_err_ratelimited("remote invalidation with opcode 0x%x\n",
				   opcode);
		return -EPROTO;
	}
	task = iscsi_itt_to_ctask(ic->iconn, hdr->itt);
	if (!task || !task->sc) {
		pr_err_ratelimited("remote invalidation of 0x%x for unknown itt 0x%x\n",
				   rkey, be32_to_cpu((__force __be32)hdr->itt));
		return -EPROTO;
	}
	it = task->dd_data;
	if (!it->fr || !(it->rsv || it->wsv) || it->fr->mr->rkey != rkey) {
		pr_err_ratelimited("remote invalidation of 0x%x does not match the task\n",
				   rkey);
		return -EPROTO;
	}
	it->fr->valid = false;
	return 0;
}

static void isi_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct isi_task *it = container_of(wc->wr_cqe, struct isi_task,
					   inv_cqe);
	struct isi_conn *ic = isi_qp_conn(wc);

	atomic_dec(&ic->sq_used);
	if (wc->status == IB_WC_SUCCESS)
		it->fr->valid = false;
	else
		isi_wc_error(ic, wc, "local invalidation");
	/* the command completes to SCSI now, its pages out of reach */
	iscsi_put_task(it->tx.task);
}

/*
 * An STag must not outlive its command (RFC 5046 7.3.2: the initiator
 * invalidates what the target did not). A SCSI Response by plain Send
 * leaves the command's MR valid, so the target could still write into
 * pages that go back to the block layer once the command completes:
 * invalidate the MR locally and hold a task reference until that work
 * request completes. libiscsi completes a command to SCSI (and frees its
 * buffer) when the task's last reference goes, so the response is
 * processed in order now and the completion waits for the invalidation.
 *
 * Context: the session's back_lock held, before __iscsi_complete_pdu().
 * Return: 0, or a negative errno that fails the connection.
 */
static int isi_rsp_inv(struct isi_conn *ic, struct iscsi_conn *conn,
		       struct iscsi_hdr *hdr)
{
	struct ib_send_wr wr = {};
	struct iscsi_task *task;
	struct isi_task *it;
	int ret;

	task = iscsi_itt_to_ctask(conn, hdr->itt);
	if (!task)
		return 0;	/* libiscsi refuses the ITT */
	it = task->dd_data;
	if (it->rsp_seen) {
		pr_err_ratelimited("second SCSI Response for ITT 0x%x refused\n",
				   be32_to_cpu((__force __be32)hdr->itt));
		return -EPROTO;
	}
	it->rsp_seen = true;
	if (!it->fr || !it->fr->valid || !it->inv_slot)
		return 0;
	if (!iscsi_get_task(task))
		return -EIO;
	it->inv_cqe.done = isi_inv_done;
	wr.opcode = IB_WR_LOCAL_INV;
	wr.wr_cqe = &it->inv_cqe;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.ex.invalidate_rkey = it->fr->mr->rkey;
	ret = ib_post_send(ic->base.q.qp, &wr, NULL);
	if (ret) {
		/* libiscsi's own reference is still held: no free here */
		__iscsi_put_task(task);
		pr_err_ratelimited("local invalidation of 0x%x failed: %d\n",
				   wr.ex.invalidate_rkey, ret);
		return ret;
	}
	/* the work request owns the send queue slot now */
	it->inv_slot = false;
	return 0;
}

/* ---- Hello (RFC 5046 5.1.3, 9.3, 9.4) ---- */

/* End the Hello exchange in @state and wake isi_conn_start(). */
static void isi_hello_end(struct isi_conn *ic, int state)
{
	/* hello_res before the state; isi_hello_exchange() reads them */
	smp_store_release(&ic->hello_state, state);
	wake_up_all(&ic->wq);
}

static void isi_hello_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct isi_conn *ic = isi_qp_conn(wc);

	atomic_dec(&ic->sq_used);
	isdm_tx_unmap(ic->base.dev, &ic->hello_tx);
	if (wc->status == IB_WC_SUCCESS)
		return;
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_err_ratelimited("iSER Hello send failed: %s (%d)\n",
				   ib_wc_status_msg(wc->status), wc->status);
	if (READ_ONCE(ic->hello_state) == ISI_HELLO_SENT)
		isi_hello_end(ic, ISI_HELLO_FAILED);
}

/**
 * isi_hello_send() - send the iSER Hello as the connection's first iSER
 *	message of the full feature phase
 * @ic: the connection, its full-feature receive buffers posted
 *
 * The Hello declares the QP's responder resources (the IRD the CM exchange
 * fixed) as iSER-IRD and goes as a SendSE (RFC 5046 appendix A). The next
 * message received must be the HelloReply (isi_recv_done()).
 *
 * Return: 0, or a negative errno when it could not be posted.
 */
int isi_hello_send(struct isi_conn *ic)
{
	struct isdm_send_op op = { .kind = ISDM_SEND_SE };
	struct isdm_tx *tx = &ic->hello_tx;
	int ret;

	isdm_hello_build(&ic->hello, min_t(u32, ic->ird, U16_MAX));
	tx->hdr = (u8 *)&ic->hello;
	tx->num_sge = 1;
	ret = isdm_tx_map(ic->base.dev, tx, 0, sizeof(ic->hello), &op,
			  isi_hello_send_done);
	if (ret)
		return ret;
	if (!isi_sq_reserve(ic, 1)) {
		ret = -EAGAIN;
		goto unmap;
	}
	/*
	 * Before the post, as a release: the HelloReply may complete before
	 * ib_post_send() returns, and its receive must see SENT
	 */
	smp_store_release(&ic->hello_state, ISI_HELLO_SENT);
	ret = isdm_tx_post(&ic->base, tx, NULL);
	if (!ret)
		return 0;
	WRITE_ONCE(ic->hello_state, ISI_HELLO_NONE);
	atomic_dec(&ic->sq_used);
unmap:
	isdm_tx_unmap(ic->base.dev, tx);
	return ret;
}

/*
 * The first message after our Hello: it must be a HelloReply of exactly 12
 * bytes (RFC 5046 10.1.3.3, 10.1.3.4) that accepts version 1. Anything
 * else, or a reject, fails the exchange; isi_conn_start() then refuses to
 * start the connection, and iscsid tears it down.
 */
static void isi_hello_reply(struct isi_conn *ic, const u8 *buf, u32 len)
{
	struct sockaddr *dst =
		(struct sockaddr *)&ic->base.cm_id->route.addr.dst_addr;
	struct isdm_hello_result res;
	int ret;

	ret = isdm_hello_reply_parse(buf, len, &res);
	if (ret == -ERANGE) {
		pr_err_ratelimited("%pISpc: HelloReply names iSER version %u, we speak only %u; closing\n",
				   dst, res.cur_ver, ISDM_ISER_VERSION);
	} else if (ret) {
		pr_err_ratelimited("%pISpc: expected a HelloReply, got %u bytes (iSER byte 0x%02x): %d; closing\n",
				   dst, len, len ? buf[0] : 0, ret);
	} else if (res.reject) {
		pr_err_ratelimited("%pISpc: the target rejected our iSER Hello (its version %u, iSER-ORD %u); closing\n",
				   dst, res.cur_ver, res.ord);
		ret = -ECONNREFUSED;
	}
	if (ret) {
		isi_hello_end(ic, ISI_HELLO_FAILED);
		return;
	}
	/* RFC 5046 8.2: our IRD may shrink to iSER-ORD; the QP keeps its own */
	ic->hello_res = res;
	isi_hello_end(ic, ISI_HELLO_DONE);
}

/* What isdm_rx_parse() found wrong with a received PDU, for the log. */
static const char *isi_rx_err(int err)
{
	switch (err) {
	case -EMSGSIZE:
		return "shorter than iSER header and BHS";
	case -EPROTO:
		return "not an iSCSI control-type iSER message";
	case -EOPNOTSUPP:
		return "opcode no target sends";
	case -EPROTOTYPE:
		return "PDU iSER never carries in a Send";
	case -EPERM:
		return "opcode not allowed in this phase";
	case -E2BIG:
		return "DataSegmentLength above our receive length";
	case -EOVERFLOW:
		return "DataSegmentLength beyond the bytes received";
	case -EBADMSG:
		return "bytes past the padded data segment";
	default:
		return "malformed";
	}
}

/* One rate-limited line naming what is wrong with the PDU at @buf. */
static void isi_log_bad_pdu(struct isi_conn *ic, const u8 *buf, u32 len,
			    int err)
{
	if (len >= ic->base.mode.hdr_len + ISDM_BHS_LEN)
		pr_err_ratelimited("bad PDU received (%u bytes, iSER 0x%02x, opcode 0x%02x): %s (%d)\n",
				   len, buf[0],
				   buf[ic->base.mode.hdr_len] &
				   ISDM_BHS_OPCODE_MASK,
				   isi_rx_err(err), err);
	else
		pr_err_ratelimited("bad PDU received (%u bytes): %s (%d)\n",
				   len, isi_rx_err(err), err);
}

/**
 * isi_rx_post() - post one full-feature receive buffer
 * @ic: the connection
 * @d: the buffer
 *
 * The work request scatters into @d (the first %ISI_RX_SMALL bytes of a
 * message) and then into the connection's spill buffer (the rest), so that
 * every buffer takes the largest message the target may send.
 *
 * Return: 0 or the error of ib_post_recv().
 */
static int isi_rx_post(struct isi_conn *ic, struct isdm_rx_desc *d)
{
	struct ib_sge sge[2] = { d->sge, ic->spill_sge };
	struct ib_recv_wr wr = {
		.wr_cqe		= &d->cqe,
		.sg_list	= sge,
		.num_sge	= ARRAY_SIZE(sge),
	};

	ib_dma_sync_single_for_device(ic->base.dev->ib_dev, d->dma, d->size,
				      DMA_FROM_DEVICE);
	return ib_post_recv(ic->base.q.qp, &wr, NULL);
}

/**
 * isi_rx_unspill() - join a message that overflowed into the spill buffer
 * @ic: the connection
 * @d: the receive buffer that holds its first %ISI_RX_SMALL bytes
 * @len: its length (wc->byte_len, more than %ISI_RX_SMALL)
 *
 * The spill buffer keeps its first %ISI_RX_SMALL bytes free: the head of
 * the message is copied there, so that the whole message lies in one piece
 * at the start of the spill buffer.
 *
 * Return: the message.
 */
static void *isi_rx_unspill(struct isi_conn *ic, struct isdm_rx_desc *d,
			    u32 len)
{
	ib_dma_sync_single_for_cpu(ic->base.dev->ib_dev, ic->spill_dma, len,
				   DMA_FROM_DEVICE);
	memcpy(ic->spill, d->buf, d->size);
	return ic->spill;
}

static void isi_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct isdm_rx_desc *d = container_of(wc->wr_cqe, struct isdm_rx_desc,
					      cqe);
	struct isi_conn *ic = isi_qp_conn(wc);
	struct iscsi_conn *conn = READ_ONCE(ic->iconn);
	bool login = d == &ic->login.rx;
	u32 len = wc->byte_len;
	bool spilled = false;
	struct isdm_rx_pdu pdu;
	struct iscsi_hdr *hdr;
	void *buf = d->buf;
	itt_t itt;
	int ret;

	if (login)
		ic->login_posted = false;
	if (wc->status != IB_WC_SUCCESS) {
		isi_wc_error(ic, wc, "receive");
		return;
	}
	if (!conn)
		return;
	ib_dma_sync_single_for_cpu(ic->base.dev->ib_dev, d->dma, d->size,
				   DMA_FROM_DEVICE);
	if (len > d->size && !login) {
		struct isi_host *ih = iscsi_host_priv(conn->session->host);

		buf = isi_rx_unspill(ic, d, len);
		spilled = true;
		atomic_inc(&ih->rx_spilled);
	}
	/* pairs with isi_hello_send(): the first message after our Hello */
	if (unlikely(smp_load_acquire(&ic->hello_state) == ISI_HELLO_SENT) &&
	    !login) {
		isi_hello_reply(ic, buf, len);
		goto repost;
	}
	ret = isdm_rx_parse(buf, len, &ic->base.mode,
			    ISDM_ROLE_INITIATOR,
			    login ? ISDM_PHASE_LOGIN : ISDM_PHASE_FFP,
			    login ? ISI_LOGIN_DATA_MAX : ic->rx_data_max, &pdu);
	if (ret) {
		isi_log_bad_pdu(ic, buf, len, ret);
		isi_fail(ic, ret == -E2BIG ? ISCSI_ERR_DATALEN :
			 ISCSI_ERR_PROTO);
		return;
	}
	if (pdu.ahs_len) {
		pr_err_ratelimited("PDU 0x%x with an AHS refused\n", pdu.opcode);
		isi_fail(ic, ISCSI_ERR_AHSLEN);
		return;
	}
	hdr = (struct iscsi_hdr *)((u8 *)buf + pdu.bhs_off);

	spin_lock(&conn->session->back_lock);
	if (!isi_itt_kind_ok(conn, hdr, pdu.opcode, (u8 *)buf + pdu.data_off,
			     pdu.data_len, &itt)) {
		spin_unlock(&conn->session->back_lock);
		pr_err_ratelimited("PDU 0x%x for ITT 0x%x, no task it answers: refused\n",
				   pdu.opcode, be32_to_cpu((__force __be32)itt));
		isi_fail(ic, ISCSI_ERR_BAD_ITT);
		return;
	}
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE) {
		ret = isi_check_inv(ic, wc, hdr, pdu.opcode);
		if (ret) {
			spin_unlock(&conn->session->back_lock);
			isi_fail(ic, ISCSI_ERR_CONN_FAILED);
			return;
		}
	}
	if (pdu.opcode == ISDM_OP_SCSI_RSP) {
		ret = isi_rsp_inv(ic, conn, hdr);
		if (ret) {
			spin_unlock(&conn->session->back_lock);
			isi_fail(ic, ISCSI_ERR_CONN_FAILED);
			return;
		}
	}
	ret = __iscsi_complete_pdu(conn, hdr, (u8 *)buf + pdu.data_off,
				   pdu.data_len);
	spin_unlock(&conn->session->back_lock);
	if (ret == ISCSI_ERR_BAD_ITT) {
		pr_err_ratelimited("PDU 0x%x for ITT 0x%x, no live task: refused\n",
				   pdu.opcode,
				   be32_to_cpu((__force __be32)hdr->itt));
		isi_fail(ic, ret);
		return;
	}
	if (ret && ret != ISCSI_ERR_NO_SCSI_CMD) {
		pr_err_ratelimited("PDU 0x%x refused by libiscsi: %d\n",
				   pdu.opcode, ret);
		isi_fail(ic, ret);
		return;
	}
	if (login)
		return;
repost:
	if (spilled)
		ib_dma_sync_single_for_device(ic->base.dev->ib_dev,
					      ic->spill_dma, len,
					      DMA_FROM_DEVICE);
	ret = isi_rx_post(ic, d);
	if (ret) {
		pr_err_ratelimited("receive repost failed: %d\n", ret);
		isi_fail(ic, ISCSI_ERR_CONN_FAILED);
	}
}

/**
 * isi_rx_init() - allocate the login receive and request buffers
 * @ic: the connection, with its device
 *
 * Return: 0 or -ENOMEM.
 */
int isi_rx_init(struct isi_conn *ic)
{
	return isdm_login_buf_alloc(ic->base.dev, &ic->login,
				    ISDM_HDR_LEN_EXT + ISDM_BHS_LEN +
				    ISI_LOGIN_DATA_MAX, ISI_LOGIN_DATA_MAX,
				    isi_recv_done);
}

/*
 * A full-feature receive buffer of exactly @size bytes, rounded up to whole
 * pages only (kmalloc() would round a 256 KiB + 76 byte buffer up to
 * 512 KiB).
 */
/**
 * isi_rx_count() - how many full-feature receive buffers to post
 * @cmds_max: tasks of the session
 *
 * One per task, for its response, plus %ISI_RX_EXTRA for what the target
 * sends unasked (NOP-In pings, asynchronous messages, rejects). Every
 * buffer takes a message of any size (isi_rx_post()), so a Send never
 * finds none: no RNR NAK on InfiniBand and RoCE, no lost message on iWARP.
 *
 * Return: the number of buffers.
 */
u32 isi_rx_count(u32 cmds_max)
{
	return min_t(u32, cmds_max, ISI_CMDS_MAX) + ISI_RX_EXTRA;
}

/**
 * isi_rx_ffp_post() - allocate and post the full-feature receive buffers
 * @ic: the connection
 * @nr: buffers wanted
 * @data_max: data segment bytes a message may carry
 *	(InitiatorRecvDataSegmentLength)
 *
 * @nr buffers of %ISI_RX_SMALL bytes (packed in pages by the core), which
 * hold every message but a large Text Response (or a NOP-In or asynchronous
 * message with more than a few hundred bytes of data), and one spill buffer
 * for the rest of such a message, shared by all: see
 * Documentation/initiator.md, "Receive buffers", for why one is enough.
 *
 * Return: 0, -ENOMEM or the error of ib_post_recv().
 */
int isi_rx_ffp_post(struct isi_conn *ic, u32 nr, u32 data_max)
{
	u32 size = ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + data_max;
	u32 i;
	int ret;

	/* one buffer of its own in whole pages (no completion: never posted) */
	ret = isdm_rx_ring_alloc(ic->base.dev, &ic->spill_ring, 1, size, 0,
				 NULL);
	if (ret)
		return ret;
	ic->spill = ic->spill_ring.desc[0].buf;
	ic->spill_dma = ic->spill_ring.desc[0].dma;
	ic->spill_size = size;
	ic->spill_sge.addr = ic->spill_dma + ISI_RX_SMALL;
	ic->spill_sge.length = size - ISI_RX_SMALL;
	ic->spill_sge.lkey = ic->base.dev->pd->local_dma_lkey;

	ret = isdm_rx_ring_alloc(ic->base.dev, &ic->rx_ring, nr, ISI_RX_SMALL,
				 0, isi_recv_done);
	if (ret)
		return ret;
	ic->rx = ic->rx_ring.desc;
	ic->nr_rx = nr;
	ic->rx_data_max = data_max;
	for (i = 0; i < nr; i++) {
		ret = isi_rx_post(ic, &ic->rx[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * isi_rx_destroy() - free every receive and request buffer
 * @ic: the connection; its QP must be drained
 */
void isi_rx_destroy(struct isi_conn *ic)
{
	isdm_rx_ring_free(ic->base.dev, &ic->rx_ring);
	ic->rx = NULL;
	ic->nr_rx = 0;
	isdm_rx_ring_free(ic->base.dev, &ic->spill_ring);
	ic->spill = NULL;
	isdm_login_buf_free(ic->base.dev, &ic->login);
}

/**
 * isi_io_init() - create the Data-Out descriptor cache
 *
 * Return: 0 or -ENOMEM.
 */
int isi_io_init(void)
{
	isi_tx_cache = kmem_cache_create("isi_tx", sizeof(struct isi_tx), 0,
					 SLAB_HWCACHE_ALIGN, NULL);
	return isi_tx_cache ? 0 : -ENOMEM;
}

/**
 * isi_io_exit() - destroy the Data-Out descriptor cache
 */
void isi_io_exit(void)
{
	kmem_cache_destroy(isi_tx_cache);
}
