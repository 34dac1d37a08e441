// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: work-arounds for LIO's core (6.1 and 6.12). An aborted command
 * keeps its place in its LUN's task order unless the transport releases
 * it; and when a connection closes, some of its commands are left to
 * iscsit_release_commands_from_conn(), which LIO runs only after
 * ist_wait_conn() has waited for them: WRITEs aborted while they waited
 * for their data, unsolicited ones short of their data, commands deferred
 * for a CmdSN gap or parked in the stopped transmit thread's queues, and
 * Rejects only those queues hold. These complete or free them as LIO
 * would, and log what a close still waits for.
 *
 * Each work-around, the LIO code it compensates and the change to LIO
 * that would make it unnecessary. "Kernels": 6.1 is checked against the
 * Debian 6.1 source; for 6.12 nothing here is version-dependent (no
 * compat.h test), the fields used exist in its headers, and the LIO paths
 * are assumed unchanged: not checked against 6.12's source, except where
 * a run-time check decides.
 *
 * ist_abort_task_attr()
 *	compensates: target_handle_abort() (target_core_transport.c), which
 *	completes an aborted command without transport_complete_task_attr()
 *	kernels: 6.1 (source), 6.12 (observed): decided at run time from
 *	the first such command (debugfs lio_abort_task_attr)
 *	removed by: target_handle_abort() releasing the task attribute of a
 *	command that holds one (SCF_TASK_ATTR_SET)
 * ist_put_unsol_pending_cmds()
 *	compensates: iscsit_close_connection() (iscsi_target.c), which
 *	calls iscsit_wait_conn before iscsit_release_commands_from_conn();
 *	a command waiting for unsolicited Data-Out never ends by itself
 *	kernels: 6.1 (source), 6.12 (unverified)
 *	removed by: releasing such commands before iscsit_wait_conn
 * ist_complete_aborted_writes()
 *	compensates: iscsit_execute_cmd() (iscsi_target_erl1.c) skipping
 *	iscsit_get_dataout for an aborted WRITE, whose TASK ABORTED
 *	completion iscsit_release_commands_from_conn() gives only after
 *	iscsit_wait_conn
 *	kernels: 6.1 (source), 6.12 (unverified)
 *	removed by: completing aborted WRITE_PENDING commands before
 *	iscsit_wait_conn
 * ist_put_parked_cmds()
 *	compensates: the same order in iscsit_close_connection(): commands
 *	deferred for a CmdSN gap, or with a response in the queues of the
 *	transmit thread that is closing the connection, are freed only
 *	after iscsit_wait_conn
 *	kernels: 6.1 (source), 6.12 (unverified)
 *	removed by: iscsit_close_connection() freeing them (and clearing
 *	their out-of-order CmdSN entries) before iscsit_wait_conn
 * ist_put_orphan_rejects()
 *	compensates: iscsit_reject_cmd() (iscsi_target.c), which queues a
 *	Reject without adding it to the connection's command list, and
 *	iscsit_free_queue_reqs_for_conn() (iscsi_target_util.c), which
 *	frees the queue entry but not the command
 *	kernels: 6.1 (source), 6.12 (unverified)
 *	removed by: iscsit_reject_cmd() adding the Reject to the list, or
 *	iscsit_free_queue_reqs_for_conn() freeing unlisted commands
 * ist_log_waiting_cmds()
 *	a diagnostic, not a work-around: what a close still waits for
 *
 * Other work-arounds for LIO live with the code they belong to: the
 * session close that keeps LIO's Time2Retain timer out of softirq
 * context (ist_close_session_now(), teardown.c), the acknowledgment
 * reference of a TMF LIO answers itself and the SendTargets part LIO
 * does not free (ist_response_queue(), lio.c), and LIO's Data-Out timer
 * stopped once data comes by RDMA Read (ist_get_dataout(), rdma.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <target/iscsi/iscsi_target_core.h>
#include <target/target_core_backend.h>
#include <target/target_core_fabric.h>

#include "ist.h"

/* what LIO's core does with an aborted command's task attribute */
atomic_t ist_abort_ta_mode = ATOMIC_INIT(IST_ABORT_TA_UNKNOWN);

/* the bookkeeping transport_complete_task_attr() does, once per command */
static void ist_release_task_attr(struct se_cmd *se_cmd)
{
	struct se_device *dev = se_cmd->se_dev;

	if (!(se_cmd->se_cmd_flags & SCF_TASK_ATTR_SET))
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

/*
 * What LIO's core did with @se_cmd, which it let go of (only our
 * reference is left): its task-attribute flag still set means it skipped
 * the bookkeeping; so does an ORDERED command's LUN still marked as
 * running an ORDERED command (only this one could have set that, and only
 * its completion clears it), should a core clear the mark without the flag.
 */
static enum ist_abort_ta ist_abort_ta_seen(struct se_cmd *se_cmd)
{
	struct se_device *dev = se_cmd->se_dev;
	bool ordered_left;

	if (!(se_cmd->se_cmd_flags & SCF_TASK_ATTR_SET))
		return IST_ABORT_TA_LIO_DOES;
	if (se_cmd->sam_task_attr != TCM_ORDERED_TAG)
		return IST_ABORT_TA_LIO_SKIPS;
	spin_lock(&dev->delayed_cmd_lock);
	ordered_left = dev->ordered_sync_in_progress;
	spin_unlock(&dev->delayed_cmd_lock);
	return ordered_left ? IST_ABORT_TA_LIO_SKIPS : IST_ABORT_TA_LIO_DOES;
}

static void ist_abort_ta_watch(struct work_struct *work)
{
	struct ist_cmd *icmd = container_of(to_delayed_work(work),
					    struct ist_cmd, abort_ta_work);
	struct se_cmd *se_cmd = &icmd->cmd->se_cmd;
	enum ist_abort_ta seen;

	if (kref_read(&se_cmd->cmd_kref) > 1) {
		if (time_before(jiffies, icmd->abort_ta_until)) {
			queue_delayed_work(ist_wq, &icmd->abort_ta_work, 1);
			return;
		}
		/* still held: nothing learned, the flag decides as before */
		ist_release_task_attr(se_cmd);
		target_put_sess_cmd(se_cmd);
		return;
	}
	seen = ist_abort_ta_seen(se_cmd);
	if (atomic_cmpxchg(&ist_abort_ta_mode, IST_ABORT_TA_UNKNOWN, seen) ==
	    IST_ABORT_TA_UNKNOWN)
		pr_info("the target core %s the task-attribute bookkeeping of aborted commands: ib_isert %s\n",
			seen == IST_ABORT_TA_LIO_DOES ? "does" : "skips",
			seen == IST_ABORT_TA_LIO_DOES ? "leaves it to the core" :
							"does it");
	if (seen == IST_ABORT_TA_LIO_SKIPS)
		ist_release_task_attr(se_cmd);
	else
		se_cmd->se_cmd_flags &= ~SCF_TASK_ATTR_SET;
	target_put_sess_cmd(se_cmd);
}

/**
 * ist_abort_task_attr() - release an aborted command's place in its LUN's
 *	task order
 * @se_cmd: the command; nothing happens unless it was aborted and still
 *	holds its place
 *
 * LIO's core completes an aborted command (target_abort_work()) without
 * transport_complete_task_attr(), which it runs for every other
 * completion: a SIMPLE or HEAD OF QUEUE command that ran leaves the LUN's
 * count of running commands one too high, an ORDERED one leaves its
 * ordered_sync_in_progress set, and from then on an ORDERED command on that
 * LUN, and every command behind it, waits on its delayed list for ever
 * (6.1 and 6.12).
 * The abort reaches the transport only here (ist_aborted_task(), or a
 * TASK ABORTED status when the abort came from another I_T nexus).
 *
 * A core that does the bookkeeping itself (a stable update may) would
 * have it done twice, by a decrement of a count that is not ours: an
 * ORDERED command would then run beside SIMPLE ones. So the running core
 * is asked, not its version: the first such command is held (a reference
 * of ours) and looked at once the core let go of it (ist_abort_ta_seen());
 * from then on the answer (ist_abort_ta_mode) decides at once for every
 * command. The bookkeeping is done once (SCF_TASK_ATTR_SET says it is
 * still owed).
 */
void ist_abort_task_attr(struct se_cmd *se_cmd)
{
	struct iscsit_cmd *cmd = container_of(se_cmd, struct iscsit_cmd,
					      se_cmd);
	struct ist_cmd *icmd = iscsit_priv_cmd(cmd);

	if (!se_cmd->se_dev || !(se_cmd->transport_state & CMD_T_ABORTED) ||
	    !(se_cmd->se_cmd_flags & SCF_TASK_ATTR_SET))
		return;
	switch (atomic_read(&ist_abort_ta_mode)) {
	case IST_ABORT_TA_LIO_DOES:
		return;
	case IST_ABORT_TA_LIO_SKIPS:
		ist_release_task_attr(se_cmd);
		return;
	default:
		break;
	}
	if (icmd->abort_ta_watched || !icmd->cmd ||
	    !kref_get_unless_zero(&se_cmd->cmd_kref)) {
		ist_release_task_attr(se_cmd);
		return;
	}
	icmd->abort_ta_watched = true;
	icmd->abort_ta_until = jiffies + IST_ABORT_TA_WATCH;
	INIT_DELAYED_WORK(&icmd->abort_ta_work, ist_abort_ta_watch);
	queue_delayed_work(ist_wq, &icmd->abort_ta_work, 1);
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
 * session wait for each other for ever. Do
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
 * with every such connection. Free them as iscsit_release_commands_from_conn() frees the
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
