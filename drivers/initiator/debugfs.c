// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: /sys/kernel/debug/ib_iser/host<N>/conn: what the connection of
 * each SCSI host negotiated.
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <scsi/scsi_host.h>

#include "isi.h"

/* /sys/kernel/debug/ib_iser: one directory per SCSI host */
static struct dentry *isi_debugfs_root;

static int isi_conn_show(struct seq_file *m, void *unused)
{
	struct isi_host *ih = m->private;

	mutex_lock(&ih->lock);
	seq_printf(m, "state: %s\n", ih->up ? "up" : "down");
	seq_printf(m, "connections_started: %u\n", ih->starts);
	seq_printf(m, "protection: %s\n", ih->pi ?
		   "software (bounce in the wire layout), DIF types 1-3 with DIX, CRC guard" :
		   "off");
	if (ih->starts) {
		isdm_mode_show(m, &ih->mode);
		seq_printf(m, "ird: %u\n", ih->ird);
		seq_printf(m, "ord: %u\n", ih->ord);
		seq_printf(m, "ack_timeout: %u\n", ih->ack_timeout);
		seq_printf(m, "retry_count: %u\n", ih->retry_cnt);
		seq_printf(m, "max_io_bytes: %u\n", ih->max_io);
		seq_printf(m, "rx_buffers: %u\n", ih->nr_rx);
		seq_printf(m, "rx_buffer_bytes: %u\n", ISI_RX_SMALL);
		seq_printf(m, "rx_data_bytes: %u\n", ih->rx_data_max);
		seq_printf(m, "rx_spill_bytes: %u\n",
			   ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + ih->rx_data_max);
		seq_printf(m, "rx_spilled: %d\n",
			   atomic_read(&ih->rx_spilled));
		seq_printf(m, "bounce_held: %d\n",
			   atomic_read(&ih->bounce_held));
		seq_printf(m, "hello: %d\n", ih->hello);
		if (ih->hello)
			seq_printf(m, "hello_reply: version %u ord %u\n",
				   ih->hello_ver, ih->hello_ord);
	}
	mutex_unlock(&ih->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(isi_conn);

/**
 * isi_host_update() - record what @ic negotiated in its host's debugfs
 *	data
 * @ic: the connection
 * @conn: its iSCSI connection
 * @up: the connection starts (or stops)
 */
void isi_host_update(struct isi_conn *ic, struct iscsi_conn *conn,
		     bool up)
{
	struct Scsi_Host *shost = conn->session->host;
	struct isi_host *ih = iscsi_host_priv(shost);

	mutex_lock(&ih->lock);
	ih->up = up;
	if (up) {
		ih->starts++;
		ih->mode = ic->base.mode;
		ih->ird = ic->ird;
		ih->ord = ic->ord;
		ih->ack_timeout = ic->ack_timeout;
		ih->retry_cnt = ic->retry_cnt;
		ih->max_io = shost->max_sectors << SECTOR_SHIFT;
		ih->nr_rx = ic->nr_rx;
		ih->rx_data_max = ic->rx_data_max;
		ih->hello = ic->hello_state == ISI_HELLO_DONE;
		ih->hello_ord = ic->hello_res.ord;
		ih->hello_ver = ic->hello_res.cur_ver;
	}
	mutex_unlock(&ih->lock);
}

/**
 * isi_debugfs_host_add() - create the debugfs directory of a SCSI host
 * @ih: the host's data; @ih->dbg is set to the directory, which
 *	isi_session_destroy() removes
 * @host_no: the SCSI host's number
 */
void isi_debugfs_host_add(struct isi_host *ih, unsigned int host_no)
{
	char name[24];

	snprintf(name, sizeof(name), "host%u", host_no);
	ih->dbg = debugfs_create_dir(name, isi_debugfs_root);
	debugfs_create_file("conn", 0444, ih->dbg, ih, &isi_conn_fops);
}

/**
 * isi_debugfs_init() - create /sys/kernel/debug/ib_iser/
 */
void isi_debugfs_init(void)
{
	isi_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
}

/**
 * isi_debugfs_exit() - remove /sys/kernel/debug/ib_iser/
 */
void isi_debugfs_exit(void)
{
	debugfs_remove(isi_debugfs_root);
}
