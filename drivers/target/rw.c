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

/*
 * The list a command's RDMA transfers use: LIO's data, or the bounce
 * buffer of a protected command, which holds the tuples too.
 */
static struct scatterlist *ist_rw_sgl(struct ist_cmd *icmd, u32 *nents)
{
	struct se_cmd *se_cmd = &icmd->cmd->se_cmd;

	if (icmd->pi_wire.sgl) {
		*nents = icmd->pi_wire.orig_nents;
		return icmd->pi_wire.sgl;
	}
	*nents = se_cmd->t_data_nents;
	return se_cmd->t_data_sg;
}

/* Destroy the rdma_rw context, which unmaps its list. */
static void ist_rw_ctx_destroy(struct ist_cmd *icmd)
{
	struct se_cmd *se_cmd = &icmd->cmd->se_cmd;
	struct ist_conn *ic = icmd->conn;
	struct scatterlist *sgl;
	u32 nents;

	if (!icmd->rw_init)
		return;
	sgl = ist_rw_sgl(icmd, &nents);
	rdma_rw_ctx_destroy(&icmd->rw, ic->base.q.qp, ic->base.cm_id->port_num,
			    sgl, nents, target_reverse_dma_direction(se_cmd));
	icmd->rw_init = false;
}

/**
 * ist_rw_destroy() - destroy a command's rdma_rw context
 * @icmd: the command
 *
 * Also takes the command off the connection's @rdma_wait list, and frees
 * a protected command's bounce buffer. A context that is not initialised
 * (or no longer) is left alone.
 */
void ist_rw_destroy(struct ist_cmd *icmd)
{
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
	ist_rw_ctx_destroy(icmd);
	ist_pi_wire_put(icmd);
}

/**
 * ist_rw_read_done() - end a WRITE's RDMA Reads: destroy the context and,
 *	for a protected command, split its data and tuples into LIO's lists
 * @icmd: the command, its RDMA Reads complete
 *
 * Return: 0, or -EINVAL when LIO's lists do not cover the transfer.
 */
int ist_rw_read_done(struct ist_cmd *icmd)
{
	int ret = 0;

	/* the CPU reads the bounce buffer only once it is unmapped */
	ist_rw_ctx_destroy(icmd);
	if (icmd->pi_wire.sgl)
		ret = ist_pi_split(icmd);
	ist_pi_wire_put(icmd);
	return ret;
}

/**
 * ist_rw_init() - rdma_rw_ctx_init() for the command's data
 * @icmd: the command
 * @offset: where in the command's data the transfer starts (0 for a
 *	protected command, whose whole transfer, tuples included, goes
 *	through its bounce buffer: LIO allows no unsolicited data with PI)
 * @remote: the remote address (the tagged offset with ZBVA)
 * @rkey: the initiator's STag
 * @dir: DMA_TO_DEVICE for RDMA Writes, DMA_FROM_DEVICE for RDMA Reads
 *
 * Return: 0, -EAGAIN when memory is short, -EINVAL for a protected
 * command with data already received, or -EMSGSIZE (the context
 * destroyed again) when the transfer needs more work requests than the
 * send queue can ever hold for RDMA (a huge EDTL), since no post of it
 * would ever fit.
 */
int ist_rw_init(struct ist_cmd *icmd, u32 offset, u64 remote, u32 rkey,
		enum dma_data_direction dir)
{
	struct se_cmd *se_cmd = &icmd->cmd->se_cmd;
	struct ist_conn *ic = icmd->conn;
	struct scatterlist *sgl;
	u32 nents;
	int ret;

	if (ist_pi_cmd(se_cmd)) {
		if (offset)
			return -EINVAL;
		ret = ist_pi_wire_get(icmd, dir);
		if (ret)
			return ret;
	}
	sgl = ist_rw_sgl(icmd, &nents);
	ret = rdma_rw_ctx_init(&icmd->rw, ic->base.q.qp,
			       ic->base.cm_id->port_num, sgl, nents, offset,
			       remote, rkey, dir);
	if (ret < 0) {
		ist_pi_wire_put(icmd);
		return ret == -ENOMEM ? -EAGAIN : ret;
	}
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
