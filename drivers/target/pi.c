// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: T10 protection information in software. A TPG with the
 * attribute t10_pi set offers LIO the pass-through operations; LIO then
 * keeps a protected command's data and tuples in two scatterlists, while
 * on the wire a tuple follows each protection interval
 * (Documentation/wire-protocol.md, section 8). Such a command's RDMA
 * transfers go through a bounce buffer in the wire layout: a READ's data
 * and tuples are merged into it before the RDMA Writes, a WRITE's are
 * split out of it after the RDMA Reads. LIO checks the tuples itself
 * (the backstore's pi_prot_verify).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <target/iscsi/iscsi_target_core.h>
#include <target/target_core_base.h>
#include <target/target_core_fabric.h>

#include "isdm/pi.h"
#include "ist.h"

/* what the transport does for a TPG with t10_pi: the wire carries PI */
#define IST_PI_OPS	(TARGET_PROT_DIN_PASS | TARGET_PROT_DOUT_PASS)

enum target_prot_op ist_get_sup_prot_ops(struct iscsit_conn *conn)
{
	struct ist_conn *ic = conn->context;

	if (!conn->tpg || !conn->tpg->tpg_attrib.t10_pi)
		return TARGET_PROT_NORMAL;
	pr_info_ratelimited("%pISpc: T10 protection information carried in software (TPG attribute t10_pi)\n",
			    &ic->src);
	return IST_PI_OPS;
}

/**
 * ist_pi_cmd() - whether a command's data crosses the wire with its tuples
 * @se_cmd: the command, its CDB parsed by LIO
 */
bool ist_pi_cmd(const struct se_cmd *se_cmd)
{
	return se_cmd->prot_op & IST_PI_OPS;
}

static u32 ist_pi_interval(const struct se_cmd *se_cmd)
{
	return se_cmd->se_dev->dev_attrib.block_size;
}

/**
 * ist_pi_check_cmd() - check a protected command's transfer length
 * @ic: the connection
 * @cmd: the command, set up by LIO
 * @edtl: the Expected Data Transfer Length of its SCSI Command
 *
 * LIO takes the data length from the CDB and the tuples' from the LUN,
 * whatever the initiator put in the EDTL. The EDTL must be that data with
 * one tuple per interval of the LUN's block size: otherwise the initiator
 * lays the stream out another way (another interval, no tuples), and
 * splitting it would hand LIO wrong data. Such a command is refused
 * before any of its data moves: CHECK CONDITION, INVALID FIELD IN CDB,
 * through LIO's own path for a CDB it refuses (the connection stays).
 *
 * Return: 0, or -EPROTO, logged.
 */
int ist_pi_check_cmd(struct ist_conn *ic, struct iscsit_cmd *cmd, u32 edtl)
{
	struct se_cmd *se_cmd = &cmd->se_cmd;
	u32 interval = ist_pi_interval(se_cmd), data_len;

	if (!isdm_pi_data_len(edtl, interval, &data_len) &&
	    data_len == se_cmd->data_length &&
	    (u64)data_len + se_cmd->prot_length == edtl)
		return 0;
	pr_err_ratelimited("connection from %pISpc: protected SCSI command ITT 0x%08x: EDTL %u is not %u bytes of data with a tuple per %u-byte block (%u bytes); refused\n",
			   &ic->src, be32_to_cpu((__force __be32)cmd->init_task_tag),
			   edtl, se_cmd->data_length, interval,
			   se_cmd->data_length + se_cmd->prot_length);
	return -EPROTO;
}

/**
 * ist_pi_wire_get() - the bounce buffer of a protected command's transfer
 * @icmd: the command; ist_pi_cmd() is true for it
 * @dir: DMA_TO_DEVICE for RDMA Writes (a READ: data and tuples are merged
 *	into the buffer), DMA_FROM_DEVICE for RDMA Reads (a WRITE)
 *
 * A buffer from an earlier try (the send queue was full) is used again.
 * Context: may run in a CQ's work: no sleep.
 *
 * Return: 0; -EAGAIN when memory is short; -EINVAL when LIO's lists do
 * not cover the transfer.
 */
int ist_pi_wire_get(struct ist_cmd *icmd, enum dma_data_direction dir)
{
	struct se_cmd *se_cmd = &icmd->cmd->se_cmd;
	u32 len = se_cmd->data_length + se_cmd->prot_length;
	struct isdm_pi_xfer x = { };
	int ret;

	if (icmd->pi_wire.sgl)
		return 0;
	if (isdm_bounce_alloc(&icmd->pi_wire, len, GFP_NOWAIT))
		return -EAGAIN;
	if (dir != DMA_TO_DEVICE)
		return 0;
	x.interval = ist_pi_interval(se_cmd);
	ret = isdm_pi_copy(icmd->pi_wire.sgl, se_cmd->t_data_sg,
			   se_cmd->t_prot_sg, len, true, &x);
	if (ret)
		ist_pi_wire_put(icmd);
	return ret;
}

/**
 * ist_pi_split() - hand a WRITE's data and tuples to LIO
 * @icmd: the command, its RDMA Reads complete
 *
 * Return: 0, or -EINVAL when LIO's lists do not cover the transfer.
 */
int ist_pi_split(struct ist_cmd *icmd)
{
	struct se_cmd *se_cmd = &icmd->cmd->se_cmd;
	struct isdm_pi_xfer x = { .interval = ist_pi_interval(se_cmd) };

	return isdm_pi_copy(icmd->pi_wire.sgl, se_cmd->t_data_sg,
			    se_cmd->t_prot_sg,
			    se_cmd->data_length + se_cmd->prot_length, false,
			    &x);
}

/**
 * ist_pi_wire_put() - free the bounce buffer
 * @icmd: the command; nothing happens when it has none
 */
void ist_pi_wire_put(struct ist_cmd *icmd)
{
	isdm_bounce_free(&icmd->pi_wire);
}
