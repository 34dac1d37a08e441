// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: the LIO iSER transport (ISCSI_INFINIBAND) on the iSER
 * datamover core. targetcli's "enable_iser true" makes LIO load this
 * module by name and call ist_setup_np() for the portal.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <target/iscsi/iscsi_target_core.h>

#include "ist.h"

struct workqueue_struct *ist_wq;	/* pre-login timer, release, free */
struct workqueue_struct *ist_comp_wq;	/* LIO post handlers of control PDUs */

struct iscsit_transport ist_transport = {
	.name			= "IB/iSER",
	.transport_type		= ISCSI_INFINIBAND,
	.rdma_shutdown		= true,
	.priv_size		= sizeof(struct ist_cmd),
	.owner			= THIS_MODULE,
	.iscsit_setup_np	= ist_setup_np,
	.iscsit_accept_np	= ist_accept_np,
	.iscsit_free_np		= ist_free_np,
	.iscsit_wait_conn	= ist_wait_conn,
	.iscsit_free_conn	= ist_lio_free_conn,
	.iscsit_get_login_rx	= ist_get_login_rx,
	.iscsit_put_login_tx	= ist_put_login_tx,
	.iscsit_immediate_queue	= ist_immediate_queue,
	.iscsit_response_queue	= ist_response_queue,
	.iscsit_get_dataout	= ist_get_dataout,
	.iscsit_queue_data_in	= ist_queue_data_in,
	.iscsit_queue_status	= ist_queue_status,
	.iscsit_aborted_task	= ist_aborted_task,
	.iscsit_unmap_cmd	= ist_unmap_cmd,
	.iscsit_get_rx_pdu	= ist_get_rx_pdu,
	.iscsit_get_sup_prot_ops = ist_get_sup_prot_ops,
};

static void ist_destroy_wqs(void)
{
	if (ist_comp_wq)
		destroy_workqueue(ist_comp_wq);
	if (ist_wq)
		destroy_workqueue(ist_wq);
}

static int __init ist_init(void)
{
	ist_wq = alloc_workqueue("ist_wq", WQ_UNBOUND, 0);
	ist_comp_wq = alloc_workqueue("ist_comp_wq", WQ_UNBOUND | WQ_HIGHPRI, 0);
	if (!ist_wq || !ist_comp_wq) {
		ist_destroy_wqs();
		return -ENOMEM;
	}
	ist_debugfs_init();
	iscsit_register_transport(&ist_transport);
	return 0;
}

static void __exit ist_exit(void)
{
	/* LIO holds a module reference for every portal, so none is left */
	iscsit_unregister_transport(&ist_transport);
	ist_debugfs_exit();
	flush_workqueue(ist_comp_wq);
	/* a release work's last put queues a free work: drain the chain */
	drain_workqueue(ist_wq);
	ist_destroy_wqs();
}

module_init(ist_init);
module_exit(ist_exit);

MODULE_DESCRIPTION("iSER target: the LIO ISCSI_INFINIBAND transport");
MODULE_VERSION(ISDM_VERSION);
MODULE_LICENSE("GPL");
