// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: Sends. The transport's xmit_task, init_task, cleanup_task and
 * alloc_pdu: control-type PDUs (login, text, NOP-Out, TMF, logout), the
 * SCSI Command with the registration of its buffer or with its immediate
 * data from its pages, unsolicited Data-Outs, and their completions.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <scsi/iscsi_proto.h>
#include <scsi/scsi_cmnd.h>

#include "isi.h"

static struct kmem_cache *isi_tx_cache;

static void isi_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct isi_tx *tx = container_of(wc->wr_cqe, struct isi_tx, send.cqe);
	struct isi_conn *ic = isi_qp_conn(wc);
	struct iscsi_task *task = tx->task;
	bool put_task = tx->put_task;

	isdm_credits_give(&ic->sq, tx->nr_wr);
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
		       const struct isdm_stags *st, u32 ahs_len)
{
	return isdm_tx_build(&ic->base, &tx->send, NULL, st, ahs_len,
			     isi_send_done);
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
	if (!isdm_credits_take(&ic->sq, 1))
		return -EAGAIN;
	tx->nr_wr = 1;
	tx->task = task;
	tx->dataout = false;
	tx->put_task = task->hdr->itt == RESERVED_ITT;
	ret = isi_tx_prep(ic, tx, NULL, 0);
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
	isdm_credits_give(&ic->sq, 1);
	return ret;
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

/* Unmap and free a chain of built Data-Outs that were never posted. */
static void isi_dataouts_free(struct isi_conn *ic, struct isi_tx *tx)
{
	while (tx) {
		struct isi_tx *next = tx->next;

		isdm_tx_unmap(ic->base.dev, &tx->send);
		kmem_cache_free(isi_tx_cache, tx);
		tx = next;
	}
}

/*
 * Build every unsolicited Data-Out of @task, whose MR is registered, into a
 * chain at @list: the BHS from libiscsi, the data from the MR, the headers
 * mapped. Nothing is posted.
 */
static int isi_dataouts_build(struct isi_conn *ic, struct iscsi_task *task,
			      struct isi_tx **list)
{
	struct isi_task *it = task->dd_data;
	struct iscsi_r2t_info *r2t = &task->unsol_r2t;
	u32 sent = r2t->sent, datasn = r2t->datasn;
	struct isi_tx **tail = list;
	struct iscsi_data *hdr;
	struct isi_tx *tx;
	u32 off, len;
	int ret;

	*list = NULL;
	while (iscsi_task_has_unsol_data(task)) {
		tx = kmem_cache_zalloc(isi_tx_cache, GFP_ATOMIC);
		if (!tx) {
			ret = -ENOMEM;
			goto free;
		}
		tx->send.hdr = tx->hdr;
		hdr = isdm_tx_bhs(&tx->send);
		iscsi_prep_data_out_pdu(task, r2t, hdr);
		off = be32_to_cpu(hdr->offset);
		len = ntoh24(hdr->dlength);
		if (!len || off + len > scsi_transfer_length(task->sc)) {
			ret = -EINVAL;
			goto free_tx;
		}
		tx->send.sge[1].addr = it->fr->mr->iova + off;
		tx->send.sge[1].length = len;
		tx->send.sge[1].lkey = it->fr->mr->lkey;
		tx->send.num_sge = 2;
		tx->nr_wr = 1;
		tx->task = task;
		tx->dataout = true;
		ret = isi_tx_prep(ic, tx, NULL, 0);
		if (ret)
			goto free_tx;
		*tail = tx;
		tail = &tx->next;
		r2t->sent += r2t->data_count;
	}
	return 0;
free_tx:
	kmem_cache_free(isi_tx_cache, tx);
free:
	isi_dataouts_free(ic, *list);
	*list = NULL;
	r2t->sent = sent;
	r2t->datasn = datasn;
	return ret;
}

/*
 * The unsolicited Data-Outs @task's SCSI Command announces, one per
 * MaxXmitDataSegmentLength (TargetRecvDataSegmentLength) of its first
 * burst, as iscsi_prep_data_out_pdu() cuts them. A command that would need
 * more than the send queue keeps for Data-Outs (%ISI_DATAOUT_MAX) sends
 * none: its F bit set, the target fetches all data beyond the immediate
 * data by RDMA Read (the F bit ends the unsolicited data, RFC 7143
 * 11.3.1; unsolicited Data-Outs are optional, RFC 5046 1.6).
 *
 * Only a WRITE has any. libiscsi sets @task->unsol_r2t up for a WRITE and
 * leaves it alone for any other command, which finds there what the
 * task's previous WRITE left: all of it unsent when that WRITE was handed
 * back to libiscsi before its Send (a full send queue, for one). It is
 * cleared here.
 *
 * Return: the number of Data-Outs, or -EINVAL.
 */
static int isi_dataouts_count(struct iscsi_task *task)
{
	struct iscsi_r2t_info *r2t = &task->unsol_r2t;
	u32 seg = task->conn->max_xmit_dlength;
	u32 n;

	if (task->sc->sc_data_direction != DMA_TO_DEVICE) {
		memset(r2t, 0, sizeof(*r2t));
		return 0;
	}
	if (!iscsi_task_has_unsol_data(task))
		return 0;
	if (!seg || task->imm_count + r2t->data_length >
		    scsi_transfer_length(task->sc))
		return -EINVAL;
	n = DIV_ROUND_UP(r2t->data_length - r2t->sent, seg);
	if (n <= ISI_DATAOUT_MAX)
		return n;
	r2t->data_length = 0;
	r2t->sent = 0;
	task->hdr->flags |= ISCSI_FLAG_CMD_FINAL;
	return 0;
}

/*
 * A SCSI Command with an AHS (a 32-byte CDB) carries no immediate data and
 * announces no unsolicited Data-Outs: the target fetches all of a WRITE's
 * data by RDMA Read. A target sizes its receive buffers for the headers
 * and MaxRecvDataSegmentLength bytes of data (the in-tree target with no
 * room for an AHS at all), so headers, AHS and a full immediate data
 * segment may not fit; immediate and unsolicited data are the
 * initiator's choice (RFC 7143 13.10, 13.11), and the F bit says that
 * none follows (11.3.1).
 *
 * Return: the AHS length, or -EINVAL for more than this host allows.
 */
static int isi_ahs_unsol_off(struct iscsi_task *task)
{
	struct iscsi_scsi_req *hdr = (struct iscsi_scsi_req *)task->hdr;
	u32 ahs_len = task->hdr_len - ISDM_BHS_LEN;

	if (task->hdr_len < ISDM_BHS_LEN || ahs_len > ISI_AHS_MAX ||
	    ahs_len != hdr->hlength * 4u)
		return -EINVAL;
	if (ahs_len && task->sc->sc_data_direction == DMA_TO_DEVICE) {
		task->imm_count = 0;
		hton24(hdr->dlength, 0);
		memset(&task->unsol_r2t, 0, sizeof(task->unsol_r2t));
		hdr->flags |= ISCSI_FLAG_CMD_FINAL;
	}
	return ahs_len;
}

/*
 * Post the SCSI Command of @task. Its CmdSN is spent once the Send is
 * posted: libiscsi hands it to the next command only when this returns an
 * error, and sending the same CmdSN twice makes the target drop the second
 * command and wait for the first one's data. So everything that can fail
 * for the unsolicited Data-Outs happens before: their send queue slots are
 * reserved together with the command's and their Sends built into @douts,
 * for isi_dataouts_post() to post right behind it.
 */
static int isi_send_command(struct isi_conn *ic, struct iscsi_task *task,
			    struct isi_tx **douts)
{
	struct isi_task *it = task->dd_data;
	struct scsi_cmnd *sc = task->sc;
	struct isi_tx *tx = &it->tx;
	struct isdm_stags st = {};
	struct ib_send_wr inv, *first = NULL;
	struct ib_reg_wr reg;
	int nr_wr = 1, nr_dout, ahs_len, ret;

	*douts = NULL;
	tx->send.num_sge = 1;
	ahs_len = isi_ahs_unsol_off(task);
	if (ahs_len < 0)
		return ahs_len;
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
	nr_dout = isi_dataouts_count(task);
	if (nr_dout < 0)
		return nr_dout;
	if (!isdm_credits_take(&ic->sq, nr_wr + nr_dout))
		return -EAGAIN;
	if (scsi_bufflen(sc) && isi_map_imm(ic, task, tx)) {
		/* no LOCAL_INV and REG_MR in front of the Send */
		isdm_credits_give(&ic->sq, nr_wr - 1);
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
		if (nr_dout) {
			ret = isi_dataouts_build(ic, task, douts);
			if (ret)
				goto unmap;
		}
	}
	tx->nr_wr = nr_wr;
	tx->task = task;
	tx->dataout = false;
	tx->put_task = false;
	ret = isi_tx_prep(ic, tx, &st, ahs_len);
	if (ret)
		goto free_douts;
	ret = isi_tx_post(ic, tx, first);
	if (ret)
		goto free_douts;
	return 0;
free_douts:
	isi_dataouts_free(ic, *douts);
	*douts = NULL;
unmap:
	isi_reg_undo(it);
	isi_unmap_data(ic, it, sc);
unreserve:
	isdm_credits_give(&ic->sq, nr_wr + nr_dout);
	return ret;
}

/*
 * Post the Data-Outs isi_send_command() built, each in a send queue slot
 * it reserved. A failure here is the QP's: the slots and descriptors left
 * go back, and the connection fails with the Sends the QP flushes.
 */
static void isi_dataouts_post(struct isi_conn *ic, struct isi_tx *tx)
{
	struct isi_tx *next;
	int ret;

	for (; tx; tx = next) {
		next = tx->next;
		ret = isi_tx_post(ic, tx, NULL);
		if (ret)
			break;
	}
	if (!tx)
		return;
	pr_err_ratelimited("Data-Out of task 0x%x not posted: %d\n",
			   tx->task->itt, ret);
	kmem_cache_free(isi_tx_cache, tx);
	for (tx = next; tx; tx = tx->next)
		isdm_credits_give(&ic->sq, 1);
	isdm_credits_give(&ic->sq, 1);
	isi_dataouts_free(ic, next);
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
	struct isi_tx *douts;
	int ret;

	if (!ic || READ_ONCE(ic->state) != ISI_UP)
		return -ENOTCONN;
	if (!task->sc)
		return isi_send_control(ic, task);

	if (it->cmd_sent)
		return 0;
	ret = isi_send_command(ic, task, &douts);
	if (ret)
		goto out;
	it->cmd_sent = true;
	isi_dataouts_post(ic, douts);
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
		it->bounce.sgl = NULL;
		it->cmd_sent = false;
		it->rsv = false;
		it->wsv = false;
		it->rsp_seen = false;
		it->inv_slot = false;
		it->pi = false;
		it->pi_split = false;
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
		isdm_bounce_free(&it->bounce);
		return;
	}
	isi_unmap_data(ic, it, task->sc);
}

/**
 * isi_alloc_pdu() - the transport's alloc_pdu: the BHS (and the AHS of a
 *	32-byte CDB) lives in the Send
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
	task->hdr_max = ISDM_BHS_LEN + ISI_AHS_MAX;
	return 0;
}

/**
 * isi_tx_init() - create the Data-Out descriptor cache
 *
 * Return: 0 or -ENOMEM.
 */
int isi_tx_init(void)
{
	isi_tx_cache = kmem_cache_create("isi_tx", sizeof(struct isi_tx), 0,
					 SLAB_HWCACHE_ALIGN, NULL);
	return isi_tx_cache ? 0 : -ENOMEM;
}

/**
 * isi_tx_exit() - destroy the Data-Out descriptor cache
 */
void isi_tx_exit(void)
{
	kmem_cache_destroy(isi_tx_cache);
}
