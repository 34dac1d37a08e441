// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: response Sends. A response goes out as a Send built in the
 * command's ring slot (behind the RDMA Writes of its Data-In for a READ,
 * rdma.c); Sends are posted in order on the connection's send list, most
 * SCSI Responses unsignaled, and their completions give the commands back
 * to LIO, or run LIO's post handlers of a control response.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <target/iscsi/iscsi_target_core.h>

#include "ist.h"

static void ist_send_done(struct ib_cq *cq, struct ib_wc *wc);

/* an unsolicited NOP-In with a TTT: kept until the NOP-Out answers it */
static bool ist_nopin_wants_answer(const struct iscsit_cmd *cmd)
{
	return cmd->iscsi_opcode == ISCSI_OP_NOOP_IN &&
	       cmd->targ_xfer_tag != 0xFFFFFFFF;
}

/**
 * ist_unmap_pdu() - unmap a data segment ist_build_send() mapped
 * @icmd: the command; nothing happens when nothing is mapped
 */
void ist_unmap_pdu(struct ist_cmd *icmd)
{
	struct ist_conn *ic = icmd->conn;

	if (icmd->pdu_dma) {
		ib_dma_unmap_single(ic->base.dev->ib_dev, icmd->pdu_dma,
				    icmd->pdu_len, DMA_TO_DEVICE);
		icmd->pdu_dma = 0;
	}
}

/**
 * ist_send_bhs() - where the BHS of a command's response goes
 * @icmd: the command
 *
 * A response built here, in the command's ring slot, is not copied again
 * by ist_build_send(). LIO's builders of a SCSI Response zero the BHS
 * first (iscsit_build_rsp_pdu()).
 *
 * Return: the BHS in @icmd's ring slot, or NULL when it has none.
 */
void *ist_send_bhs(struct ist_cmd *icmd)
{
	if (!icmd->tx.premapped) {
		pr_err_ratelimited("connection from %pISpc: no Send buffer for command tag %u\n",
				   &icmd->conn->src,
				   icmd->cmd->se_cmd.map_tag);
		return NULL;
	}
	return isdm_tx_bhs(&icmd->tx);
}

/**
 * ist_build_send() - build the Send of a response in the command's ring slot
 * @icmd: the command
 * @bhs: the response's BHS (48 bytes, built by LIO), or ist_send_bhs()
 * @adv: the command's STags, or NULL
 * @data: an optional data segment, or NULL
 * @len: its length
 *
 * Build the Send of a response in the command's ring slot: @bhs (48
 * bytes, built by LIO, copied unless built in place) plus an optional
 * data segment at @data, copied into the slot when it fits (sense data,
 * always: it lives in LIO's per-command area, which must not be
 * DMA-mapped), else mapped where it is (a kmalloc'ed ping or Text
 * payload). @adv is the command's STags for
 * the Send-with-Invalidate rule (SCSI Response only).
 *
 * Return: 0 or an error.
 */
int ist_build_send(struct ist_cmd *icmd, const void *bhs,
		   const struct isdm_stags *adv, void *data, u32 len)
{
	struct ist_conn *ic = icmd->conn;
	struct ib_device *ib_dev = ic->base.dev->ib_dev;
	u32 inline_len = len <= IST_TX_INLINE ? len : 0;
	void *slot_bhs = ist_send_bhs(icmd);
	int ret;

	if (!slot_bhs)
		return -EIO;
	/* ist_queue_status() put the sense data in place already */
	if (inline_len && data != icmd->tx.hdr + ISDM_TX_HDR_MAX)
		memcpy(icmd->tx.hdr + ISDM_TX_HDR_MAX, data, inline_len);
	if (bhs != slot_bhs)
		memcpy(slot_bhs, bhs, ISDM_BHS_LEN);
	icmd->tx.num_sge = 1;
	ret = isdm_tx_build(&ic->base, &icmd->tx, adv, NULL, inline_len,
			    ist_send_done);
	if (ret || inline_len || !len)
		return ret;
	icmd->pdu_dma = ib_dma_map_single(ib_dev, data, len, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ib_dev, icmd->pdu_dma)) {
		icmd->pdu_dma = 0;
		return -ENOMEM;
	}
	icmd->pdu_len = len;
	icmd->tx.sge[1].addr = icmd->pdu_dma;
	icmd->tx.sge[1].length = len;
	icmd->tx.sge[1].lkey = ic->base.dev->pd->local_dma_lkey;
	icmd->tx.num_sge = 2;
	return 0;
}

/*
 * Posting and completing response Sends.
 *
 * A send queue completes its work requests in order, so the completion of
 * one Send says that every Send posted before it has gone out too. Every
 * response Send (alone, or behind the RDMA Writes of its Data-In) is
 * therefore posted under @ic->send_lock and listed on @ic->send_list in
 * the order posted. A SCSI Response whose command holds nothing of the
 * send queue's but its ring slot (no RDMA work requests: a WRITE, or a
 * command without data) is posted unsignaled, except every
 * signal_every-th in a row: that saves a completion, and with it a run of
 * the CQ's work item, on most commands. The unsignaled command keeps its LIO
 * tag, and with it the ring slot its Send reads, until a later Send of the
 * connection completes (ist_send_reap()); so at most signal_every - 1
 * commands wait like this on a connection, well within LIO's tag pool
 * (twice the session's queue depth plus 8, at least 40). It leaves LIO's
 * command list of the connection at once: the initiator may use its ITT
 * again as soon as the response arrives, and a Data-Out or a task
 * management function for the new command must not find the old one. LIO
 * itself is done with the command: it dropped the LUN's reference when
 * the status was queued, and no abort or LUN reset waits for a command
 * that completed (CMD_T_COMPLETE).
 *
 * A unsignaled Send that fails still completes, with its error: a work request
 * flushed from a queue pair in error always does. One that went out with
 * no later Send behind it completes at the teardown: ist_wait_conn() makes
 * every later Send signaled (ist_sends_quiesce()), drains the queue pair
 * and then completes what is still listed (ist_sends_reap_unsignaled()).
 *
 * Never unsignaled: Data-In, whose RDMA Writes hold send queue room
 * (@ic->rdma) that a waiting command may need, with perhaps no
 * later Send to give it back; and every control response, whose
 * completion runs LIO's post handlers.
 */
#define IST_SIGNAL_EVERY_MAX	16

static int ist_signal_every_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, IST_SIGNAL_EVERY_MAX);
}

static const struct kernel_param_ops ist_signal_every_ops = {
	.set = ist_signal_every_set,
	.get = param_get_uint,
};

static unsigned int signal_every = IST_SIGNAL_EVERY_MAX;
module_param_cb(signal_every, &ist_signal_every_ops, &signal_every, 0644);
MODULE_PARM_DESC(signal_every,
		 "Signal one SCSI Response Send in this many, 1 to 16; 1 signals every Send (default 16)");

static void ist_relink_cmd(struct iscsit_conn *conn, struct iscsit_cmd *cmd)
{
	spin_lock_bh(&conn->cmd_lock);
	if (list_empty(&cmd->i_conn_node))
		list_add_tail(&cmd->i_conn_node, &conn->conn_cmd_list);
	spin_unlock_bh(&conn->cmd_lock);
}

/**
 * ist_post_send() - post a command's response Send
 * @icmd: the command
 * @data_in: behind the RDMA Writes of its Data-In
 *
 * Post @icmd's Send, prepared by ist_build_send(): alone, or with @data_in
 * behind the RDMA Writes of its rdma_rw context. Returns 0, the error of
 * the post, or -EIO for a command whose Send is still posted.
 *
 * A software RDMA device may do the work of a post in a softirq it raises
 * from ib_post_send() (soft-RoCE on Linux 6.1 does; on 6.12 it queues a
 * work item). Posted with bottom halves disabled, that work runs at once,
 * when they are enabled again: the response leaves without waiting for
 * ksoftirqd, which is what a lone command wants: a SCSI Response, or
 * Data-In while no other command of the connection waits for its
 * response and no other Data-In is in flight. Any other Data-In is
 * posted with bottom halves enabled, so that the device's work, and then
 * the completions on both sides, gather several commands at a time, as
 * they do when the connection is busy with READs. A hardware device only
 * rings a doorbell either way. Every caller runs in process context, so
 * @send_lock is taken without disabling bottom halves.
 */
int ist_post_send(struct ist_cmd *icmd, bool data_in)
{
	struct ist_conn *ic = icmd->conn;
	struct iscsit_cmd *cmd = icmd->cmd;
	bool unsignaled = false, now, answered;
	int ret;

	spin_lock(&ic->send_lock);
	if (icmd->send_listed) {
		spin_unlock(&ic->send_lock);
		pr_err_ratelimited("connection from %pISpc: ITT 0x%08x: a second response while the first is being sent\n",
				   &ic->src,
				   be32_to_cpu((__force __be32)cmd->init_task_tag));
		return -EIO;
	}
	if (!data_in && cmd->iscsi_opcode == ISCSI_OP_SCSI_CMD &&
	    !icmd->rdma_held && !ic->sends_quiesced &&
	    ++ic->unsignaled_run < READ_ONCE(signal_every)) {
		unsignaled = true;
		icmd->tx.wr.send_flags &= ~IB_SEND_SIGNALED;
		ist_unlink_cmd(ic->conn, cmd);
	} else {
		ic->unsignaled_run = 0;
	}
	icmd->send_unsignaled = unsignaled;
	icmd->send_listed = true;
	icmd->send_data_in = data_in;
	list_add_tail(&icmd->send_entry, &ic->send_list);
	now = !data_in || (!ic->data_in_listed &&
			   atomic_read(&ic->scsi_waiting) <= 1);
	ic->data_in_listed += data_in;
	answered = ist_scsi_answered(icmd);
	if (now)
		local_bh_disable();
	if (data_in)
		ret = rdma_rw_ctx_post(&icmd->rw, ic->base.q.qp,
				       ic->base.cm_id->port_num, NULL,
				       &icmd->tx.wr);
	else
		ret = isdm_tx_post(&ic->base, &icmd->tx, NULL);
	if (ret) {
		list_del(&icmd->send_entry);
		icmd->send_listed = false;
		icmd->send_unsignaled = false;
		ic->data_in_listed -= data_in;
		if (answered)
			ist_scsi_wait(icmd);
		if (unsignaled) {
			ic->unsignaled_run--;
			ist_relink_cmd(ic->conn, cmd);
		}
	} else if (unsignaled) {
		atomic_long_inc(&ic->unsignaled_sends);
	}
	spin_unlock(&ic->send_lock);
	if (now)
		local_bh_enable();
	return ret;
}

static void ist_send_complete(struct ist_cmd *icmd, const struct ib_wc *wc);

/*
 * Complete the unsignaled Sends listed ahead of @upto, whose completion is
 * running: they went out before it. With @upto NULL (the teardown, after
 * the drain), every unsignaled Send still listed. A signaled Send is never
 * completed here: its own completion comes, and so does an unsignaled one's
 * that failed, before that of any Send posted after it.
 */
static void ist_send_reap(struct ist_conn *ic, struct ist_cmd *upto)
{
	struct ist_cmd *icmd, *next;
	LIST_HEAD(done);

	spin_lock(&ic->send_lock);
	if (upto && !upto->send_listed) {
		spin_unlock(&ic->send_lock);
		return;
	}
	list_for_each_entry_safe(icmd, next, &ic->send_list, send_entry) {
		if (icmd == upto) {
			list_del(&icmd->send_entry);
			icmd->send_listed = false;
			ic->data_in_listed -= icmd->send_data_in;
			break;
		}
		if (icmd->send_unsignaled) {
			list_move_tail(&icmd->send_entry, &done);
			icmd->send_listed = false;
		}
	}
	spin_unlock(&ic->send_lock);

	list_for_each_entry_safe(icmd, next, &done, send_entry) {
		list_del(&icmd->send_entry);
		ist_send_complete(icmd, NULL);
	}
}

/**
 * ist_sends_quiesce() - post every later Send of @ic signaled
 * @ic: the connection, closing
 *
 * Called before the drain that ist_sends_reap_unsignaled() follows.
 */
void ist_sends_quiesce(struct ist_conn *ic)
{
	spin_lock(&ic->send_lock);
	ic->sends_quiesced = true;
	spin_unlock(&ic->send_lock);
}

/**
 * ist_sends_unsignaled_held() - how many commands of unsignaled Sends wait for a
 *	later completion
 * @ic: the connection
 *
 * For the debugfs view. Context: any; does not sleep.
 * Return: the count.
 */
u32 ist_sends_unsignaled_held(struct ist_conn *ic)
{
	struct ist_cmd *icmd;
	u32 n = 0;

	spin_lock(&ic->send_lock);
	list_for_each_entry(icmd, &ic->send_list, send_entry)
		n += icmd->send_unsignaled;
	spin_unlock(&ic->send_lock);
	return n;
}

/**
 * ist_sends_reap_unsignaled() - complete the commands of unsignaled Sends that went
 *	out with no later completion
 * @ic: the connection, quiesced and drained
 *
 * Context: process context.
 */
void ist_sends_reap_unsignaled(struct ist_conn *ic)
{
	ist_send_reap(ic, NULL);
}

/**
 * ist_send() - build and post a response Send
 * @icmd: the command
 * @bhs: the response's BHS
 * @adv: the command's STags, or NULL (see ist_build_send())
 * @data: an optional data segment, or NULL
 * @len: its length
 *
 * Return: 0, -EAGAIN when the send queue is full (LIO's queue-full work
 * tries again), or another error.
 */
int ist_send(struct ist_cmd *icmd, const void *bhs,
	     const struct isdm_stags *adv, void *data, u32 len)
{
	int ret = ist_build_send(icmd, bhs, adv, data, len);

	if (ret)
		return ret;
	ret = ist_post_send(icmd, false);
	if (ret) {
		ist_unmap_pdu(icmd);
		/* a full send queue is backpressure: LIO retries */
		return ret == -ENOMEM ? -EAGAIN : ret;
	}
	return 0;
}

static void ist_control_comp(struct work_struct *work)
{
	struct ist_cmd *icmd = container_of(work, struct ist_cmd, comp_work);
	struct ist_conn *ic = icmd->conn;
	struct iscsit_cmd *cmd = icmd->cmd;
	bool counted = cmd->i_state != ISTATE_SEND_LOGOUTRSP;

	switch (cmd->i_state) {
	case ISTATE_SEND_TASKMGTRSP:
		iscsit_tmr_post_handler(cmd, cmd->conn);
		fallthrough;
	case ISTATE_SEND_REJECT:
	case ISTATE_SEND_TEXTRSP:
		ist_put_cmd(icmd, false);
		break;
	case ISTATE_SEND_LOGOUTRSP:
		iscsit_logout_post_handler(cmd, cmd->conn);
		break;
	default:
		break;
	}
	/* paired with ist_send_done(); ist_wait_conn() waits for zero */
	if (counted && atomic_dec_and_test(&ic->ctrl_cnt))
		wake_up_var(&ic->ctrl_cnt);
}

/*
 * The Send of @icmd completed: with its completion @wc, or, @wc NULL, a
 * unsignaled Send that a later completion or the teardown showed to have gone
 * out (ist_send_reap()).
 */
static void ist_send_complete(struct ist_cmd *icmd, const struct ib_wc *wc)
{
	struct ist_conn *ic = icmd->conn;
	struct iscsit_cmd *cmd = icmd->cmd;

	ist_unmap_pdu(icmd);
	/* the RDMA Writes of Data-In went before this Send */
	ist_rdma_unreserve(icmd);
	if (wc && wc->status != IB_WC_SUCCESS) {
		ist_wc_failed(ic, wc, "send");
		/* a stashed continuation's buffer goes with the ring */
		icmd->text_cont = NULL;
		/*
		 * A Logout Response that never went out (the initiator
		 * closed the connection right after its Logout): LIO's
		 * logout post handler will not run, so nothing else
		 * completes what ist_wait_conn() waits on for the response;
		 * without this, the close waited SECONDS_FOR_LOGOUT_COMP
		 * (15 s) with the connection IN_LOGOUT.
		 */
		if (cmd->i_state == ISTATE_SEND_LOGOUTRSP)
			complete(&cmd->conn->conn_logout_comp);
		ist_put_cmd(icmd, true);
		return;
	}

	/*
	 * A Text Response with the C bit: settled here, not in the work
	 * below, so that the continuation, received after this completion
	 * on the same CQ, finds the command ready (ist_text_settled()).
	 */
	if (cmd->i_state == ISTATE_SEND_TEXTRSP && ist_text_continues(icmd)) {
		struct isdm_rx_desc *rx = icmd->text_cont;

		ist_put_cmd(icmd, false);
		/* a continuation that came before this completion */
		if (rx) {
			icmd->text_cont = NULL;
			ist_rx_process(ic, rx, icmd->text_cont_len);
		}
		return;
	}

	switch (cmd->i_state) {
	case ISTATE_SEND_TASKMGTRSP:
	case ISTATE_SEND_LOGOUTRSP:
	case ISTATE_SEND_REJECT:
	case ISTATE_SEND_TEXTRSP:
		if (cmd->i_state != ISTATE_SEND_LOGOUTRSP)
			atomic_inc(&ic->ctrl_cnt);
		INIT_WORK(&icmd->comp_work, ist_control_comp);
		queue_work(ist_comp_wq, &icmd->comp_work);
		break;
	default:
		if (ist_nopin_wants_answer(cmd)) {
			/* LIO finds it by its TTT and removes it (ISTATE_REMOVE) */
			spin_lock_bh(&cmd->istate_lock);
			cmd->i_state = ISTATE_SENT_NOPIN_WANT_RESPONSE;
			spin_unlock_bh(&cmd->istate_lock);
			break;
		}
		ist_put_cmd(icmd, false);
		break;
	}
}

static void ist_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ist_cmd *icmd = ist_cmd_of(wc->wr_cqe);

	ist_send_reap(icmd->conn, icmd);
	ist_send_complete(icmd, wc);
}
