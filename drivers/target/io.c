// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: full feature phase. Received PDUs are validated by the wire
 * layer and handed to LIO; their receive buffer is reposted at once,
 * except that of a WRITE whose data all came as immediate data: LIO uses
 * that data in place, and the buffer is reposted when the status goes out.
 * Responses go out as Sends, read data as RDMA Writes chained in front of
 * the SCSI Response, write data is pulled with RDMA Reads, both through
 * rdma_rw.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <target/iscsi/iscsi_target_core.h>
#include <target/target_core_backend.h>
#include <target/target_core_fabric.h>

#include "isdm/compat.h"
#include "ist.h"

static void ist_send_done(struct ib_cq *cq, struct ib_wc *wc);
static void ist_rx_process(struct ist_conn *ic, struct isdm_rx_desc *rx,
			   u32 len);

static struct ist_cmd *ist_cmd_of(struct ib_cqe *cqe)
{
	return container_of(cqe, struct ist_cmd, tx.cqe);
}

/*
 * Commands LIO allocates itself (NOP-In pings from its nopin timer) reach
 * the transport without our part filled in; bind them on first sight.
 */
static struct ist_cmd *ist_cmd_bind(struct iscsit_conn *conn,
				    struct iscsit_cmd *cmd)
{
	struct ist_cmd *icmd = iscsit_priv_cmd(cmd);

	if (!icmd->conn) {
		icmd->conn = conn->context;
		icmd->cmd = cmd;
		isdm_tx_ring_slot(&icmd->conn->tx_ring, &icmd->tx,
				  cmd->se_cmd.map_tag);
	}
	return icmd;
}

/* an unsolicited NOP-In with a TTT: kept until the NOP-Out answers it */
static bool ist_nopin_wants_answer(const struct iscsit_cmd *cmd)
{
	return cmd->iscsi_opcode == ISCSI_OP_NOOP_IN &&
	       cmd->targ_xfer_tag != 0xFFFFFFFF;
}

static struct iscsit_cmd *ist_alloc_cmd(struct ist_conn *ic)
{
	struct iscsit_cmd *cmd;
	struct ist_cmd *icmd;

	cmd = iscsit_allocate_cmd(ic->conn, TASK_INTERRUPTIBLE);
	if (!cmd)
		return NULL;
	icmd = iscsit_priv_cmd(cmd);
	icmd->conn = ic;
	icmd->cmd = cmd;
	isdm_tx_ring_slot(&ic->tx_ring, &icmd->tx, cmd->se_cmd.map_tag);
	return cmd;
}

static void ist_rw_destroy(struct ist_cmd *icmd)
{
	struct se_cmd *se_cmd = &icmd->cmd->se_cmd;
	struct ist_conn *ic = icmd->conn;

	/* set only by the command's owner; cleared under the lock */
	if (READ_ONCE(icmd->rdma_waiting)) {
		spin_lock_bh(&ic->rdma_wait_lock);
		if (icmd->rdma_waiting) {
			list_del_init(&icmd->wait_entry);
			icmd->rdma_waiting = false;
		}
		spin_unlock_bh(&ic->rdma_wait_lock);
	}
	if (!icmd->rw_init)
		return;
	rdma_rw_ctx_destroy(&icmd->rw, ic->base.q.qp, ic->base.cm_id->port_num,
			    se_cmd->t_data_sg, se_cmd->t_data_nents,
			    target_reverse_dma_direction(se_cmd));
	icmd->rw_init = false;
}

/*
 * rdma_rw_ctx_init() for the command's data: 0, -EAGAIN when memory is
 * short, or -EMSGSIZE (the context destroyed again) when the transfer
 * needs more work requests than the send queue can ever hold for RDMA (a
 * huge EDTL), since no post of it would ever fit.
 */
static int ist_rw_init(struct ist_cmd *icmd, u32 offset, u64 remote, u32 rkey,
		       enum dma_data_direction dir)
{
	struct se_cmd *se_cmd = &icmd->cmd->se_cmd;
	struct ist_conn *ic = icmd->conn;
	int ret;

	ret = rdma_rw_ctx_init(&icmd->rw, ic->base.q.qp,
			       ic->base.cm_id->port_num, se_cmd->t_data_sg,
			       se_cmd->t_data_nents, offset, remote, rkey, dir);
	if (ret < 0)
		return ret == -ENOMEM ? -EAGAIN : ret;
	icmd->rw_init = true;
	icmd->rdma_need = ret;
	if ((u32)ret > ic->rdma_wrs) {
		pr_warn_ratelimited("%pISpc: ITT 0x%08x: %u bytes need %d RDMA work requests, the send queue holds %u: command failed\n",
				    &ic->src, be32_to_cpu((__force __be32)icmd->cmd->init_task_tag),
				    se_cmd->data_length - offset, ret,
				    ic->rdma_wrs);
		ist_rw_destroy(icmd);
		return -EMSGSIZE;
	}
	return 0;
}

/* Take the send queue room @icmd's RDMA WRs need; false if it is not free. */
static bool ist_rdma_reserve(struct ist_cmd *icmd)
{
	struct ist_conn *ic = icmd->conn;

	if (atomic_sub_return(icmd->rdma_need, &ic->rdma_avail) < 0) {
		atomic_add(icmd->rdma_need, &ic->rdma_avail);
		return false;
	}
	icmd->rdma_held = icmd->rdma_need;
	return true;
}

/* Give it back: its last WR completed, or the post failed. */
static void ist_rdma_unreserve(struct ist_cmd *icmd)
{
	struct ist_conn *ic = icmd->conn;

	if (!icmd->rdma_held)
		return;
	atomic_add(icmd->rdma_held, &ic->rdma_avail);
	icmd->rdma_held = 0;
	if (!list_empty_careful(&ic->rdma_wait))
		mod_delayed_work(ist_wq, &ic->rdma_retry_work, 0);
}

/**
 * ist_rx_give_back() - repost the receive buffer a WRITE used in place
 * @icmd: the command; nothing happens when it holds no buffer (also one
 *	LIO allocated itself, whose @conn is not set)
 *
 * Called when the command's status is about to be sent (its data is no
 * longer read: the backend finished, or never started) and on every path
 * that ends a command without a status (an abort, a CmdSN LIO dropped, a
 * failed Send, the connection's teardown); the first call takes the
 * buffer. A failing connection gets nothing posted: its teardown drains
 * the QP and frees the ring.
 */
static void ist_rx_give_back(struct ist_cmd *icmd)
{
	struct isdm_rx_desc *rx = xchg(&icmd->rx_held, NULL);
	struct ist_conn *ic = icmd->conn;
	int ret;

	if (!rx)
		return;
	atomic_dec(&ic->rx_held);
	if (READ_ONCE(ic->failed))
		return;
	ret = isdm_rx_post(ic->base.q.qp, ic->base.dev, rx);
	if (ret)
		ist_conn_fail(ic, "cannot repost a receive buffer", ret);
}

/*
 * A SCSI command the connection received no longer waits for its
 * response: it is being sent, or the command ended without one. True when
 * this call took it off the count (once per command).
 */
static bool ist_scsi_answered(struct ist_cmd *icmd)
{
	if (!icmd->scsi_waiting)
		return false;
	icmd->scsi_waiting = false;
	atomic_dec(&icmd->conn->scsi_waiting);
	return true;
}

static void ist_unlink_cmd(struct iscsit_conn *conn, struct iscsit_cmd *cmd)
{
	spin_lock_bh(&conn->cmd_lock);
	if (!list_empty(&cmd->i_conn_node))
		list_del_init(&cmd->i_conn_node);
	spin_unlock_bh(&conn->cmd_lock);
}

/* a Text Response with the C bit: its command waits for the next request */
static bool ist_text_continues(struct ist_cmd *icmd)
{
	const struct iscsi_text_rsp *hdr;

	if (icmd->cmd->iscsi_opcode != ISCSI_OP_TEXT)
		return false;
	hdr = isdm_tx_bhs(&icmd->tx);
	return hdr->flags & ISCSI_FLAG_TEXT_CONTINUE;
}

/*
 * Give a command back to LIO once its last Send completed.
 *
 * The command leaves the connection's list before it is marked
 * ISTATE_SENT_STATUS: in a session without RDMAExtensions=Yes (LIO
 * negotiates No for every discovery session, iSER ones included) each
 * ExpStatSN that arrives makes LIO free the commands it finds on that list
 * in that state (iscsit_ack_from_expstatsn()), and a command marked first
 * and unlinked after was freed twice when a PDU came in between.
 */
static void ist_put_cmd(struct ist_cmd *icmd, bool comp_err)
{
	struct iscsit_cmd *cmd = icmd->cmd;
	struct iscsit_conn *conn = icmd->conn->conn;

	if (!comp_err && ist_text_continues(icmd)) {
		/* kept for the next Text Request: LIO owns it from here */
		spin_lock_bh(&cmd->istate_lock);
		cmd->i_state = ISTATE_SENT_STATUS;
		spin_unlock_bh(&cmd->istate_lock);
		return;
	}
	ist_unlink_cmd(conn, cmd);
	if (!comp_err)
		cmd->i_state = ISTATE_SENT_STATUS;
	ist_rx_give_back(icmd);

	switch (cmd->iscsi_opcode) {
	case ISCSI_OP_SCSI_CMD:
		ist_scsi_answered(icmd);
		if (cmd->data_direction == DMA_TO_DEVICE) {
			iscsit_stop_dataout_timer(cmd);
			/*
			 * A WRITE that ends while LIO waited for its data
			 * still holds the reference of the write_pending
			 * hand-off, which target_execute_cmd()'s path would
			 * have dropped: when its Send failed, and when LIO
			 * sent a status without executing it (a final
			 * unsolicited Data-Out short of FirstBurstLength
			 * and of the command: CHECK CONDITION from
			 * iscsit_dataout_check_unsolicited_sequence()). Not
			 * for an aborted one: LIO's abort path drops it.
			 */
			if (cmd->se_cmd.t_state == TRANSPORT_WRITE_PENDING &&
			    (comp_err || !(cmd->se_cmd.transport_state &
					   CMD_T_ABORTED)))
				target_put_sess_cmd(&cmd->se_cmd);
		}
		ist_rw_destroy(icmd);
		transport_generic_free_cmd(&cmd->se_cmd, 0);
		break;
	case ISCSI_OP_SCSI_TMFUNC:
		transport_generic_free_cmd(&cmd->se_cmd, 0);
		break;
	case ISCSI_OP_REJECT:
	case ISCSI_OP_NOOP_OUT:
	case ISCSI_OP_NOOP_IN:
	case ISCSI_OP_ASYNC_EVENT:
	case ISCSI_OP_TEXT:
		/* a Reject that replaced a SCSI command owns its se_cmd */
		if (cmd->se_cmd.se_tfo) {
			transport_generic_free_cmd(&cmd->se_cmd, 0);
			break;
		}
		fallthrough;
	default:
		iscsit_release_cmd(cmd);
		break;
	}
}

static void ist_unmap_pdu(struct ist_cmd *icmd)
{
	struct ist_conn *ic = icmd->conn;

	if (icmd->pdu_dma) {
		ib_dma_unmap_single(ic->base.dev->ib_dev, icmd->pdu_dma,
				    icmd->pdu_len, DMA_TO_DEVICE);
		icmd->pdu_dma = 0;
	}
}

/*
 * Build the Send of a response in the command's ring slot: @bhs (48
 * bytes, built by LIO) plus an optional data segment at @data, copied
 * into the slot when it fits (sense data, always: it lives in LIO's
 * per-command area, which must not be DMA-mapped), else mapped where it
 * is (a kmalloc'ed ping or Text payload). @adv is the command's STags for
 * the Send-with-Invalidate rule (SCSI Response only).
 */
static int ist_build_send(struct ist_cmd *icmd, const void *bhs,
			  const struct isdm_stags *adv, void *data, u32 len)
{
	struct ist_conn *ic = icmd->conn;
	struct ib_device *ib_dev = ic->base.dev->ib_dev;
	u32 inline_len = len <= IST_TX_INLINE ? len : 0;
	int ret;

	if (!icmd->tx.premapped) {
		pr_err_ratelimited("connection from %pISpc: no Send buffer for command tag %u\n",
				   &ic->src, icmd->cmd->se_cmd.map_tag);
		return -EIO;
	}
	/* ist_queue_status() put the sense data in place already */
	if (inline_len && data != icmd->tx.hdr + ISDM_TX_HDR_MAX)
		memcpy(icmd->tx.hdr + ISDM_TX_HDR_MAX, data, inline_len);
	memcpy(isdm_tx_bhs(&icmd->tx), bhs, ISDM_BHS_LEN);
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
 * command without data) is posted unsignaled ("quiet"), except every
 * signal_every-th in a row: that saves a completion, and with it a run of
 * the CQ's work item, on most commands. The quiet command keeps its LIO
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
 * A quiet Send that fails still completes, with its error: a work request
 * flushed from a queue pair in error always does. One that went out with
 * no later Send behind it completes at the teardown: ist_wait_conn() makes
 * every later Send signaled (ist_sends_quiesce()), drains the queue pair
 * and then completes what is still listed (ist_sends_reap_quiet()).
 *
 * Never quiet: Data-In, whose RDMA Writes hold send queue room
 * (@ic->rdma_avail) that a waiting command may need, with perhaps no
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

/*
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
static int ist_post_send(struct ist_cmd *icmd, bool data_in)
{
	struct ist_conn *ic = icmd->conn;
	struct iscsit_cmd *cmd = icmd->cmd;
	bool quiet = false, now, answered;
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
	    ++ic->quiet_run < READ_ONCE(signal_every)) {
		quiet = true;
		icmd->tx.wr.send_flags &= ~IB_SEND_SIGNALED;
		ist_unlink_cmd(ic->conn, cmd);
	} else {
		ic->quiet_run = 0;
	}
	icmd->send_quiet = quiet;
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
		icmd->send_quiet = false;
		ic->data_in_listed -= data_in;
		if (answered) {
			icmd->scsi_waiting = true;
			atomic_inc(&ic->scsi_waiting);
		}
		if (quiet) {
			ic->quiet_run--;
			ist_relink_cmd(ic->conn, cmd);
		}
	} else if (quiet) {
		atomic_long_inc(&ic->quiet_sends);
	}
	spin_unlock(&ic->send_lock);
	if (now)
		local_bh_enable();
	return ret;
}

static void ist_send_complete(struct ist_cmd *icmd, const struct ib_wc *wc);

/*
 * Complete the quiet Sends listed ahead of @upto, whose completion is
 * running: they went out before it. With @upto NULL (the teardown, after
 * the drain), every quiet Send still listed. A signaled Send is never
 * completed here: its own completion comes, and so does a quiet one's
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
		if (icmd->send_quiet) {
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
 * Called before the drain that ist_sends_reap_quiet() follows.
 */
void ist_sends_quiesce(struct ist_conn *ic)
{
	spin_lock(&ic->send_lock);
	ic->sends_quiesced = true;
	spin_unlock(&ic->send_lock);
}

/**
 * ist_sends_quiet_held() - how many commands of quiet Sends wait for a
 *	later completion
 * @ic: the connection
 *
 * For the debugfs view. Context: any; does not sleep.
 * Return: the count.
 */
u32 ist_sends_quiet_held(struct ist_conn *ic)
{
	struct ist_cmd *icmd;
	u32 n = 0;

	spin_lock(&ic->send_lock);
	list_for_each_entry(icmd, &ic->send_list, send_entry)
		n += icmd->send_quiet;
	spin_unlock(&ic->send_lock);
	return n;
}

/**
 * ist_sends_reap_quiet() - complete the commands of quiet Sends that went
 *	out with no later completion
 * @ic: the connection, quiesced and drained
 *
 * Context: process context.
 */
void ist_sends_reap_quiet(struct ist_conn *ic)
{
	ist_send_reap(ic, NULL);
}

static int ist_send(struct ist_cmd *icmd, const void *bhs,
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

/* ------------------------------------------------------------------ */
/* completions                                                        */
/* ------------------------------------------------------------------ */

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
 * quiet Send that a later completion or the teardown showed to have gone
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
		ist_wc_failed(ic, wc, "send failed");
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

static void ist_rdma_read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ist_cmd *icmd = ist_cmd_of(wc->wr_cqe);
	struct ist_conn *ic = icmd->conn;
	struct iscsit_cmd *cmd = icmd->cmd;

	ist_rdma_unreserve(icmd);
	if (wc->status != IB_WC_SUCCESS) {
		ist_wc_failed(ic, wc, "RDMA Read failed");
		ist_put_cmd(icmd, true);
		return;
	}
	iscsit_stop_dataout_timer(cmd);
	ist_rw_destroy(icmd);
	cmd->write_data_done = cmd->se_cmd.data_length;
	spin_lock_bh(&cmd->istate_lock);
	cmd->cmd_flags |= ICF_GOT_LAST_DATAOUT;
	cmd->i_state = ISTATE_RECEIVED_LAST_DATAOUT;
	spin_unlock_bh(&cmd->istate_lock);
	target_execute_cmd(&cmd->se_cmd);
}

/* ------------------------------------------------------------------ */
/* received PDUs                                                      */
/* ------------------------------------------------------------------ */

/*
 * Write data that arrives without the Write STag: the immediate data, plus
 * unsolicited Data-Out only under InitialR2T=No and with F=0
 * (isdm_cmd_unsol_len()). A command that says F=1 and leaves data for the
 * target to fetch must advertise a Write STag, or it could never complete.
 */
static u32 ist_unsol_len(struct iscsit_conn *conn, const u8 *bhs, u32 dlen)
{
	struct iscsi_sess_ops *so = conn->sess->sess_ops;

	return isdm_cmd_unsol_len(bhs, dlen, so->InitialR2T,
				  so->FirstBurstLength);
}

/*
 * A SCSI Command. When it is a WRITE whose data all came as immediate
 * data, LIO gets that data where it is: its scatterlist is the data
 * segment in @rx, no pages are allocated and nothing is copied
 * (SCF_PASSTHROUGH_SG_TO_MEM_NOALLOC); the command holds @rx until
 * ist_rx_give_back() and *@kept tells the caller not to repost it. The
 * receive ring places a data segment on an ISDM_RX_DATA_ALIGN boundary,
 * as a block backstore needs it (iblock builds its bios on these pages);
 * one an AHS moved off it, and any other immediate data, is copied into
 * the pages LIO allocated.
 */
static int ist_handle_scsi_cmd(struct ist_conn *ic, struct isdm_rx_desc *rx,
			       const struct isdm_rx_pdu *pdu, bool *kept)
{
	struct iscsit_conn *conn = ic->conn;
	u8 *buf = rx->buf;
	u8 *bhs = buf + pdu->bhs_off;
	struct iscsi_scsi_req *hdr = (struct iscsi_scsi_req *)bhs;
	bool dump_payload = false, in_place;
	u8 bhs_copy[ISCSI_HDR_LEN];
	struct iscsit_cmd *cmd;
	struct ist_cmd *icmd;
	u32 imm_len;
	int rc;

	rc = isdm_check_cmd_stags(bhs, &pdu->stags,
				  ist_unsol_len(conn, bhs, pdu->data_len));
	if (rc == -EPROTO) {
		pr_err_ratelimited("connection from %pISpc: SCSI command ITT 0x%08x carries %u bytes of data without the W bit\n",
				   &ic->src, be32_to_cpu((__force __be32)hdr->itt),
				   pdu->data_len);
		return rc;
	}
	if (rc) {
		pr_err_ratelimited("connection from %pISpc: SCSI command ITT 0x%08x with STags that do not match its direction (%d)\n",
				   &ic->src, be32_to_cpu((__force __be32)hdr->itt),
				   rc);
		return rc;
	}

	cmd = ist_alloc_cmd(ic);
	if (!cmd)
		return -ENOMEM;
	icmd = iscsit_priv_cmd(cmd);
	icmd->stags = pdu->stags;

	rc = iscsit_setup_scsi_cmd(conn, cmd, bhs);
	if (rc < 0)
		return 0;	/* LIO rejected it and owns the command */
	icmd->scsi_waiting = true;
	atomic_inc(&ic->scsi_waiting);

	/*
	 * LIO set first_burst_len to the data segment's length and fixed
	 * data_length (a WRITE's is never truncated to the CDB's); with
	 * the flag, transport_generic_new_cmd() allocates no data pages.
	 */
	in_place = cmd->immediate_data && cmd->se_cmd.data_length &&
		   cmd->data_direction == DMA_TO_DEVICE &&
		   cmd->first_burst_len == cmd->se_cmd.data_length &&
		   pdu->data_len == cmd->se_cmd.data_length &&
		   IS_ALIGNED((unsigned long)(buf + pdu->data_off),
			      ISDM_RX_DATA_ALIGN);
	if (in_place)
		cmd->se_cmd.se_cmd_flags |= SCF_PASSTHROUGH_SG_TO_MEM_NOALLOC;

	/* sequences the command itself when it has no immediate data */
	rc = iscsit_process_scsi_cmd(conn, cmd, hdr);
	if (rc < 0 || (!rc && !cmd->immediate_data))
		return 0;
	if (rc > 0)
		dump_payload = true;

	if (!dump_payload) {
		imm_len = min3(cmd->first_burst_len, pdu->data_len,
			       cmd->se_cmd.data_length);
		if (in_place) {
			sg_init_one(&icmd->imm_sg, buf + pdu->data_off,
				    imm_len);
			cmd->se_cmd.t_data_sg = &icmd->imm_sg;
			cmd->se_cmd.t_data_nents = 1;
			/* before LIO can run it: its status gives it back */
			icmd->rx_held = rx;
			atomic_inc(&ic->rx_held);
			atomic_long_inc(&ic->imm_in_place);
			*kept = true;
		} else {
			sg_copy_from_buffer(cmd->se_cmd.t_data_sg,
					    cmd->se_cmd.t_data_nents,
					    buf + pdu->data_off, imm_len);
		}
		cmd->write_data_done += imm_len;
		if (cmd->write_data_done == cmd->se_cmd.data_length) {
			spin_lock_bh(&cmd->istate_lock);
			cmd->cmd_flags |= ICF_GOT_LAST_DATAOUT;
			cmd->i_state = ISTATE_RECEIVED_LAST_DATAOUT;
			spin_unlock_bh(&cmd->istate_lock);
		}
	}

	/*
	 * From here a WRITE in place may complete, and its buffer be
	 * reposted and refilled, before LIO is done with the header (a
	 * Reject copies it): LIO gets a copy.
	 */
	memcpy(bhs_copy, bhs, ISCSI_HDR_LEN);
	rc = iscsit_sequence_cmd(conn, cmd, bhs_copy,
				 ((struct iscsi_scsi_req *)bhs_copy)->cmdsn);
	if (!rc && !dump_payload && cmd->unsolicited_data)
		iscsit_set_unsolicited_dataout(cmd);
	else if (dump_payload && cmd->immediate_data)
		target_put_sess_cmd(&cmd->se_cmd);
	return 0;
}

/* what a Data-Out finds of the command it names, before LIO sees it */
enum ist_dout_fit {
	IST_DOUT_OK,		/* LIO's to handle (or to dump: no such ITT) */
	IST_DOUT_OVERRUN,	/* beyond the command's length */
	IST_DOUT_FAILED,	/* the command already failed: discard */
	IST_DOUT_EARLY,		/* the command does not wait for data */
};

/*
 * Check a Data-Out of @len bytes at @offset against the WRITE it names,
 * the first command with its ITT (the one LIO finds). LIO must never see
 * it when:
 * - it overruns the command: LIO checks that too, but answers with a
 *   Reject that drops a reference of the command it goes on using
 *   (iscsit_reject_cmd() from __iscsit_check_dataout_hdr()); its sum also
 *   wraps at 4 GiB, this one does not;
 * - the command expects unsolicited data but is not in WRITE_PENDING:
 *   LIO warns (WARN_ON in __iscsit_check_dataout_hdr()) and goes on
 *   copying into buffers that may not exist. Either the command failed
 *   before its data (a CDB or LUN LIO refused: its CHECK CONDITION is on
 *   its way, and RFC 3720 lets the initiator's data cross it; discarded)
 *   or it waits behind a CmdSN gap, which one connection never has
 *   (refused: its data would be lost). On 6.1 and 6.12 LIO submits a
 *   WRITE in CmdSN order from the receive path itself
 *   (iscsit_execute_cmd(): transport_handle_cdb_direct(), target_submit()),
 *   so it is in WRITE_PENDING before the next PDU is read; a kernel that
 *   queues the submission would need the gap test narrowed to
 *   ISTATE_DEFERRED_CMD.
 */
static enum ist_dout_fit ist_data_out_fit(struct iscsit_conn *conn,
					  itt_t itt, u32 offset, u32 len)
{
	enum ist_dout_fit fit = IST_DOUT_OK;
	struct iscsit_cmd *cmd;

	spin_lock_bh(&conn->cmd_lock);
	list_for_each_entry(cmd, &conn->conn_cmd_list, i_conn_node) {
		if (cmd->init_task_tag != itt)
			continue;
		if (cmd->data_direction != DMA_TO_DEVICE ||
		    (cmd->cmd_flags & ICF_GOT_LAST_DATAOUT))
			break;	/* LIO dumps it */
		if ((u64)offset + len > cmd->se_cmd.data_length)
			fit = IST_DOUT_OVERRUN;
		else if (cmd->unsolicited_data && cmd->sense_reason)
			fit = IST_DOUT_FAILED;
		else if (cmd->unsolicited_data &&
			 READ_ONCE(cmd->se_cmd.t_state) !=
			 TRANSPORT_WRITE_PENDING)
			fit = IST_DOUT_EARLY;
		break;
	}
	spin_unlock_bh(&conn->cmd_lock);
	return fit;
}

static int ist_handle_data_out(struct ist_conn *ic, u8 *buf,
			       const struct isdm_rx_pdu *pdu)
{
	struct iscsi_data *hdr = (struct iscsi_data *)(buf + pdu->bhs_off);
	u32 itt = be32_to_cpu((__force __be32)hdr->itt);
	struct iscsit_cmd *cmd = NULL;
	u32 offset = be32_to_cpu(hdr->offset);
	int rc;

	switch (ist_data_out_fit(ic->conn, hdr->itt, offset, pdu->data_len)) {
	case IST_DOUT_OK:
		break;
	case IST_DOUT_OVERRUN:
		pr_err_ratelimited("connection from %pISpc: Data-Out for ITT 0x%08x at offset %u + %u beyond the command's length\n",
				   &ic->src, itt, offset, pdu->data_len);
		return -EPROTO;
	case IST_DOUT_FAILED:
		pr_debug("connection from %pISpc: Data-Out for ITT 0x%08x, a command that already failed; discarded\n",
			 &ic->src, itt);
		return 0;
	case IST_DOUT_EARLY:
		pr_err_ratelimited("connection from %pISpc: Data-Out for ITT 0x%08x, a command not yet in CmdSN order (a CmdSN gap)\n",
				   &ic->src, itt);
		return -EPROTO;
	}
	rc = iscsit_check_dataout_hdr(ic->conn, (unsigned char *)hdr, &cmd);
	if (rc < 0 || !cmd)
		return 0;	/* rejected or dumped by LIO */

	/* RFC 5046 7.3.4: solicited Data-Out does not exist with iSER */
	if (!cmd->unsolicited_data) {
		pr_err_ratelimited("connection from %pISpc: solicited Data-Out for ITT 0x%08x\n",
				   &ic->src, itt);
		return -EPROTO;
	}
	if (offset > cmd->se_cmd.data_length ||
	    pdu->data_len > cmd->se_cmd.data_length - offset) {
		pr_err_ratelimited("connection from %pISpc: Data-Out offset %u + %u beyond %u\n",
				   &ic->src, offset, pdu->data_len,
				   cmd->se_cmd.data_length);
		return -EPROTO;
	}
	sg_pcopy_from_buffer(cmd->se_cmd.t_data_sg, cmd->se_cmd.t_data_nents,
			     buf + pdu->data_off, pdu->data_len, offset);
	return iscsit_check_dataout_payload(cmd, hdr, false);
}

static int ist_handle_nop_out(struct ist_conn *ic, u8 *buf,
			      const struct isdm_rx_pdu *pdu)
{
	struct iscsi_nopout *hdr = (struct iscsi_nopout *)(buf + pdu->bhs_off);
	struct iscsit_cmd *cmd;
	int rc;

	/*
	 * RFC 3720 10.18: a ping has the TTT 0xffffffff, an answer to a
	 * NOP-In the reserved ITT. LIO sets a command up only for the first,
	 * then queues one with both fields set as a ping anyway, in no state
	 * a transport knows (ISTATE_NO_STATE), and its session teardown did
	 * not complete after that.
	 */
	if (hdr->itt != RESERVED_ITT && hdr->ttt != cpu_to_be32(0xFFFFFFFF)) {
		pr_err_ratelimited("connection from %pISpc: NOP-Out with both an ITT (0x%08x) and a TTT (0x%08x); rejecting it\n",
				   &ic->src, be32_to_cpu((__force __be32)hdr->itt),
				   be32_to_cpu(hdr->ttt));
		iscsit_add_reject(ic->conn, ISCSI_REASON_PROTOCOL_ERROR,
				  (unsigned char *)hdr);
		return 0;
	}
	cmd = ist_alloc_cmd(ic);
	if (!cmd)
		return -ENOMEM;
	rc = iscsit_setup_nop_out(ic->conn, cmd, hdr);
	if (rc < 0)
		return 0;
	/* ping data comes back in the NOP-In (RFC 3720 10.18) */
	if (pdu->data_len && hdr->ttt == cpu_to_be32(0xFFFFFFFF)) {
		cmd->buf_ptr = kmemdup(buf + pdu->data_off, pdu->data_len,
				       GFP_KERNEL);
		if (cmd->buf_ptr)
			cmd->buf_ptr_size = pdu->data_len;
	}
	return iscsit_process_nop_out(ic->conn, cmd, hdr);
}

/*
 * The previous part of a continued Text exchange must be done with before
 * the command is used again: ist_send_done() marks it ISTATE_SENT_STATUS
 * in the CQ's own context. The continuation's receive can come before that
 * Send completion on the shared CQ (the completion waits for the
 * initiator's ACK, which may come after its next request): then
 * ist_handle_text() keeps the request and ist_send_done() takes it up.
 */
static bool ist_text_settled(struct iscsit_cmd *cmd)
{
	bool sent;

	spin_lock_bh(&cmd->istate_lock);
	sent = cmd->i_state == ISTATE_SENT_STATUS;
	spin_unlock_bh(&cmd->istate_lock);
	return sent;
}

static int ist_handle_text(struct ist_conn *ic, struct isdm_rx_desc *rx,
			   u32 len, const struct isdm_rx_pdu *pdu, bool *kept)
{
	u8 *buf = rx->buf;
	struct iscsi_text *hdr = (struct iscsi_text *)(buf + pdu->bhs_off);
	struct iscsit_cmd *cmd;
	struct ist_cmd *icmd;
	char *text;
	int rc;

	if (hdr->ttt != cpu_to_be32(0xFFFFFFFF)) {
		/* only a Text command we continued, with our TTT */
		cmd = iscsit_find_cmd_from_itt(ic->conn, hdr->itt);
		if (cmd && (cmd->iscsi_opcode != ISCSI_OP_TEXT ||
			    cmd->targ_xfer_tag != be32_to_cpu(hdr->ttt)))
			cmd = NULL;
		if (cmd && !ist_text_settled(cmd)) {
			/*
			 * The initiator answered the part before its Send
			 * completed here (the ACK that completes it may come
			 * after, or with, the next request): keep the buffer
			 * and take the request up in ist_send_done(). One
			 * at most, and only behind a part with the C bit.
			 */
			icmd = iscsit_priv_cmd(cmd);
			if (cmd->i_state != ISTATE_SEND_TEXTRSP ||
			    !ist_text_continues(icmd) || icmd->text_cont) {
				cmd = NULL;
			} else {
				icmd->text_cont = rx;
				icmd->text_cont_len = len;
				*kept = true;
				return 0;
			}
		}
	} else {
		cmd = ist_alloc_cmd(ic);
		if (!cmd)
			return -ENOMEM;
	}
	if (!cmd) {
		pr_err_ratelimited("connection from %pISpc: Text continuation for unknown ITT 0x%08x TTT 0x%08x\n",
				   &ic->src,
				   be32_to_cpu((__force __be32)hdr->itt),
				   be32_to_cpu(hdr->ttt));
		return -EPROTO;
	}
	/*
	 * Also moves a continued command out of ISTATE_SENT_STATUS, so that
	 * the ExpStatSN of this request cannot make LIO free it.
	 */
	rc = iscsit_setup_text_cmd(ic->conn, cmd, hdr);
	if (rc < 0)
		return 0;
	/*
	 * An empty continuation (RFC 3720 10.10.4: a TTT, no data) asks for
	 * the next part: LIO's iscsit_process_text_cmd() takes a NULL
	 * text_in_ptr for that, as iscsit_handle_text_cmd() passes it.
	 */
	if (!pdu->data_len)
		return iscsit_process_text_cmd(ic->conn, cmd, hdr);
	text = kzalloc(pdu->data_len + 1, GFP_KERNEL);
	if (!text)
		return -ENOMEM;
	memcpy(text, buf + pdu->data_off, pdu->data_len);
	cmd->text_in_ptr = text;
	return iscsit_process_text_cmd(ic->conn, cmd, hdr);
}

static int ist_rx_pdu(struct ist_conn *ic, struct isdm_rx_desc *rx, u32 len,
		      const struct isdm_rx_pdu *pdu, bool *kept)
{
	struct iscsit_conn *conn = ic->conn;
	u8 *buf = rx->buf;
	u8 *bhs = buf + pdu->bhs_off;
	struct iscsit_cmd *cmd;

	if (conn->sess->sess_ops->SessionType &&
	    pdu->opcode != ISCSI_OP_TEXT && pdu->opcode != ISCSI_OP_LOGOUT &&
	    pdu->opcode != ISCSI_OP_NOOP_OUT) {
		pr_err_ratelimited("connection from %pISpc: opcode 0x%02x in a discovery session\n",
				   &ic->src, pdu->opcode);
		iscsit_add_reject(conn, ISCSI_REASON_PROTOCOL_ERROR, bhs);
		return 0;
	}

	switch (pdu->opcode) {
	case ISCSI_OP_SCSI_CMD:
		return ist_handle_scsi_cmd(ic, rx, pdu, kept);
	case ISCSI_OP_SCSI_DATA_OUT:
		return ist_handle_data_out(ic, buf, pdu);
	case ISCSI_OP_NOOP_OUT:
		return ist_handle_nop_out(ic, buf, pdu);
	case ISCSI_OP_TEXT:
		return ist_handle_text(ic, rx, len, pdu, kept);
	case ISCSI_OP_SCSI_TMFUNC:
		cmd = ist_alloc_cmd(ic);
		if (!cmd)
			return -ENOMEM;
		return iscsit_handle_task_mgt_cmd(conn, cmd, bhs);
	case ISCSI_OP_LOGOUT:
		cmd = ist_alloc_cmd(ic);
		if (!cmd)
			return -ENOMEM;
		return iscsit_handle_logout_cmd(conn, cmd, bhs);
	default:
		/* isdm_rx_parse() let through only the opcodes above */
		return -EPROTO;
	}
}

static void ist_hello_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ist_conn *ic = wc->qp->qp_context;

	isdm_tx_unmap(ic->base.dev, &ic->hello_tx);
	if (wc->status != IB_WC_SUCCESS)
		ist_wc_failed(ic, wc, "HelloReply send failed");
	else if (ic->hello_reply.flags & ISDM_HELLO_REPLY_REJ)
		ist_conn_fail(ic, "iSER Hello rejected", -EPROTO);
}

/* RFC 5046 5.1.3: answer a Hello with a HelloReply. */
static int ist_handle_hello(struct ist_conn *ic, const void *buf, u32 len)
{
	struct isdm_tx *tx = &ic->hello_tx;
	struct isdm_hello_result res;
	struct isdm_send_op op = { .kind = ISDM_SEND_SE };
	u8 max_ver, min_ver;
	u16 ird;
	int ret;

	ret = isdm_hello_parse(buf, len, &max_ver, &min_ver, &ird);
	if (ret) {
		pr_err_ratelimited("connection from %pISpc: malformed iSER Hello (%u bytes, %d)\n",
				   &ic->src, len, ret);
		return ret;
	}
	isdm_hello_answer(max_ver, min_ver, ird, ic->ord, &res);
	if (res.reject)
		pr_info_ratelimited("connection from %pISpc: rejecting Hello (versions %u-%u, IRD %u, our ORD %u)\n",
				    &ic->src, min_ver, max_ver, ird, ic->ord);
	/* the receive completion path: no lock, debugfs reads it racily */
	WRITE_ONCE(ic->view.hello_ver, res.cur_ver);
	WRITE_ONCE(ic->view.hello_rej, res.reject);
	WRITE_ONCE(ic->view.hellos, ic->view.hellos + 1);
	isdm_hello_reply_build(&ic->hello_reply, &res);	/* @tx->hdr */
	tx->num_sge = 1;
	ret = isdm_tx_map(ic->base.dev, tx, 0, sizeof(ic->hello_reply), &op,
			  ist_hello_send_done);
	if (ret)
		return ret;
	ret = isdm_tx_post(&ic->base, tx, NULL);
	if (ret) {
		isdm_tx_unmap(ic->base.dev, tx);
		return ret;
	}
	/*
	 * The connection fails once the refusal is sent
	 * (ist_hello_send_done()); until then what arrives behind the Hello
	 * is dropped, as after any failure: a NOP-Out there was answered.
	 */
	ic->hello_refused = res.reject;
	return 0;
}

/**
 * ist_recv_done() - a full-feature receive completed
 * @cq: the CQ
 * @wc: the completion
 *
 * Runs in process context (IB_POLL_WORKQUEUE): LIO's command allocation
 * may sleep. Every error tears the connection down through LIO.
 */
void ist_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ist_conn *ic = wc->qp->qp_context;
	struct isdm_rx_desc *rx = container_of(wc->wr_cqe, struct isdm_rx_desc,
					       cqe);

	if (wc->status != IB_WC_SUCCESS) {
		ist_wc_failed(ic, wc, "receive failed");
		return;
	}
	ist_rx_process(ic, rx, wc->byte_len);
}

/*
 * One full-feature message of @len bytes in @rx: from ist_recv_done(), or
 * from ist_send_done() for a Text continuation that arrived before the
 * previous part's Send completion (ist_handle_text()). Both run in the
 * connection's CQ context, one at a time.
 */
static void ist_rx_process(struct ist_conn *ic, struct isdm_rx_desc *rx,
			   u32 len)
{
	struct isdm_rx_pdu pdu;
	bool first, kept = false;
	int ret;

	/*
	 * Once the connection failed (a PDU was refused, the peer went
	 * away), nothing that arrived behind the failing PDU may reach LIO:
	 * the initiator sees the connection fail and retries those commands
	 * elsewhere, and LIO would execute them on a connection it is
	 * tearing down. The receive buffer is not posted again.
	 */
	if (READ_ONCE(ic->failed) || ic->hello_refused)
		return;
	ib_dma_sync_single_for_cpu(ic->base.dev->ib_dev, rx->dma, rx->size,
				   DMA_FROM_DEVICE);

	first = !ic->ffp_seen;
	ic->ffp_seen = true;
	ret = isdm_msg_kind(rx->buf, len);
	if (ret == ISDM_MSG_HELLO && first) {
		ret = ist_handle_hello(ic, rx->buf, len);
		goto repost;
	}
	if (ret != ISDM_MSG_PDU) {
		pr_err_ratelimited("connection from %pISpc: unexpected iSER message 0x%02x (%d)\n",
				   &ic->src, len ? *(u8 *)rx->buf : 0,
				   ret);
		ret = -EPROTO;
		goto fail;
	}

	ret = isdm_rx_parse(rx->buf, len, &ic->base.mode,
			    ISDM_ROLE_TARGET, ISDM_PHASE_FFP, ic->rx_max_data,
			    &pdu);
	if (ret == -EPERM || ret == -EPROTOTYPE) {
		/* Login in full feature phase, SNACK: Reject (RFC 5046 7.3) */
		pr_err_ratelimited("connection from %pISpc: PDU 0x%02x not allowed with iSER here; rejecting it\n",
				   &ic->src,
				   *((u8 *)rx->buf + ic->base.mode.hdr_len) &
				   ISDM_BHS_OPCODE_MASK);
		iscsit_add_reject(ic->conn, ISCSI_REASON_PROTOCOL_ERROR,
				  rx->buf + ic->base.mode.hdr_len);
		ret = 0;
		goto repost;
	}
	if (ret) {
		pr_err_ratelimited("connection from %pISpc: malformed PDU (%u bytes, %d)\n",
				   &ic->src, len, ret);
		goto fail;
	}
	/* LIO parses the AHS and the CDB without checking them */
	ret = isdm_check_ahs((u8 *)rx->buf + pdu.bhs_off,
			     (u8 *)rx->buf + pdu.bhs_off + ISDM_BHS_LEN,
			     pdu.ahs_len);
	if (ret) {
		pr_err_ratelimited("connection from %pISpc: PDU 0x%02x with a bad AHS (%d); closing\n",
				   &ic->src, pdu.opcode, ret);
		goto fail;
	}
	/* LIO's handlers return > 0 for "handled, nothing more to do" */
	ret = ist_rx_pdu(ic, rx, len, &pdu, &kept);
	if (ret < 0)
		goto fail;
	ret = 0;
repost:
	/* a WRITE that uses its immediate data in place keeps the buffer */
	if (!ret && !kept)
		ret = isdm_rx_post(ic->base.q.qp, ic->base.dev, rx);
	if (!ret)
		return;
fail:
	ist_conn_fail(ic, "bad input", ret);
}

/* ------------------------------------------------------------------ */
/* LIO callbacks                                                      */
/* ------------------------------------------------------------------ */

/*
 * LIO's core completes an aborted command (target_abort_work()) without
 * transport_complete_task_attr(), which it runs for every other
 * completion: a SIMPLE or HEAD OF QUEUE command that ran leaves the LUN's
 * count of running commands one too high, an ORDERED one leaves its
 * ordered_sync_in_progress set, and from then on an ORDERED command on that
 * LUN, and every command behind it, waits on its delayed list for ever
 * (6.1 and 6.12; found by iser_ffp -m random, ffp-hostile's ordabort).
 * The abort reaches the transport only here (ist_aborted_task(), or a
 * TASK ABORTED status when the abort came from another I_T nexus): do the
 * bookkeeping LIO skipped, as transport_complete_task_attr() does it, once
 * (SCF_TASK_ATTR_SET says it is still owed).
 */
static void ist_abort_task_attr(struct se_cmd *se_cmd)
{
	struct se_device *dev = se_cmd->se_dev;

	if (!dev || !(se_cmd->transport_state & CMD_T_ABORTED) ||
	    !(se_cmd->se_cmd_flags & SCF_TASK_ATTR_SET))
		return;
	switch (se_cmd->sam_task_attr) {
	case TCM_SIMPLE_TAG:
	case TCM_HEAD_TAG:
		atomic_dec_mb(&dev->non_ordered);
		break;
	case TCM_ORDERED_TAG:
		spin_lock(&dev->delayed_cmd_lock);
		dev->ordered_sync_in_progress = false;
		spin_unlock(&dev->delayed_cmd_lock);
		break;
	default:
		break;
	}
	se_cmd->se_cmd_flags &= ~SCF_TASK_ATTR_SET;
	pr_info_ratelimited("ITT 0x%08x: aborted after it ran; released its place in the LUN's task order, which the target core keeps\n",
			    be32_to_cpu((__force __be32)(u32)se_cmd->tag));
	if (atomic_read(&dev->delayed_cmd_count) > 0)
		schedule_work(&dev->delayed_cmd_work);
}

int ist_queue_status(struct iscsit_conn *conn, struct iscsit_cmd *cmd)
{
	struct ist_cmd *icmd = iscsit_priv_cmd(cmd);
	struct se_cmd *se_cmd = &cmd->se_cmd;
	u8 bhs[ISCSI_HDR_LEN] = {};
	struct iscsi_scsi_rsp *hdr = (struct iscsi_scsi_rsp *)bhs;
	void *data = NULL;
	u32 len = 0;

	/* TASK ABORTED for an abort from another I_T nexus (TAS) */
	ist_abort_task_attr(se_cmd);
	/* the data is no longer read: the buffer is back before the status */
	ist_rx_give_back(icmd);
	iscsit_build_rsp_pdu(cmd, conn, true, hdr);
	if (se_cmd->sense_buffer && icmd->tx.premapped &&
	    (se_cmd->se_cmd_flags &
	     (SCF_TRANSPORT_TASK_SENSE | SCF_EMULATED_TASK_SENSE))) {
		/* RFC 3720 10.4.7: SenseLength, then the sense data */
		put_unaligned_be16(se_cmd->scsi_sense_length, cmd->sense_buffer);
		se_cmd->scsi_sense_length += sizeof(__be16);
		hton24(hdr->dlength, (u32)se_cmd->scsi_sense_length);
		/* into the ring slot, padded (see ist_build_send()) */
		BUILD_BUG_ON(ALIGN(ISCSI_SENSE_BUFFER_LEN, 4) > IST_TX_INLINE);
		len = min_t(u32, se_cmd->scsi_sense_length,
			    ISCSI_SENSE_BUFFER_LEN);
		data = icmd->tx.hdr + ISDM_TX_HDR_MAX;
		memcpy(data, cmd->sense_buffer, len);
		memset(data + len, 0, ALIGN(len, 4) - len);
		len = ALIGN(len, 4);
	}
	return ist_send(icmd, bhs, &icmd->stags, data, len);
}

int ist_queue_data_in(struct iscsit_conn *conn, struct iscsit_cmd *cmd)
{
	struct ist_cmd *icmd = iscsit_priv_cmd(cmd);
	struct ist_conn *ic = conn->context;
	u8 bhs[ISCSI_HDR_LEN] = {};
	u64 remote;
	int ret;

	if (!icmd->stags.rsv)
		return -EINVAL;	/* isdm_check_cmd_stags() prevents this */

	iscsit_build_rsp_pdu(cmd, conn, true, (struct iscsi_scsi_rsp *)bhs);
	ret = ist_build_send(icmd, bhs, &icmd->stags, NULL, 0);
	if (ret)
		return ret;

	/* ZBVA: the tagged offset is the buffer offset (RFC 5046 9.5.2) */
	remote = ic->base.mode.zbva ? 0 : icmd->stags.read_va;
	if (!icmd->rw_init) {
		ret = ist_rw_init(icmd, 0, remote, icmd->stags.read_stag,
				  DMA_TO_DEVICE);
		if (ret)
			goto unmap;
	}
	icmd->tx.wr.num_sge = icmd->tx.num_sge;
	if (!ist_rdma_reserve(icmd)) {
		ret = -EAGAIN;	/* LIO's queue-full work tries again */
		goto unmap;
	}
	/* the RDMA Writes go first; only the response Send completes */
	ret = ist_post_send(icmd, true);
	if (ret < 0) {
		ist_rdma_unreserve(icmd);
		goto unmap;
	}
	return 0;
unmap:
	ist_unmap_pdu(icmd);
	return ret == -ENOMEM ? -EAGAIN : ret;
}

/* Post a command's RDMA Reads; -ENOMEM while the send queue is full. */
static int ist_post_reads(struct ist_cmd *icmd)
{
	struct ist_conn *ic = icmd->conn;
	int ret;

	if (!ist_rdma_reserve(icmd))
		return -ENOMEM;
	icmd->tx.cqe.done = ist_rdma_read_done;
	ret = rdma_rw_ctx_post(&icmd->rw, ic->base.q.qp,
			       ic->base.cm_id->port_num, &icmd->tx.cqe, NULL);
	if (ret) {
		/* no kick: the caller queues it and tries again later */
		atomic_add(icmd->rdma_held, &ic->rdma_avail);
		icmd->rdma_held = 0;
	}
	return ret;
}

/* Under rdma_wait_lock: queue @icmd, and the retry if the list was empty. */
static void ist_rdma_wait_add(struct ist_conn *ic, struct ist_cmd *icmd,
			      bool failed)
{
	icmd->rdma_failed = failed;
	icmd->rdma_waiting = true;
	list_add_tail(&icmd->wait_entry, &ic->rdma_wait);
	if (!failed)
		mod_delayed_work(ist_wq, &ic->rdma_retry_work, 1);
}

/**
 * ist_rdma_retry_work() - post the RDMA Reads that waited for send queue room
 * @work: the connection's @rdma_retry_work
 *
 * In arrival order; runs again one tick later while the queue is full.
 */
void ist_rdma_retry_work(struct work_struct *work)
{
	struct ist_conn *ic = container_of(to_delayed_work(work),
					   struct ist_conn, rdma_retry_work);
	struct ist_cmd *icmd, *tmp;
	bool again = false;
	int ret, err = 0;

	spin_lock_bh(&ic->rdma_wait_lock);
	list_for_each_entry_safe(icmd, tmp, &ic->rdma_wait, wait_entry) {
		if (ic->rdma_wait_stopped)
			break;
		if (icmd->rdma_failed)
			continue;
		ret = ist_post_reads(icmd);
		if (ret == -ENOMEM) {
			again = true;
			break;
		}
		if (ret) {
			icmd->rdma_failed = true;
			err = ret;
			continue;
		}
		list_del_init(&icmd->wait_entry);
		icmd->rdma_waiting = false;
	}
	if (again && !ic->rdma_wait_stopped)
		mod_delayed_work(ist_wq, &ic->rdma_retry_work, 1);
	spin_unlock_bh(&ic->rdma_wait_lock);
	if (err)
		ist_conn_fail(ic, "posting RDMA Reads failed", err);
}

/**
 * ist_rdma_wait_stop() - drop the commands still waiting to post RDMA Reads
 * @ic: a closing connection, its queues drained
 *
 * Each is put as if its RDMA Read had been flushed.
 */
void ist_rdma_wait_stop(struct ist_conn *ic)
{
	struct ist_cmd *icmd, *tmp;
	LIST_HEAD(drop);

	spin_lock_bh(&ic->rdma_wait_lock);
	ic->rdma_wait_stopped = true;
	list_splice_init(&ic->rdma_wait, &drop);
	list_for_each_entry(icmd, &drop, wait_entry)
		icmd->rdma_waiting = false;
	spin_unlock_bh(&ic->rdma_wait_lock);
	cancel_delayed_work_sync(&ic->rdma_retry_work);

	list_for_each_entry_safe(icmd, tmp, &drop, wait_entry) {
		list_del_init(&icmd->wait_entry);
		ist_put_cmd(icmd, true);
	}
}

/*
 * Fetch a WRITE's data with RDMA Reads. LIO ignores what this returns when
 * it calls it for a command that had immediate or unsolicited data
 * (iscsit_execute_cmd(), iscsit_check_dataout_payload()), so every outcome
 * is handled here and 0 returned: posted; or, with the send queue full,
 * queued on @ic->rdma_wait behind the commands already waiting there and
 * posted by ist_rdma_retry_work(); or, where it can never be posted, the
 * connection fails and its teardown drops the command.
 */
int ist_get_dataout(struct iscsit_conn *conn, struct iscsit_cmd *cmd,
		    bool recovery)
{
	struct ist_cmd *icmd = iscsit_priv_cmd(cmd);
	struct ist_conn *ic = conn->context;
	u32 done = cmd->write_data_done;
	u64 remote;
	int ret = 0;

	if (!icmd->stags.wsv)
		return -EINVAL;	/* isdm_check_cmd_stags() prevents this */
	/*
	 * The rest of the data comes by RDMA Read, never by Data-Out PDUs.
	 * LIO's Data-Out timer (3 s, started while it expected unsolicited
	 * data) would close the connection whenever a large read, or one
	 * queued behind others for the send queue, took longer than that; the
	 * RC transport's retries bound a read that never completes.
	 */
	iscsit_stop_dataout_timer(cmd);
	/*
	 * ZBVA: the tagged offset is the buffer offset. Absolute VAs: the
	 * advertised address is that of the first byte not sent
	 * unsolicited (the Linux convention, Documentation/wire-protocol.md).
	 */
	remote = ic->base.mode.zbva ? done : icmd->stags.write_va;
	if (!icmd->rw_init)
		ret = ist_rw_init(icmd, done, remote, icmd->stags.write_stag,
				  DMA_FROM_DEVICE);

	spin_lock_bh(&ic->rdma_wait_lock);
	if (ic->rdma_wait_stopped) {
		spin_unlock_bh(&ic->rdma_wait_lock);
		return -ECONNRESET;
	}
	if (!ret && list_empty(&ic->rdma_wait)) {
		ret = ist_post_reads(icmd);
		if (!ret) {
			spin_unlock_bh(&ic->rdma_wait_lock);
			return 0;
		}
	} else if (!ret) {
		ret = -ENOMEM;	/* behind those waiting */
	}
	ist_rdma_wait_add(ic, icmd, ret != -ENOMEM);
	spin_unlock_bh(&ic->rdma_wait_lock);
	if (ret != -ENOMEM)
		ist_conn_fail(ic, "cannot fetch a WRITE's data", ret);
	return 0;
}

static int ist_put_nopin(struct iscsit_cmd *cmd, struct iscsit_conn *conn,
			 bool nopout_response)
{
	u8 bhs[ISCSI_HDR_LEN] = {};

	iscsit_build_nopin_rsp(cmd, conn, (struct iscsi_nopin *)bhs,
			       nopout_response);
	return ist_send(ist_cmd_bind(conn, cmd), bhs, NULL, cmd->buf_ptr,
			cmd->buf_ptr ? cmd->buf_ptr_size : 0);
}

int ist_immediate_queue(struct iscsit_conn *conn, struct iscsit_cmd *cmd,
			int state)
{
	switch (state) {
	case ISTATE_REMOVE:
		ist_unlink_cmd(conn, cmd);
		ist_put_cmd(ist_cmd_bind(conn, cmd), true);
		return 0;
	case ISTATE_SEND_NOPIN_WANT_RESPONSE:
	case ISTATE_SEND_NOPIN_NO_RESPONSE:
		/* unsolicited ping from LIO's nopin timer */
		return ist_put_nopin(cmd, conn, false);
	default:
		pr_err("unknown immediate state %d\n", state);
		return -EINVAL;
	}
}

/*
 * LIO queues an Asynchronous Message ("dropping connection", RFC 7143
 * 11.9) on a surviving connection of a session when another one fails
 * with connection recovery (ErrorRecoveryLevel 2, several connections);
 * it allocates the command itself and builds nothing for the transport.
 */
static int ist_put_async(struct ist_cmd *icmd, struct iscsit_conn *conn)
{
	struct iscsit_cmd *cmd = icmd->cmd;
	struct iscsi_sess_ops *so = conn->sess->sess_ops;
	struct iscsi_async hdr = {};

	cmd->init_task_tag = RESERVED_ITT;
	cmd->targ_xfer_tag = 0xFFFFFFFF;
	cmd->stat_sn = conn->stat_sn++;
	hdr.opcode = ISCSI_OP_ASYNC_EVENT;
	hdr.flags = ISCSI_FLAG_CMD_FINAL;
	memset(hdr.rsvd4, 0xff, sizeof(hdr.rsvd4));	/* ITT 0xffffffff */
	hdr.statsn = cpu_to_be32(cmd->stat_sn);
	hdr.exp_cmdsn = cpu_to_be32(conn->sess->exp_cmd_sn);
	hdr.max_cmdsn = cpu_to_be32((u32)atomic_read(&conn->sess->max_cmd_sn));
	hdr.async_event = ISCSI_ASYNC_MSG_DROPPING_CONNECTION;
	hdr.param1 = cpu_to_be16(cmd->logout_cid);
	hdr.param2 = cpu_to_be16(so->DefaultTime2Wait);
	hdr.param3 = cpu_to_be16(so->DefaultTime2Retain);
	return ist_send(icmd, &hdr, NULL, NULL, 0);
}

int ist_response_queue(struct iscsit_conn *conn, struct iscsit_cmd *cmd,
		       int state)
{
	struct ist_cmd *icmd = ist_cmd_bind(conn, cmd);
	struct ist_conn *ic = conn->context;
	u8 bhs[ISCSI_HDR_LEN] = {};
	int ret;

	switch (state) {
	case ISTATE_SEND_LOGOUTRSP:
		ret = iscsit_build_logout_rsp(cmd, conn,
					      (struct iscsi_logout_rsp *)bhs);
		if (ret < 0)
			return ret;
		ret = ist_send(icmd, bhs, NULL, NULL, 0);
		if (!ret)
			ic->logout_posted = true;
		return ret;
	case ISTATE_SEND_NOPIN:
		return ist_put_nopin(cmd, conn, true);
	case ISTATE_SEND_TASKMGTRSP:
		/*
		 * A TMF LIO answers itself (no such LUN or task, not
		 * authorized, not supported) keeps the reference of the
		 * acknowledgment when it came in CmdSN order:
		 * iscsit_handle_task_mgt_cmd() drops it only for an
		 * immediate one, and the target core, which drops it for the
		 * others, never saw this one. Once, should LIO call again.
		 */
		if (!cmd->immediate_cmd && !icmd->tmf_acked &&
		    !cmd->se_cmd.se_tmr_req->call_transport) {
			icmd->tmf_acked = true;
			target_put_sess_cmd(&cmd->se_cmd);
		}
		iscsit_build_task_mgt_rsp(cmd, conn, (struct iscsi_tm_rsp *)bhs);
		return ist_send(icmd, bhs, NULL, NULL, 0);
	case ISTATE_SEND_REJECT:
		iscsit_build_reject(cmd, conn, (struct iscsi_reject *)bhs);
		/* the rejected PDU's header is the data segment */
		hton24(((struct iscsi_reject *)bhs)->dlength, ISCSI_HDR_LEN);
		return ist_send(icmd, bhs, NULL, cmd->buf_ptr, ISCSI_HDR_LEN);
	case ISTATE_SEND_TEXTRSP:
		/*
		 * LIO builds each part of a continued SendTargets response in
		 * a new buffer and points cmd->buf_ptr at it without freeing
		 * the previous part's (iscsit_build_sendtargets_response(),
		 * 6.1 and 6.12). That part's Send has completed (a
		 * continuation is taken only then: ist_text_settled()), so
		 * free it here, or every continuation leaks up to 32 KiB.
		 */
		kfree(cmd->buf_ptr);
		cmd->buf_ptr = NULL;
		ret = iscsit_build_text_rsp(cmd, conn,
					    (struct iscsi_text_rsp *)bhs,
					    ISCSI_INFINIBAND);
		if (ret < 0)
			return ret;
		return ist_send(icmd, bhs, NULL, cmd->buf_ptr, ret);
	case ISTATE_SEND_STATUS:
		return ist_queue_status(conn, cmd);
	case ISTATE_SEND_ASYNCMSG:
		return ist_put_async(icmd, conn);
	default:
		pr_err("unknown response state %d\n", state);
		return -EINVAL;
	}
}

void ist_aborted_task(struct iscsit_conn *conn, struct iscsit_cmd *cmd)
{
	struct ist_cmd *icmd = iscsit_priv_cmd(cmd);

	ist_abort_task_attr(&cmd->se_cmd);
	ist_unlink_cmd(conn, cmd);
	if (cmd->data_direction == DMA_TO_DEVICE)
		iscsit_stop_dataout_timer(cmd);
	ist_rw_destroy(icmd);
	/* the backend is done with it; no status will be sent */
	ist_rx_give_back(icmd);
	ist_scsi_answered(icmd);
}

/*
 * LIO frees a command itself (iscsit_free_cmd(): an ExpStatSN that
 * acknowledged it, the connection's teardown).
 */
void ist_unmap_cmd(struct iscsit_conn *conn, struct iscsit_cmd *cmd)
{
	ist_rx_give_back(iscsit_priv_cmd(cmd));
}

enum target_prot_op ist_get_sup_prot_ops(struct iscsit_conn *conn)
{
	/* T10-PI offload is not implemented: LIO handles PI in software */
	return TARGET_PROT_NORMAL;
}

/**
 * ist_put_unsol_pending_cmds() - drop commands still waiting for
 *	unsolicited Data-Out when the connection goes down
 * @conn: LIO's connection
 */
void ist_put_unsol_pending_cmds(struct iscsit_conn *conn)
{
	struct iscsit_cmd *cmd, *tmp;
	LIST_HEAD(drop);

	spin_lock_bh(&conn->cmd_lock);
	list_for_each_entry_safe(cmd, tmp, &conn->conn_cmd_list, i_conn_node) {
		/*
		 * One LIO dropped (a CmdSN out of the window) waits for its
		 * ISTATE_REMOVE in the immediate queue, which the stopped
		 * transmit thread will not serve, and one deferred for a
		 * CmdSN gap was never executed and is on the session's
		 * out-of-order list: ist_put_parked_cmds() frees both (with
		 * the reference of the acknowledgment, and off that list),
		 * and they must stay on the connection for that.
		 */
		if (cmd->i_state == ISTATE_REMOVE ||
		    cmd->i_state == ISTATE_DEFERRED_CMD)
			continue;
		if ((cmd->cmd_flags & ICF_NON_IMMEDIATE_UNSOLICITED_DATA) &&
		    cmd->write_data_done < conn->sess->sess_ops->FirstBurstLength &&
		    cmd->write_data_done < cmd->se_cmd.data_length)
			list_move_tail(&cmd->i_conn_node, &drop);
	}
	spin_unlock_bh(&conn->cmd_lock);

	list_for_each_entry_safe(cmd, tmp, &drop, i_conn_node) {
		list_del_init(&cmd->i_conn_node);
		ist_put_cmd(iscsit_priv_cmd(cmd), true);
	}
}

/*
 * A command of a closing connection is about to be freed: the session's
 * out-of-order CmdSN list, where LIO keeps one deferred for a CmdSN gap,
 * must not point to it any more.
 */
static void ist_ooo_forget(struct iscsit_session *sess,
			   struct iscsit_cmd *cmd)
{
	struct iscsi_ooo_cmdsn *ooo;

	mutex_lock(&sess->cmdsn_mutex);
	list_for_each_entry(ooo, &sess->sess_ooo_cmdsn_list, ooo_list)
		if (ooo->cmd == cmd)
			ooo->cmd = NULL;
	mutex_unlock(&sess->cmdsn_mutex);
}

/*
 * The next WRITE of a closing connection that a task management function
 * aborted while it waited for its data: marked, so that each is taken
 * once. Any other state (data on its way, a deferred command without an
 * abort) is not one.
 */
static struct iscsit_cmd *ist_next_aborted_write(struct iscsit_conn *conn)
{
	struct iscsit_cmd *cmd, *found = NULL;

	spin_lock_bh(&conn->cmd_lock);
	list_for_each_entry(cmd, &conn->conn_cmd_list, i_conn_node) {
		struct se_cmd *se_cmd = &cmd->se_cmd;
		struct ist_cmd *icmd = iscsit_priv_cmd(cmd);

		if (!se_cmd->se_tfo || icmd->abort_completed ||
		    cmd->i_state == ISTATE_REMOVE)
			continue;
		/*
		 * All its data is here and it was executed (by LIO, or by
		 * ist_rdma_read_done()): target_execute_cmd() found it
		 * aborted and queued LIO's abort work, which owns it. One
		 * deferred for a CmdSN gap was never executed.
		 */
		if ((cmd->cmd_flags & ICF_GOT_LAST_DATAOUT) &&
		    cmd->i_state != ISTATE_DEFERRED_CMD)
			continue;
		spin_lock_irq(&se_cmd->t_state_lock);
		if (se_cmd->t_state == TRANSPORT_WRITE_PENDING &&
		    (se_cmd->transport_state & CMD_T_ABORTED)) {
			/* no TASK ABORTED status on a connection that is gone */
			se_cmd->transport_state &= ~CMD_T_TAS;
			icmd->abort_completed = true;
			found = cmd;
		}
		spin_unlock_irq(&se_cmd->t_state_lock);
		if (found)
			break;
	}
	spin_unlock_bh(&conn->cmd_lock);
	return found;
}

/**
 * ist_complete_aborted_writes() - finish the aborted WRITEs of a closing
 *	connection whose data nobody will fetch
 * @conn: LIO's connection, its queues drained and its RDMA Reads stopped
 *
 * A WRITE that a LUN RESET or ABORT TASK aborts after LIO set it up
 * (TRANSPORT_WRITE_PENDING) but before LIO asked for its data is never
 * asked for it: LIO skips iscsit_get_dataout() for an aborted command,
 * and one deferred for a CmdSN gap never gets that far. The task
 * management function waits for it to be freed. LIO completes such
 * commands with TASK ABORTED in iscsit_release_commands_from_conn(), but
 * only after ist_wait_conn(), which waits for every command of the
 * connection first: without this, the function, the connection and the
 * session wait for each other for ever (found by iser_ffp -m random). Do
 * what LIO would, here: the abort path (ist_aborted_task()) then takes
 * the command off the connection and LIO frees it.
 */
void ist_complete_aborted_writes(struct iscsit_conn *conn)
{
	struct iscsit_session *sess = conn->sess;
	struct iscsit_cmd *cmd;

	/* in connection recovery LIO moves them to another connection */
	if (atomic_read(&conn->connection_recovery))
		return;

	while ((cmd = ist_next_aborted_write(conn))) {
		if (cmd->i_state == ISTATE_DEFERRED_CMD)
			ist_ooo_forget(sess, cmd);
		pr_info_ratelimited("connection from %pISpc: completing aborted WRITE ITT 0x%08x that waited for its data\n",
				    &((struct ist_conn *)conn->context)->src,
				    be32_to_cpu((__force __be32)cmd->init_task_tag));
		target_complete_cmd(&cmd->se_cmd, SAM_STAT_TASK_ABORTED);
	}
}

/*
 * A command LIO keeps on the connection that no one will finish once the
 * connection is down: deferred for a CmdSN gap that will never be filled,
 * or with a response in the queues of the transmit thread, which is the
 * one closing the connection (LIO queues a status other than GOOD, a
 * Reject and a TMF response there). LIO frees them in
 * iscsit_release_commands_from_conn(), but only after ist_wait_conn(),
 * and each holds a reference of the command counter that waits for them.
 */
static bool ist_cmd_parked(struct iscsit_cmd *cmd)
{
	return cmd->se_cmd.se_tfo &&
	       (cmd->i_state == ISTATE_DEFERRED_CMD ||
		atomic_read(&cmd->response_queue_count) ||
		atomic_read(&cmd->immed_queue_count));
}

/**
 * ist_log_waiting_cmds() - say which commands a closing connection waits for
 * @ic: our connection
 *
 * For ist_wait_conn() when its wait drags on: the first few commands LIO
 * still has on the connection, with their states.
 */
void ist_log_waiting_cmds(struct ist_conn *ic)
{
	struct iscsit_conn *conn = ic->conn;
	struct iscsit_cmd *cmd;
	unsigned int n = 0;

	spin_lock_bh(&conn->cmd_lock);
	list_for_each_entry(cmd, &conn->conn_cmd_list, i_conn_node) {
		if (n++ == 8)
			break;
		struct ist_cmd *icmd = iscsit_priv_cmd(cmd);

		pr_warn("connection from %pISpc: waiting for ITT 0x%08x opcode 0x%02x i_state %d t_state %d transport_state 0x%x cmd_flags 0x%x data %u/%u rdma rw_init %d need %u held %u waiting %d failed %d\n",
			&ic->src, be32_to_cpu((__force __be32)cmd->init_task_tag),
			cmd->iscsi_opcode, cmd->i_state, cmd->se_cmd.t_state,
			cmd->se_cmd.transport_state, cmd->cmd_flags,
			cmd->write_data_done, cmd->se_cmd.data_length,
			icmd->rw_init, icmd->rdma_need, icmd->rdma_held,
			icmd->rdma_waiting, icmd->rdma_failed);
		if (cmd->se_cmd.se_dev) {
			struct se_device *dev = cmd->se_cmd.se_dev;

			pr_warn("connection from %pISpc: ITT 0x%08x task attribute %d; its device: %d running, %d delayed, ordered command running %d\n",
				&ic->src,
				be32_to_cpu((__force __be32)cmd->init_task_tag),
				cmd->se_cmd.sam_task_attr,
				atomic_read(&dev->non_ordered),
				atomic_read(&dev->delayed_cmd_count),
				READ_ONCE(dev->ordered_sync_in_progress));
		}
	}
	spin_unlock_bh(&conn->cmd_lock);
	if (!n)
		pr_warn("connection from %pISpc: waiting for commands no longer on the connection\n",
			&ic->src);
}

/* Under @lock: move the orphaned Rejects of @queue to @drop. */
static void ist_take_orphan_rejects(struct iscsit_conn *conn,
				    struct list_head *queue, spinlock_t *lock,
				    struct list_head *drop)
{
	struct iscsi_queue_req *qr;

	spin_lock_bh(lock);
	list_for_each_entry(qr, queue, qr_list) {
		struct iscsit_cmd *cmd = qr->cmd;

		/* i_conn_node is free: it carries the command to @drop */
		spin_lock(&conn->cmd_lock);
		if (cmd->i_state == ISTATE_SEND_REJECT &&
		    list_empty(&cmd->i_conn_node))
			list_add_tail(&cmd->i_conn_node, drop);
		spin_unlock(&conn->cmd_lock);
	}
	spin_unlock_bh(lock);
}

/**
 * ist_put_orphan_rejects() - free the Rejects of a closing connection that
 *	only LIO's queues hold
 * @conn: LIO's connection, its transmit thread stopped
 *
 * LIO turns a Text Request or NOP-Out it refuses into a Reject without
 * putting it on the connection's command list (iscsit_reject_cmd()), and
 * returns the error that makes us close the connection. A Reject still
 * in the response queue when the transmit thread stops is then never
 * sent, and iscsit_free_queue_reqs_for_conn() frees the queue entry but
 * not the command: its copy of the header and the request's data leaked
 * with every such connection (kmemleak, iser_ffp -m random on the debug
 * kernel). Free them as iscsit_release_commands_from_conn() frees the
 * listed ones; iscsit_free_cmd() takes them off the queues.
 */
void ist_put_orphan_rejects(struct iscsit_conn *conn)
{
	struct iscsit_cmd *cmd, *tmp;
	LIST_HEAD(drop);

	ist_take_orphan_rejects(conn, &conn->response_queue_list,
				&conn->response_queue_lock, &drop);
	ist_take_orphan_rejects(conn, &conn->immed_queue_list,
				&conn->immed_queue_lock, &drop);
	list_for_each_entry_safe(cmd, tmp, &drop, i_conn_node) {
		list_del_init(&cmd->i_conn_node);
		iscsit_free_cmd(cmd, true);
	}
}

/**
 * ist_put_parked_cmds() - free the commands of a closing connection that
 *	nothing will complete (see ist_cmd_parked())
 * @conn: LIO's connection, its transmit thread stopped
 *
 * As iscsit_release_commands_from_conn() would: iscsit_free_cmd() takes
 * them off LIO's queues. Aborted ones are left to LIO's abort path.
 */
void ist_put_parked_cmds(struct iscsit_conn *conn)
{
	struct iscsit_session *sess = conn->sess;
	struct iscsit_cmd *cmd, *tmp;
	bool aborted;
	LIST_HEAD(drop);

	/* in connection recovery LIO moves them to another connection */
	if (atomic_read(&conn->connection_recovery))
		return;

	spin_lock_bh(&conn->cmd_lock);
	list_for_each_entry_safe(cmd, tmp, &conn->conn_cmd_list, i_conn_node) {
		if (!ist_cmd_parked(cmd))
			continue;
		spin_lock_irq(&cmd->se_cmd.t_state_lock);
		aborted = cmd->se_cmd.transport_state & CMD_T_ABORTED;
		spin_unlock_irq(&cmd->se_cmd.t_state_lock);
		if (!aborted)
			list_move_tail(&cmd->i_conn_node, &drop);
	}
	spin_unlock_bh(&conn->cmd_lock);
	if (list_empty(&drop))
		return;

	list_for_each_entry_safe(cmd, tmp, &drop, i_conn_node) {
		ist_ooo_forget(sess, cmd);
		list_del_init(&cmd->i_conn_node);
		ist_rw_destroy(ist_cmd_bind(conn, cmd));
		iscsit_free_cmd(cmd, true);
	}
}
