// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: the receive path into libiscsi. The login and full-feature
 * receive buffers with the shared spill buffer; the checks of every PDU
 * received (its framing, the task its ITT names, remote invalidation); the
 * local invalidation after a SCSI Response that left its MR valid.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/mm.h>
#include <rdma/ib_verbs.h>
#include <scsi/iscsi_proto.h>
#include <scsi/scsi_host.h>

#include "isi.h"

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

	isdm_credits_give(&ic->sq, 1);
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
	struct iscsi_scsi_rsp *rsp = (struct iscsi_scsi_rsp *)hdr;
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
	it->rsp_good = rsp->response == ISCSI_STATUS_CMD_COMPLETED &&
		       rsp->cmd_status == SAM_STAT_GOOD;
	it->rsp_resid = rsp->flags & (ISCSI_FLAG_CMD_UNDERFLOW |
				      ISCSI_FLAG_CMD_OVERFLOW);
	if (!it->fr || !it->fr->valid || !it->inv_slot)
		return 0;
	if (!iscsi_get_task(task)) {
		pr_err_ratelimited("SCSI Response for ITT 0x%x of a task being freed refused\n",
				   be32_to_cpu((__force __be32)hdr->itt));
		return -EIO;
	}
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
	struct isdm_rx_spec spec = {
		.peer		= &ic->dst,
		.role		= ISDM_ROLE_INITIATOR,
		.phase		= login ? ISDM_PHASE_LOGIN : ISDM_PHASE_FFP,
		.max_data	= login ? ISI_LOGIN_DATA_MAX : ic->rx_data_max,
	};
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
	/* iscsid tears a failed connection down; nothing behind it is read */
	if (!conn || !isdm_rx_begin(&ic->base, d))
		return;
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
	ret = isdm_rx_check(&ic->base, buf, len, &spec, &pdu);
	if (ret) {
		isi_fail(ic, ret == -E2BIG ? ISCSI_ERR_DATALEN :
			 ret == -ENOMSG ? ISCSI_ERR_AHSLEN : ISCSI_ERR_PROTO);
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

/*
 * The spill buffer's pages belong to the session (its host): allocated by
 * the first connection start that needs them, at login, and lent to every
 * later connection of the session, so that recovering it after a link flap
 * or a target reset allocates no block of order 7 (256 KiB of data and the
 * headers) on a machine whose memory is fragmented by then. A connection
 * maps them for its device and gives them back once its QP is drained
 * (isi_rx_spill_return(): stop_conn, device removal). Only a connection
 * that finds them still lent to an earlier one, or too small for what it
 * negotiated, allocates. alloc_pages_exact() rounds @size up to whole pages
 * only, where kmalloc() would round 256 KiB and 76 bytes up to 512 KiB.
 */
static int isi_rx_spill_get(struct isi_conn *ic, struct isi_host *ih,
			    u32 size)
{
	struct ib_device *ib_dev = ic->base.dev->ib_dev;
	u32 bytes = PAGE_ALIGN(size);
	void *buf = NULL;

	mutex_lock(&ih->lock);
	if (!ih->spill_lent) {
		if (ih->spill && ih->spill_bytes < bytes) {
			free_pages_exact(ih->spill, ih->spill_bytes);
			ih->spill = NULL;
		}
		if (!ih->spill) {
			ih->spill = alloc_pages_exact(bytes, GFP_KERNEL);
			ih->spill_bytes = ih->spill ? bytes : 0;
		}
		if (ih->spill) {
			buf = ih->spill;
			bytes = ih->spill_bytes;
			ih->spill_lent = true;
			ic->spill_host = ih;
		}
	}
	mutex_unlock(&ih->lock);
	if (!buf) {
		buf = alloc_pages_exact(bytes, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
	ic->spill = buf;
	ic->spill_bytes = bytes;
	ic->spill_size = size;
	ic->spill_dma = ib_dma_map_single(ib_dev, buf, size, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ib_dev, ic->spill_dma)) {
		ic->spill_dma = 0;
		isi_rx_spill_return(ic);
		return -ENOMEM;
	}
	return 0;
}

/**
 * isi_rx_spill_return() - unmap the spill buffer; give its pages back to
 *	the session, or free them if they are the connection's own
 * @ic: the connection, drained; its session (if the pages are the
 *	session's) still exists: the connection is still bound
 *
 * Safe when the connection has no spill buffer.
 */
void isi_rx_spill_return(struct isi_conn *ic)
{
	struct isi_host *ih = ic->spill_host;

	if (!ic->spill)
		return;
	if (ic->spill_dma)
		ib_dma_unmap_single(ic->base.dev->ib_dev, ic->spill_dma,
				    ic->spill_size, DMA_FROM_DEVICE);
	ic->spill_dma = 0;
	if (ih) {
		mutex_lock(&ih->lock);
		ih->spill_lent = false;
		mutex_unlock(&ih->lock);
		ic->spill_host = NULL;
	} else {
		free_pages_exact(ic->spill, ic->spill_bytes);
	}
	ic->spill = NULL;
}

/**
 * isi_rx_spill_free() - free the session's spill buffer pages
 * @ih: the host of a session being destroyed; no connection of it has
 *	them any more (stop_conn gave them back)
 */
void isi_rx_spill_free(struct isi_host *ih)
{
	if (ih->spill && !ih->spill_lent)
		free_pages_exact(ih->spill, ih->spill_bytes);
	ih->spill = NULL;
}

/**
 * isi_rx_ffp_post() - allocate and post the full-feature receive buffers
 * @ic: the connection
 * @ih: its session's host, which keeps the spill buffer's pages
 * @nr: buffers wanted
 * @data_max: data segment bytes a message may carry
 *	(InitiatorRecvDataSegmentLength)
 *
 * @nr buffers of %ISI_RX_SMALL bytes (packed in pages by the core), which
 * hold every message but a large Text Response (or a NOP-In or asynchronous
 * message with more than a few hundred bytes of data), and one spill buffer
 * for the rest of such a message, shared by all (isi_rx_spill_get()): see
 * Documentation/initiator.md, "Receive buffers", for why one is enough.
 *
 * Return: 0, -ENOMEM or the error of ib_post_recv().
 */
int isi_rx_ffp_post(struct isi_conn *ic, struct isi_host *ih, u32 nr,
		    u32 data_max)
{
	u32 size = ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + data_max;
	u32 i;
	int ret;

	ret = isi_rx_spill_get(ic, ih, size);
	if (ret)
		return ret;
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
 * @ic: the connection; its QP must be destroyed
 */
void isi_rx_destroy(struct isi_conn *ic)
{
	isdm_rx_ring_free(ic->base.dev, &ic->rx_ring);
	ic->rx = NULL;
	ic->nr_rx = 0;
	isi_rx_spill_return(ic);
	isdm_login_buf_free(ic->base.dev, &ic->login);
}
