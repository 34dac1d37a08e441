// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: our part of an LIO command (&struct ist_cmd): binding it to a
 * command LIO allocated, allocating one for a received PDU, the receive
 * buffer a WRITE holds for its immediate data, and giving the command
 * back to LIO once its last Send completed (ist_put_cmd()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <target/iscsi/iscsi_target_core.h>
#include <target/target_core_fabric.h>

#include "ist.h"

/**
 * ist_cmd_of() - the command of a Send or RDMA Read completion
 * @cqe: the completion's @wr_cqe: the command's @tx.cqe
 *
 * Return: the command.
 */
struct ist_cmd *ist_cmd_of(struct ib_cqe *cqe)
{
	return container_of(cqe, struct ist_cmd, tx.cqe);
}

/**
 * ist_cmd_bind() - our part of a command LIO hands to the transport
 * @conn: LIO's connection
 * @cmd: the command
 *
 * Commands LIO allocates itself (NOP-In pings from its nopin timer) reach
 * the transport without our part filled in; bind them on first sight.
 *
 * Return: our part of @cmd.
 */
struct ist_cmd *ist_cmd_bind(struct iscsit_conn *conn,
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

/**
 * ist_alloc_cmd() - allocate an LIO command for a received PDU
 * @ic: the connection
 *
 * Our part is bound at once: the connection and the Send slot of the
 * command's tag.
 *
 * Never waits for a tag: receives complete on a CQ the connection shares
 * with others, and a handler asleep there stops them all. The session's
 * tags are twice its command window and more, so a peer that runs out of
 * them holds responses it does not take (a Send in RNR retry holds its
 * command's tag until it goes out): the caller fails the connection.
 *
 * Context: the CQ's completion handler; does not sleep.
 * Return: the command, or NULL when every tag of the session is held.
 */
struct iscsit_cmd *ist_alloc_cmd(struct ist_conn *ic)
{
	struct iscsit_cmd *cmd;
	struct ist_cmd *icmd;

	cmd = iscsit_allocate_cmd(ic->conn, TASK_RUNNING);
	if (!cmd) {
		pr_err_ratelimited("connection from %pISpc: every command tag of the session is held by a response the initiator has not taken; closing\n",
				   &ic->src);
		return NULL;
	}
	icmd = iscsit_priv_cmd(cmd);
	icmd->conn = ic;
	icmd->cmd = cmd;
	isdm_tx_ring_slot(&ic->tx_ring, &icmd->tx, cmd->se_cmd.map_tag);
	return cmd;
}

static struct hlist_head *ist_itt_bucket(struct ist_conn *ic, itt_t itt)
{
	return &ic->itt_hash[hash_32((__force u32)itt, IST_ITT_HASH_BITS)];
}

/**
 * ist_itt_waiting() - whether a SCSI command of @ic with @itt waits for
 *	its response
 * @ic: the connection
 * @itt: an Initiator Task Tag, as received
 *
 * RFC 7143 11.2.1.8 makes the ITT unique in the session while its task
 * lives, and one connection is all an iSER session has here. A command
 * whose response is posted no longer counts: the initiator may have it
 * already and use its tag again.
 *
 * Context: any (takes @ic->itt_lock with interrupts off).
 * Return: true when such a command is in @ic's @itt_hash.
 */
bool ist_itt_waiting(struct ist_conn *ic, itt_t itt)
{
	struct ist_cmd *icmd;
	unsigned long flags;
	bool found = false;

	spin_lock_irqsave(&ic->itt_lock, flags);
	hlist_for_each_entry(icmd, ist_itt_bucket(ic, itt), itt_node) {
		if (icmd->cmd->init_task_tag == itt) {
			found = true;
			break;
		}
	}
	spin_unlock_irqrestore(&ic->itt_lock, flags);
	return found;
}

/**
 * ist_scsi_wait() - count a SCSI command as waiting for its response
 * @icmd: the command, LIO's setup done (its ITT is set)
 *
 * Context: any.
 */
void ist_scsi_wait(struct ist_cmd *icmd)
{
	struct ist_conn *ic = icmd->conn;
	unsigned long flags;

	spin_lock_irqsave(&ic->itt_lock, flags);
	if (!icmd->scsi_waiting) {
		icmd->scsi_waiting = true;
		atomic_inc(&ic->scsi_waiting);
		hlist_add_head(&icmd->itt_node,
			       ist_itt_bucket(ic, icmd->cmd->init_task_tag));
	}
	spin_unlock_irqrestore(&ic->itt_lock, flags);
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
void ist_rx_give_back(struct ist_cmd *icmd)
{
	struct isdm_rx_desc *rx = xchg(&icmd->rx_held, NULL);
	struct ist_conn *ic = icmd->conn;
	int ret;

	if (!rx)
		return;
	atomic_dec(&ic->rx_held);
	if (isdm_conn_failed(&ic->base))
		return;
	ret = isdm_rx_post(ic->base.q.qp, ic->base.dev, rx);
	if (ret)
		ist_conn_fail(ic, "cannot repost a receive buffer", ret);
}

/**
 * ist_scsi_answered() - take a SCSI command off its connection's
 *	@scsi_waiting count and @itt_hash
 * @icmd: the command
 *
 * A SCSI command the connection received no longer waits for its
 * response: it is being sent, or the command ended without one.
 *
 * Context: any.
 * Return: true when this call took it off the count (once per command).
 */
bool ist_scsi_answered(struct ist_cmd *icmd)
{
	struct ist_conn *ic = icmd->conn;
	unsigned long flags;
	bool was;

	/* a command LIO allocated itself has no connection and never waits */
	if (!READ_ONCE(icmd->scsi_waiting))
		return false;
	spin_lock_irqsave(&ic->itt_lock, flags);
	was = icmd->scsi_waiting;
	if (was) {
		icmd->scsi_waiting = false;
		atomic_dec(&ic->scsi_waiting);
		hlist_del_init(&icmd->itt_node);
	}
	spin_unlock_irqrestore(&ic->itt_lock, flags);
	return was;
}

/**
 * ist_unlink_cmd() - take a command off LIO's command list of a connection
 * @conn: LIO's connection
 * @cmd: the command; nothing happens when it is not listed
 */
void ist_unlink_cmd(struct iscsit_conn *conn, struct iscsit_cmd *cmd)
{
	spin_lock_bh(&conn->cmd_lock);
	if (!list_empty(&cmd->i_conn_node))
		list_del_init(&cmd->i_conn_node);
	spin_unlock_bh(&conn->cmd_lock);
}

/**
 * ist_text_continues() - a Text Response with the C bit
 * @icmd: the command
 *
 * Return: true when @icmd's Send is a Text Response with the C bit: its
 * command waits for the next request.
 */
bool ist_text_continues(struct ist_cmd *icmd)
{
	const struct iscsi_text_rsp *hdr;

	if (icmd->cmd->iscsi_opcode != ISCSI_OP_TEXT)
		return false;
	hdr = isdm_tx_bhs(&icmd->tx);
	return hdr->flags & ISCSI_FLAG_TEXT_CONTINUE;
}

/**
 * ist_put_cmd() - give a command back to LIO once its last Send completed
 * @icmd: the command
 * @comp_err: it ends in error: its Send or RDMA Read failed, or it ends
 *	without a response (LIO dropped it, the connection's teardown)
 *
 * The command leaves the connection's list before it is marked
 * ISTATE_SENT_STATUS: in a session without RDMAExtensions=Yes (LIO
 * negotiates No for every discovery session, iSER ones included) each
 * ExpStatSN that arrives makes LIO free the commands it finds on that list
 * in that state (iscsit_ack_from_expstatsn()), and a command marked first
 * and unlinked after was freed twice when a PDU came in between.
 */
void ist_put_cmd(struct ist_cmd *icmd, bool comp_err)
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
