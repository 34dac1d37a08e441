// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: a command's rdma_rw context (RDMA Reads of a WRITE's data,
 * RDMA Writes of a READ's), and the room its work requests take in the
 * send queue: a context is posted only when all its work requests fit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <target/iscsi/iscsi_target_core.h>
#include <target/target_core_fabric.h>

#include "ist.h"

/**
 * ist_rw_destroy() - destroy a command's rdma_rw context
 * @icmd: the command
 *
 * Also takes the command off the connection's @rdma_wait list. A context
 * that is not initialised (or no longer) is left alone.
 */
void ist_rw_destroy(struct ist_cmd *icmd)
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

/**
 * ist_rw_init() - rdma_rw_ctx_init() for the command's data
 * @icmd: the command
 * @offset: where in the command's data the transfer starts
 * @remote: the remote address (the tagged offset with ZBVA)
 * @rkey: the initiator's STag
 * @dir: DMA_TO_DEVICE for RDMA Writes, DMA_FROM_DEVICE for RDMA Reads
 *
 * Return: 0, -EAGAIN when memory is short, or -EMSGSIZE (the context
 * destroyed again) when the transfer needs more work requests than the
 * send queue can ever hold for RDMA (a huge EDTL), since no post of it
 * would ever fit.
 */
int ist_rw_init(struct ist_cmd *icmd, u32 offset, u64 remote, u32 rkey,
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
	if ((u32)ret > ic->rdma.size) {
		pr_warn_ratelimited("%pISpc: ITT 0x%08x: %u bytes need %d RDMA work requests, the send queue holds %u: command failed\n",
				    &ic->src, be32_to_cpu((__force __be32)icmd->cmd->init_task_tag),
				    se_cmd->data_length - offset, ret,
				    ic->rdma.size);
		ist_rw_destroy(icmd);
		return -EMSGSIZE;
	}
	return 0;
}

/**
 * ist_rdma_reserve() - take the send queue room @icmd's RDMA WRs need
 * @icmd: the command, its rdma_rw context initialised
 *
 * Return: false if it is not free.
 */
bool ist_rdma_reserve(struct ist_cmd *icmd)
{
	struct ist_conn *ic = icmd->conn;

	if (!isdm_credits_take(&ic->rdma, icmd->rdma_need))
		return false;
	icmd->rdma_held = icmd->rdma_need;
	return true;
}

/**
 * ist_rdma_unreserve() - give it back: its last WR completed, or the post
 *	failed
 * @icmd: the command; nothing happens when it holds no room
 *
 * Kicks the connection's @rdma_retry_work when RDMA Reads wait for room.
 */
void ist_rdma_unreserve(struct ist_cmd *icmd)
{
	struct ist_conn *ic = icmd->conn;

	if (!icmd->rdma_held)
		return;
	isdm_credits_give(&ic->rdma, icmd->rdma_held);
	icmd->rdma_held = 0;
	if (!list_empty_careful(&ic->rdma_wait))
		mod_delayed_work(ist_wq, &ic->rdma_retry_work, 0);
}
