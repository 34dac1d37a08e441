// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: data through rdma_rw. A WRITE's data is pulled with RDMA
 * Reads, which wait on the connection's rdma_wait list while the send
 * queue has no room for them; a READ's data goes as RDMA Writes chained
 * in front of its SCSI Response.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <target/iscsi/iscsi_target_core.h>
#include <target/target_core_fabric.h>

#include "ist.h"

static void ist_rdma_read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ist_cmd *icmd = ist_cmd_of(wc->wr_cqe);
	struct ist_conn *ic = icmd->conn;
	struct iscsit_cmd *cmd = icmd->cmd;

	ist_rdma_unreserve(icmd);
	if (wc->status != IB_WC_SUCCESS) {
		ist_wc_failed(ic, wc, "RDMA Read");
		ist_put_cmd(icmd, true);
		return;
	}
	iscsit_stop_dataout_timer(cmd);
	if (ist_rw_read_done(icmd)) {
		ist_conn_fail(ic, "cannot split a protected WRITE's data",
			      -EINVAL);
		ist_put_cmd(icmd, true);
		return;
	}
	cmd->write_data_done = cmd->se_cmd.data_length;
	spin_lock_bh(&cmd->istate_lock);
	cmd->cmd_flags |= ICF_GOT_LAST_DATAOUT;
	cmd->i_state = ISTATE_RECEIVED_LAST_DATAOUT;
	spin_unlock_bh(&cmd->istate_lock);
	target_execute_cmd(&cmd->se_cmd);
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
		isdm_credits_give(&ic->rdma, icmd->rdma_held);
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

int ist_queue_data_in(struct iscsit_conn *conn, struct iscsit_cmd *cmd)
{
	struct ist_cmd *icmd = iscsit_priv_cmd(cmd);
	struct ist_conn *ic = conn->context;
	struct iscsi_scsi_rsp *hdr = ist_send_bhs(icmd);
	u64 remote;
	int ret;

	if (!icmd->stags.rsv)
		return -EINVAL;	/* isdm_check_cmd_stags() prevents this */
	if (!hdr)
		return -EIO;

	/* in the ring slot, where the Send reads it */
	iscsit_build_rsp_pdu(cmd, conn, true, hdr);
	ret = ist_build_send(icmd, hdr, &icmd->stags, NULL, 0);
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
