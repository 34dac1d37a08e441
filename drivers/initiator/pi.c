// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: T10 protection information in software (module parameter
 * pi_enable). A host registers DIF types 1 to 3 with DIX and the CRC
 * guard; sd then protects the LUNs whose target reports PROT_EN, which an
 * LIO target does only when its transport carries PI. On the wire a tuple
 * follows each protection interval (Documentation/wire-protocol.md,
 * section 8), so a protected command's data goes through a bounce buffer
 * in that layout, registered as one MR:
 *
 *   WRITE_PASS   the block layer's data and tuples merged into it
 *   WRITE_INSERT the data, with tuples made here (no DIX buffer)
 *   READ_PASS    split into data and tuples when the response arrives
 *   READ_STRIP   the data only, each tuple checked as sd asks, then dropped
 *
 * The device's signature offload, where there is one, is not used.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/t10-pi.h>
#include <scsi/scsi_cmnd.h>
#include <scsi/scsi_host.h>

#include "isdm/pi.h"
#include "isi.h"

static bool pi_enable;
module_param(pi_enable, bool, 0644);
MODULE_PARM_DESC(pi_enable,
		 "carry T10 protection information (DIF types 1-3 with DIX, CRC guard) in software, on any RDMA device; read when a session is created (default N)");

/**
 * isi_pi_host_setup() - register the protection a new host carries
 * @shost: the host, not added yet
 *
 * Return: true when it carries PI: then its largest command must leave
 * room in its MR for a tuple per 512 bytes.
 */
bool isi_pi_host_setup(struct Scsi_Host *shost)
{
	if (!READ_ONCE(pi_enable))
		return false;
	scsi_host_set_prot(shost, SHOST_DIF_TYPE1_PROTECTION |
			   SHOST_DIF_TYPE2_PROTECTION |
			   SHOST_DIF_TYPE3_PROTECTION |
			   SHOST_DIX_TYPE1_PROTECTION |
			   SHOST_DIX_TYPE2_PROTECTION |
			   SHOST_DIX_TYPE3_PROTECTION);
	scsi_host_set_guard(shost, SHOST_DIX_GUARD_CRC);
	shost->sg_prot_tablesize = shost->sg_tablesize;
	return true;
}

/**
 * isi_pi_cmd() - whether a command's data crosses the wire with tuples
 * @sc: the command
 */
bool isi_pi_cmd(struct scsi_cmnd *sc)
{
	return scsi_get_prot_op(sc) != SCSI_PROT_NORMAL;
}

/* The protection list a command has, or NULL for INSERT and STRIP. */
static struct scatterlist *isi_pi_prot_sg(struct scsi_cmnd *sc)
{
	switch (scsi_get_prot_op(sc)) {
	case SCSI_PROT_READ_PASS:
	case SCSI_PROT_WRITE_PASS:
		return scsi_prot_sglist(sc);
	default:
		return NULL;
	}
}

static void isi_pi_xfer_init(struct scsi_cmnd *sc, struct isdm_pi_xfer *x)
{
	x->interval = scsi_prot_interval(sc);
	x->type = scsi_get_prot_type(sc);
	x->ref = t10_pi_ref_tag(scsi_cmd_to_rq(sc));
	x->checks = 0;
	if (sc->prot_flags & SCSI_PROT_GUARD_CHECK)
		x->checks |= ISDM_PI_CHECK_GUARD;
	if (sc->prot_flags & SCSI_PROT_REF_CHECK)
		x->checks |= ISDM_PI_CHECK_REF;
	x->bad = 0;
}

/**
 * isi_pi_bounce() - the bounce buffer of a protected command
 * @it: the task's data, @it->dir set
 * @sc: its command; isi_pi_cmd() is true for it
 *
 * A WRITE's data and tuples are laid out in it for the wire. Nothing is
 * mapped or posted.
 *
 * Return: 0; -ENOMEM (libiscsi sends the command later); -EINVAL for an
 * operation the host did not register (DIX without DIF), or lists that
 * do not cover the transfer.
 */
int isi_pi_bounce(struct isi_task *it, struct scsi_cmnd *sc)
{
	u32 len = scsi_transfer_length(sc);
	struct isdm_pi_xfer x;
	int ret;

	switch (scsi_get_prot_op(sc)) {
	case SCSI_PROT_READ_PASS:
	case SCSI_PROT_READ_STRIP:
	case SCSI_PROT_WRITE_PASS:
	case SCSI_PROT_WRITE_INSERT:
		break;
	default:
		return -EINVAL;
	}
	if (!(sc->prot_flags & SCSI_PROT_TRANSFER_PI))
		return -EINVAL;
	ret = isdm_bounce_alloc(&it->bounce, len, GFP_ATOMIC);
	if (ret)
		return ret;
	if (it->dir == DMA_TO_DEVICE) {
		isi_pi_xfer_init(sc, &x);
		ret = isdm_pi_copy(it->bounce.sgl, scsi_sglist(sc),
				   isi_pi_prot_sg(sc), len, true, &x);
		if (ret) {
			isdm_bounce_free(&it->bounce);
			return -EINVAL;
		}
	}
	it->pi = true;
	it->sgl = it->bounce.sgl;
	it->sg_count = it->bounce.orig_nents;
	return 0;
}

/**
 * isi_check_protection() - libiscsi's check of a protected command when
 *	its SCSI Response arrives
 * @task: the task
 * @sector: set to the first sector whose tuple failed
 *
 * libiscsi calls this before it looks at the response's status. For a
 * READ whose response is GOOD, it hands the data (and for READ_PASS the
 * tuples) to the command, checking and dropping each tuple for
 * READ_STRIP. A READ that failed keeps the target's status and sense; a
 * WRITE's tuples are the target's to check.
 *
 * Return: 0, or the ASCQ of ASC 10h: 01h for a guard, 03h for a
 * reference tag that does not match, and 01h when the stream cannot be
 * split or a GOOD response reports a residual (the buffer is not all
 * filled: nothing of it is trusted).
 */
u8 isi_check_protection(struct iscsi_task *task, sector_t *sector)
{
	struct isi_task *it = task->dd_data;
	struct isi_conn *ic = task->conn->dd_data;
	struct scsi_cmnd *sc = task->sc;
	struct ib_device *ib_dev;
	struct isdm_pi_xfer x;
	int ret;

	/* a failed command's status is the target's to report */
	if (!it->pi || it->dir != DMA_FROM_DEVICE || it->pi_split ||
	    !it->rsp_good)
		return 0;
	if (it->rsp_resid) {
		pr_err_ratelimited("%s: protected READ with a residual: its data is not used\n",
				   dev_name(&sc->device->sdev_gendev));
		*sector = blk_rq_pos(scsi_cmd_to_rq(sc));
		return 0x01;
	}
	ib_dev = ic->base.dev->ib_dev;
	if (it->nents && !ib_uses_virt_dma(ib_dev))
		dma_sync_sg_for_cpu(ib_dev->dma_device, it->sgl, it->sg_count,
				    DMA_FROM_DEVICE);
	isi_pi_xfer_init(sc, &x);
	ret = isdm_pi_copy(it->bounce.sgl, scsi_sglist(sc), isi_pi_prot_sg(sc),
			   scsi_transfer_length(sc), false, &x);
	it->pi_split = true;
	if (!ret)
		return 0;
	*sector = blk_rq_pos(scsi_cmd_to_rq(sc)) +
		  ((sector_t)x.bad << (ilog2(x.interval) - SECTOR_SHIFT));
	pr_err_ratelimited("%s: READ at sector %llu: %s (%d) in the data from the target\n",
			   dev_name(&sc->device->sdev_gendev),
			   (unsigned long long)*sector,
			   ret == ISDM_PI_REF ? "reference tag mismatch" :
			   ret == ISDM_PI_GUARD ? "guard mismatch" :
			   "protection information that does not split",
			   ret);
	return ret == ISDM_PI_REF ? 0x03 : 0x01;
}
