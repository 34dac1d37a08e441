// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: LIO's callbacks for responses: the SCSI status, NOP-In,
 * Logout, task management, Reject, Text and Asynchronous Message
 * responses LIO queues, a command LIO drops from its immediate queue, an
 * aborted task, a command LIO frees itself, and the protection operations
 * the transport offers.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <target/iscsi/iscsi_target_core.h>
#include <target/target_core_fabric.h>

#include "isdm/compat.h"
#include "ist.h"

int ist_queue_status(struct iscsit_conn *conn, struct iscsit_cmd *cmd)
{
	struct ist_cmd *icmd = iscsit_priv_cmd(cmd);
	struct se_cmd *se_cmd = &cmd->se_cmd;
	struct iscsi_scsi_rsp *hdr = ist_send_bhs(icmd);
	void *data = NULL;
	u32 len = 0;

	if (!hdr)
		return -EIO;
	/* TASK ABORTED for an abort from another I_T nexus (TAS) */
	ist_abort_task_attr(se_cmd);
	/* the data is no longer read: the buffer is back before the status */
	ist_rx_give_back(icmd);
	/* in the ring slot, where the Send reads it */
	iscsit_build_rsp_pdu(cmd, conn, true, hdr);
	if (se_cmd->sense_buffer &&
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
	return ist_send(icmd, hdr, &icmd->stags, data, len);
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
	struct ist_cmd *icmd = iscsit_priv_cmd(cmd);

	ist_rx_give_back(icmd);
	/* not in the ITT hash once freed, answered or not */
	ist_scsi_answered(icmd);
}
