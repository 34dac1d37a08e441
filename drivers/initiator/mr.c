// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: memory registration of SCSI buffers. The pool of fast
 * registration (FRWR) descriptors of a connection, the REG_MR of a
 * command's buffer (through a page-aligned bounce buffer when ZBVA needs
 * one), its unmap, the invalidation of the MRs that tasks ended by error
 * handling left valid, and the release of the tasks' mappings when the
 * device goes away.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/sizes.h>
#include <rdma/ib_verbs.h>
#include <scsi/scsi_cmnd.h>
#include <scsi/scsi_host.h>

#include "isi.h"

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
	isdm_bounce_free(&fr->held);
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
		if (!fr->held.sgl) {
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

	isdm_credits_give(&ic->sq, 1);
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
	if (!isdm_credits_take(&ic->sq, n))
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
			isdm_credits_give(&ic->sq, 1);
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

/**
 * isi_unmap_data() - release the DMA mapping, bounce buffer and MR of a
 *	SCSI task
 * @ic: the connection
 * @it: the task's data
 * @sc: its SCSI command
 *
 * Gives back the send queue slot held for a LOCAL_INV, copies a READ's
 * bounce buffer into the command and puts the MR back in the pool (still
 * valid if nothing invalidated it, see isi_fr_fence()).
 */
void isi_unmap_data(struct isi_conn *ic, struct isi_task *it,
		    struct scsi_cmnd *sc)
{
	struct isi_fr *fr = it->fr;

	if (it->inv_slot) {
		isdm_credits_give(&ic->sq, 1);
		it->inv_slot = false;
	}
	if (it->nents) {
		ib_dma_unmap_sg(ic->base.dev->ib_dev, it->sgl, it->sg_count,
				it->dir);
		it->nents = 0;
	}
	if (it->bounce.sgl) {
		/*
		 * a READ's data reaches the command before it completes
		 * (a protected one's at its response: isi_check_protection())
		 */
		if (it->dir == DMA_FROM_DEVICE && !it->pi)
			isdm_bounce_copy(&it->bounce, scsi_sglist(sc),
					 scsi_bufflen(sc), false);
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
			atomic_inc(&ih->bounce_held);
		} else {
			isdm_bounce_free(&it->bounce);
		}
		it->bounce.sgl = NULL;
	}
	it->pi = false;
	it->pi_split = false;
	if (fr) {
		isi_fr_put(ic, fr);
		it->fr = NULL;
	}
	it->rsv = false;
	it->wsv = false;
}

/*
 * Put the data of @sc in a page-aligned buffer of its own, page by page:
 * one allocation of the whole length would need a block of up to order 12
 * (16 MiB), which GFP_ATOMIC cannot get once memory is fragmented (and
 * above order 10 never). Every piece but the last is a whole page, which
 * is what an FRWR maps. Nothing is mapped or posted yet: a failure is
 * -ENOMEM, and libiscsi sends the command later.
 */
static int isi_bounce(struct isi_task *it, struct scsi_cmnd *sc)
{
	int ret = isdm_bounce_alloc(&it->bounce, scsi_bufflen(sc), GFP_ATOMIC);

	if (ret)
		return ret;
	if (it->dir == DMA_TO_DEVICE)
		isdm_bounce_copy(&it->bounce, scsi_sglist(sc),
				 scsi_bufflen(sc), true);
	it->sgl = it->bounce.sgl;
	it->sg_count = it->bounce.orig_nents;
	return 0;
}

/**
 * isi_reg_data() - map and register the SCSI buffer; fill the STags to
 *	advertise
 * @ic: the connection
 * @task: a SCSI task with data
 * @st: the STags of the iSER header
 * @first: set to the first work request to post: @reg, or @inv before it
 * @reg: filled with the REG_MR
 * @inv: filled with a LOCAL_INV of the MR's previous registration, if that
 *	is still valid
 *
 * Return: 0; or -ENOMEM, -EAGAIN (no free MR) or -EINVAL, with nothing
 * left mapped.
 */
int isi_reg_data(struct isi_conn *ic, struct iscsi_task *task,
		 struct isdm_stags *st, struct ib_send_wr **first,
		 struct ib_reg_wr *reg, struct ib_send_wr *inv)
{
	struct isi_task *it = task->dd_data;
	struct scsi_cmnd *sc = task->sc;
	struct ib_device *ib_dev = ic->base.dev->ib_dev;
	bool write = sc->sc_data_direction == DMA_TO_DEVICE;
	u32 edtl = scsi_transfer_length(sc);
	struct ib_mr *mr;
	int n, ret;

	it->dir = write ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
	it->sgl = scsi_sglist(sc);
	it->sg_count = scsi_sg_count(sc);
	if (isi_pi_cmd(sc)) {
		/* the wire layout, tuples included, in pages of its own */
		ret = isi_pi_bounce(it, sc);
		if (ret)
			return ret;
	} else if (ic->base.mode.zbva && (it->sgl->offset & (SZ_4K - 1))) {
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

/**
 * isi_reg_undo() - nothing was posted: the MR keeps its previous key and
 *	state
 * @it: the task's data, after isi_reg_data()
 */
void isi_reg_undo(struct isi_task *it)
{
	if (!it->fr)
		return;
	ib_update_fast_reg_key(it->fr->mr, it->prev_key);
	it->fr->valid = it->prev_valid;
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
		isdm_bounce_free(&it->bounce);
	}
	spin_unlock_bh(&session->back_lock);
}
