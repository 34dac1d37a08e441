// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: iSER initiator: the open-iscsi transport "iser" on the iSER
 * datamover core. The module, its parameter max_io_kb, the SCSI host
 * template with the fencing of its error handlers, sessions and the
 * iscsi_transport.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <scsi/scsi_host.h>

#include "isdm/compat.h"
#include "isi.h"

static unsigned int max_io_kb = ISI_MAX_IO_KB_DEF;

static int isi_max_io_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, ISI_MAX_IO_KB_MIN,
				     ISI_MAX_IO_KB_MAX);
}

static const struct kernel_param_ops isi_max_io_ops = {
	.set	= isi_max_io_set,
	.get	= param_get_uint,
};
module_param_cb(max_io_kb, &isi_max_io_ops, &max_io_kb, 0644);
MODULE_PARM_DESC(max_io_kb,
		 "largest transfer of one SCSI command in KiB (64-16384, default 512), bounded by the RDMA device; read when a session is created");

static struct scsi_transport_template *isi_scsi_transport;

static struct iscsi_transport isi_transport;

/*
 * After an error handler of libiscsi succeeded, tasks it ended without a
 * SCSI Response may have left their MRs valid; the midlayer frees their
 * buffers once we return, so invalidate those MRs first (isi_fr_fence()).
 * isi_conn_mutex keeps the connection from being freed: its release takes
 * the mutex before it frees, and only after the stop cleared dd_data.
 */
static void isi_eh_fence(struct scsi_cmnd *sc)
{
	struct iscsi_cls_session *cls_session =
		starget_to_session(scsi_target(sc->device));
	struct iscsi_session *session = cls_session->dd_data;
	struct isi_conn *ic = NULL;
	int ret = 0;

	mutex_lock(&isi_conn_mutex);
	spin_lock_bh(&session->frwd_lock);
	if (session->leadconn)
		ic = session->leadconn->dd_data;
	spin_unlock_bh(&session->frwd_lock);
	if (ic) {
		mutex_lock(&ic->lock);
		ret = isi_fr_fence(ic);
		mutex_unlock(&ic->lock);
	}
	mutex_unlock(&isi_conn_mutex);
	if (ret > 0)
		pr_info_ratelimited("error handling: invalidated %d MR(s) of tasks that ended without a response\n",
				    ret);
	else if (ret < 0)
		pr_err_ratelimited("error handling: invalidating the MRs of ended tasks failed: %d\n",
				   ret);
}

static int isi_eh_abort(struct scsi_cmnd *sc)
{
	int ret = iscsi_eh_abort(sc);

	if (ret == SUCCESS)
		isi_eh_fence(sc);
	return ret;
}

static int isi_eh_device_reset(struct scsi_cmnd *sc)
{
	int ret = iscsi_eh_device_reset(sc);

	if (ret == SUCCESS)
		isi_eh_fence(sc);
	return ret;
}

static int isi_eh_recover_target(struct scsi_cmnd *sc)
{
	int ret = iscsi_eh_recover_target(sc);

	if (ret == SUCCESS)
		isi_eh_fence(sc);
	return ret;
}

static ISDM_SHT_CONST struct scsi_host_template isi_sht = {
	.module			= THIS_MODULE,
	.name			= "iSCSI Initiator over iSER (ib_iser out-of-tree)",
	.proc_name		= "iscsi_iser",
	.queuecommand		= iscsi_queuecommand,
	.change_queue_depth	= scsi_change_queue_depth,
	/* per session from max_io_kb, see isi_session_create() */
	.sg_tablesize		= ISI_MAX_IO_KB_DEF / (SZ_4K / SZ_1K),
	.max_sectors		= ISI_MAX_IO_KB_DEF * (SZ_1K >> SECTOR_SHIFT),
	.cmd_per_lun		= ISI_CMDS_MAX,
	.eh_timed_out		= iscsi_eh_cmd_timed_out,
	.eh_abort_handler	= isi_eh_abort,
	.eh_device_reset_handler = isi_eh_device_reset,
	.eh_target_reset_handler = isi_eh_recover_target,
	.target_alloc		= iscsi_target_alloc,
	.this_id		= -1,
	.track_queue_depth	= 1,
	.cmd_size		= sizeof(struct iscsi_cmd),
};

static struct iscsi_cls_session *
isi_session_create(struct iscsi_endpoint *ep, u16 cmds_max, u16 qdepth,
		   u32 initial_cmdsn)
{
	struct iscsi_cls_session *cls_session;
	struct device *parent;
	struct Scsi_Host *shost;
	struct isi_host *ih;
	struct isi_conn *ic;
	u32 want, pages;
	int ret;

	if (!ep || !ep->dd_data) {
		pr_err_ratelimited("session without a connected endpoint\n");
		return NULL;
	}
	ic = ep->dd_data;
	want = READ_ONCE(max_io_kb);
	/* the device may be removed meanwhile: then the state is not UP */
	mutex_lock(&ic->lock);
	if (ic->state != ISI_UP) {
		mutex_unlock(&ic->lock);
		return NULL;
	}
	pages = isi_io_pages(ic->base.dev->ib_dev, want);
	if (pages * (SZ_4K / SZ_1K) < want)
		pr_info_ratelimited("max_io_kb %u: %s registers at most %u KiB per command\n",
				    want, dev_name(&ic->base.dev->ib_dev->dev),
				    pages * (SZ_4K / SZ_1K));
	mutex_unlock(&ic->lock);

	shost = iscsi_host_alloc(&isi_sht, sizeof(struct isi_host), 0);
	if (!shost)
		return NULL;
	ih = iscsi_host_priv(shost);
	mutex_init(&ih->lock);
	shost->transportt = isi_scsi_transport;
	shost->cmd_per_lun = qdepth;
	shost->max_lun = 512;
	shost->max_id = 0;
	shost->max_channel = 0;
	shost->max_cmd_len = ISI_CDB_MAX;
	/* chained scatterlists beyond SG_CHUNK_SIZE entries */
	shost->sg_tablesize = pages;
	shost->max_sectors = pages * (SZ_4K >> SECTOR_SHIFT);
	shost->can_queue = min_t(u16, cmds_max, ISI_CMDS_MAX);
	/* FRWR with IB_MR_TYPE_MEM_REG: every middle entry a whole page */
	shost->virt_boundary_mask = SZ_4K - 1;
	/*
	 * With protection information the MR holds a tuple per 512 bytes
	 * too: the data of a command is at most 512/520 of it, in 4 KiB
	 */
	ih->pi = isi_pi_host_setup(shost);
	if (ih->pi)
		shost->max_sectors = rounddown((u64)pages * SZ_4K * 512 / 520,
					       SZ_4K) >> SECTOR_SHIFT;

	/*
	 * The device's parent, held by a reference rather than by ic->lock:
	 * adding the host takes the transport class's
	 * attribute_container_mutex, which the removal of a connection's
	 * sysfs files holds while it waits for their readers, and those
	 * take ep_mutex, under which isi_conn_bind() takes ic->lock (a
	 * lockdep cycle). If the device goes away meanwhile, the host is
	 * added under a parent being removed, or fails to be; either way
	 * the connection is no longer UP and bind refuses it.
	 */
	mutex_lock(&ic->lock);
	if (ic->state != ISI_UP) {
		mutex_unlock(&ic->lock);
		goto free_host;
	}
	parent = get_device(ic->base.dev->ib_dev->dev.parent);
	mutex_unlock(&ic->lock);
	ret = iscsi_host_add(shost, parent);
	put_device(parent);
	if (ret)
		goto free_host;

	cls_session = iscsi_session_setup(&isi_transport, shost,
					  shost->can_queue, 0,
					  sizeof(struct isi_task),
					  initial_cmdsn, 0);
	if (!cls_session)
		goto remove_host;
	isi_debugfs_host_add(ih, shost->host_no);
	return cls_session;

remove_host:
	iscsi_host_remove(shost, false);
free_host:
	iscsi_host_free(shost);
	return NULL;
}

static void isi_session_destroy(struct iscsi_cls_session *cls_session)
{
	struct Scsi_Host *shost = iscsi_session_to_shost(cls_session);
	struct isi_host *ih = iscsi_host_priv(shost);

	/* waits for readers of the files */
	debugfs_remove(ih->dbg);
	iscsi_session_teardown(cls_session);
	isi_rx_spill_free(ih);
	iscsi_host_remove(shost, false);
	iscsi_host_free(shost);
}

static struct iscsi_cls_conn *isi_conn_create(struct iscsi_cls_session *sess,
					      u32 cid)
{
	return iscsi_conn_setup(sess, 0, cid);
}

static int isi_set_param(struct iscsi_cls_conn *cls_conn,
			 enum iscsi_param param, char *buf, int buflen)
{
	int value;

	switch (param) {
	case ISCSI_PARAM_HDRDGST_EN:
	case ISCSI_PARAM_DATADGST_EN:
	case ISCSI_PARAM_IFMARKER_EN:
	case ISCSI_PARAM_OFMARKER_EN:
		if (kstrtoint(buf, 10, &value) || value) {
			pr_err_ratelimited("parameter %d must be 0 with iSER\n",
					   param);
			return -EPROTO;
		}
		return 0;
	case ISCSI_PARAM_MAX_RECV_DLENGTH:
		if (kstrtoint(buf, 10, &value) || value < ISDM_RDSL_MIN ||
		    value > ISDM_RDSL_MAX)
			return -EINVAL;
		/*
		 * The target may send PDUs of what the initiator declared:
		 * a receive buffer holds at most ISI_RX_DATA_MAX.
		 */
		if (value > ISI_RX_DATA_MAX) {
			pr_err_ratelimited("MaxRecvDataSegmentLength %d is above the %d bytes ib_iser receives; configure at most %d\n",
					   value, ISI_RX_DATA_MAX,
					   ISI_RX_DATA_MAX);
			return -EINVAL;
		}
		return iscsi_set_param(cls_conn, param, buf, buflen);
	default:
		return iscsi_set_param(cls_conn, param, buf, buflen);
	}
}

static void isi_get_stats(struct iscsi_cls_conn *cls_conn,
			  struct iscsi_stats *stats)
{
	struct iscsi_conn *conn = cls_conn->dd_data;

	stats->txdata_octets = conn->txdata_octets;
	stats->rxdata_octets = conn->rxdata_octets;
	stats->scsicmd_pdus = conn->scsicmd_pdus_cnt;
	stats->dataout_pdus = conn->dataout_pdus_cnt;
	stats->scsirsp_pdus = conn->scsirsp_pdus_cnt;
	stats->datain_pdus = conn->datain_pdus_cnt;
	stats->r2t_pdus = conn->r2t_pdus_cnt;
	stats->tmfcmd_pdus = conn->tmfcmd_pdus_cnt;
	stats->tmfrsp_pdus = conn->tmfrsp_pdus_cnt;
	stats->custom_length = 0;
}

static umode_t isi_attr_is_visible(int param_type, int param)
{
	if (param_type == ISCSI_HOST_PARAM) {
		switch (param) {
		case ISCSI_HOST_PARAM_NETDEV_NAME:
		case ISCSI_HOST_PARAM_HWADDRESS:
		case ISCSI_HOST_PARAM_INITIATOR_NAME:
			return 0444;
		default:
			return 0;
		}
	}
	if (param_type != ISCSI_PARAM)
		return 0;
	switch (param) {
	case ISCSI_PARAM_MAX_RECV_DLENGTH:
	case ISCSI_PARAM_MAX_XMIT_DLENGTH:
	case ISCSI_PARAM_HDRDGST_EN:
	case ISCSI_PARAM_DATADGST_EN:
	case ISCSI_PARAM_CONN_ADDRESS:
	case ISCSI_PARAM_CONN_PORT:
	case ISCSI_PARAM_EXP_STATSN:
	case ISCSI_PARAM_PERSISTENT_ADDRESS:
	case ISCSI_PARAM_PERSISTENT_PORT:
	case ISCSI_PARAM_PING_TMO:
	case ISCSI_PARAM_RECV_TMO:
	case ISCSI_PARAM_INITIAL_R2T_EN:
	case ISCSI_PARAM_MAX_R2T:
	case ISCSI_PARAM_IMM_DATA_EN:
	case ISCSI_PARAM_FIRST_BURST:
	case ISCSI_PARAM_MAX_BURST:
	case ISCSI_PARAM_PDU_INORDER_EN:
	case ISCSI_PARAM_DATASEQ_INORDER_EN:
	case ISCSI_PARAM_TARGET_NAME:
	case ISCSI_PARAM_TPGT:
	case ISCSI_PARAM_USERNAME:
	case ISCSI_PARAM_PASSWORD:
	case ISCSI_PARAM_USERNAME_IN:
	case ISCSI_PARAM_PASSWORD_IN:
	case ISCSI_PARAM_FAST_ABORT:
	case ISCSI_PARAM_ABORT_TMO:
	case ISCSI_PARAM_LU_RESET_TMO:
	case ISCSI_PARAM_TGT_RESET_TMO:
	case ISCSI_PARAM_IFACE_NAME:
	case ISCSI_PARAM_INITIATOR_NAME:
	case ISCSI_PARAM_DISCOVERY_SESS:
		return 0444;
	default:
		return 0;
	}
}

static struct iscsi_transport isi_transport = {
	.owner			= THIS_MODULE,
	.name			= "iser",
	.caps			= CAP_RECOVERY_L0 | CAP_MULTI_R2T |
				  CAP_TEXT_NEGO,
	.create_session		= isi_session_create,
	.destroy_session	= isi_session_destroy,
	.create_conn		= isi_conn_create,
	.bind_conn		= isi_conn_bind,
	.unbind_conn		= iscsi_conn_unbind,
	.destroy_conn		= iscsi_conn_teardown,
	.attr_is_visible	= isi_attr_is_visible,
	.set_param		= isi_set_param,
	.get_conn_param		= iscsi_conn_get_param,
	.get_ep_param		= isi_get_ep_param,
	.get_session_param	= iscsi_session_get_param,
	.start_conn		= isi_conn_start,
	.stop_conn		= isi_conn_stop,
	.get_host_param		= iscsi_host_get_param,
	.set_host_param		= iscsi_host_set_param,
	.send_pdu		= iscsi_conn_send_pdu,
	.get_stats		= isi_get_stats,
	.init_task		= isi_init_task,
	.xmit_task		= isi_xmit_task,
	.cleanup_task		= isi_cleanup_task,
	.check_protection	= isi_check_protection,
	.alloc_pdu		= isi_alloc_pdu,
	.session_recovery_timedout = iscsi_session_recovery_timedout,
	.ep_connect		= isi_ep_connect,
	.ep_poll		= isi_ep_poll,
	.ep_disconnect		= isi_ep_disconnect,
};

static int __init isi_init(void)
{
	int ret;

	ret = isi_tx_init();
	if (ret)
		return ret;
	isi_debugfs_init();
	isi_release_wq = alloc_workqueue("isi_release", WQ_UNBOUND, 0);
	if (!isi_release_wq) {
		ret = -ENOMEM;
		goto tx_exit;
	}
	isi_scsi_transport = iscsi_register_transport(&isi_transport);
	if (!isi_scsi_transport) {
		pr_err("cannot register the iSCSI transport \"iser\" (is the in-tree ib_iser loaded?)\n");
		ret = -EEXIST;
		goto destroy_wq;
	}
	return 0;

destroy_wq:
	destroy_workqueue(isi_release_wq);
tx_exit:
	isi_debugfs_exit();
	isi_tx_exit();
	return ret;
}

static void __exit isi_exit(void)
{
	struct iscsi_endpoint *ep;
	struct isi_conn *ic;

	iscsi_unregister_transport(&isi_transport);
	destroy_workqueue(isi_release_wq);
	/*
	 * Endpoints iscsid never disconnected. An endpoint holds no
	 * reference on the module (a session does), so one that is still
	 * connected does not keep it loaded. It belongs to
	 * scsi_transport_iscsi, which outlives us: destroy it with its
	 * connection, or a later request for its handle would find dd_data
	 * pointing at the freed connection.
	 */
	for (;;) {
		mutex_lock(&isi_conn_mutex);
		ic = list_first_entry_or_null(&isi_conn_list, struct isi_conn,
					      entry);
		mutex_unlock(&isi_conn_mutex);
		if (!ic)
			break;
		mutex_lock(&ic->lock);
		isi_conn_terminate(ic);
		ep = ic->ep;
		ic->ep = NULL;
		mutex_unlock(&ic->lock);
		isi_conn_release(ic);
		if (ep) {
			ep->dd_data = NULL;
			iscsi_destroy_endpoint(ep);
		}
	}
	isi_debugfs_exit();
	isi_tx_exit();
}

module_init(isi_init);
module_exit(isi_exit);

MODULE_DESCRIPTION("iSER initiator: the open-iscsi transport \"iser\"");
MODULE_VERSION(ISDM_VERSION);
MODULE_LICENSE("GPL");
