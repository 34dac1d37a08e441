// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: received full-feature messages: the iSER Hello, then iSCSI
 * PDUs. Received PDUs are validated by the wire layer and handed to LIO;
 * their receive buffer is reposted at once, except that of a WRITE whose
 * data all came as immediate data: LIO uses that data in place, and the
 * buffer is reposted when the status goes out.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <target/iscsi/iscsi_target_core.h>
#include <target/target_core_fabric.h>

#include "ist.h"

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

	if (ist_itt_waiting(ic, hdr->itt)) {
		pr_err_ratelimited("connection from %pISpc: SCSI command with ITT 0x%08x, the tag of a command still waiting for its response; closing\n",
				   &ic->src, be32_to_cpu((__force __be32)hdr->itt));
		return -EPROTO;
	}
	cmd = ist_alloc_cmd(ic);
	if (!cmd)
		return -ENOMEM;
	icmd = iscsit_priv_cmd(cmd);
	icmd->stags = pdu->stags;

	rc = iscsit_setup_scsi_cmd(conn, cmd, bhs);
	if (rc < 0)
		return 0;	/* LIO rejected it and owns the command */
	ist_scsi_wait(icmd);
	/* LIO answers it with CHECK CONDITION, as a CDB it refuses itself */
	if (!cmd->sense_reason && ist_pi_cmd(&cmd->se_cmd) &&
	    ist_pi_check_cmd(ic, cmd, be32_to_cpu(hdr->data_length)))
		cmd->sense_reason = TCM_INVALID_CDB_FIELD;

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
	 * Reject copies it): LIO gets a copy. Any other buffer is reposted
	 * by the caller, after this.
	 */
	if (*kept) {
		memcpy(bhs_copy, bhs, ISCSI_HDR_LEN);
		hdr = (struct iscsi_scsi_req *)bhs_copy;
	}
	rc = iscsit_sequence_cmd(conn, cmd, (unsigned char *)hdr, hdr->cmdsn);
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
		ist_wc_failed(ic, wc, "HelloReply send");
	else if (ic->hello_reply.flags & ISDM_HELLO_REPLY_REJ)
		ist_conn_fail(ic, "iSER Hello rejected", -EPROTO);
}

/* RFC 5046 5.1.3: answer a Hello with a HelloReply. */
static int ist_handle_hello(struct ist_conn *ic, const void *buf, u32 len)
{
	struct isdm_hello_result res;
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
	isdm_hello_reply_build(&ic->hello_reply, &res);
	ret = isdm_hello_post(&ic->base, &ic->hello_tx, &ic->hello_reply,
			      sizeof(ic->hello_reply), ist_hello_send_done);
	if (ret)
		return ret;
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
 * Runs in process context (IB_POLL_WORKQUEUE), one completion of the CQ
 * at a time; nothing here sleeps, the CQ is shared with other
 * connections. Every error tears the connection down through LIO.
 */
void ist_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ist_conn *ic = wc->qp->qp_context;
	struct isdm_rx_desc *rx = container_of(wc->wr_cqe, struct isdm_rx_desc,
					       cqe);

	if (wc->status != IB_WC_SUCCESS) {
		ist_wc_failed(ic, wc, "receive");
		return;
	}
	ist_rx_process(ic, rx, wc->byte_len);
}

/**
 * ist_rx_process() - process one received full-feature message
 * @ic: the connection
 * @rx: the receive buffer
 * @len: bytes received in it
 *
 * One full-feature message of @len bytes in @rx: from ist_recv_done(), or
 * from ist_send_done() for a Text continuation that arrived before the
 * previous part's Send completion (ist_handle_text()). Both run in the
 * connection's CQ context, one at a time.
 */
void ist_rx_process(struct ist_conn *ic, struct isdm_rx_desc *rx,
		    u32 len)
{
	struct isdm_rx_spec spec = {
		.peer		= &ic->src,
		.role		= ISDM_ROLE_TARGET,
		.phase		= ISDM_PHASE_FFP,
		.max_data	= ic->rx_max_data,
		.ahs		= true,	/* LIO parses it unchecked */
		.reject		= true,
	};
	struct isdm_rx_pdu pdu;
	bool first, kept = false;
	int ret;

	/* LIO would execute what follows a failure on a dying connection */
	if (ic->hello_refused || !isdm_rx_begin(&ic->base, rx))
		return;

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

	ret = isdm_rx_check(&ic->base, rx->buf, len, &spec, &pdu);
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
	if (ret)
		goto fail;
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
