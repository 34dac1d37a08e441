// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: /sys/kernel/debug/ib_isert/: what each connection negotiated,
 * and the counters of the session closes of teardown.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "ist.h"

static struct dentry *ist_debugfs_root;

static const char *ist_state_name(enum ist_conn_state state)
{
	switch (state) {
	case IST_CONN_ACCEPTED:
		return "accepted";
	case IST_CONN_PENDING:
		return "pending";
	case IST_CONN_BOUND:
		return "login";
	case IST_CONN_FULL_FEATURE:
		return "full-feature";
	case IST_CONN_TERMINATING:
		return "terminating";
	case IST_CONN_DOWN:
		return "down";
	}
	return "?";
}

/* where ist_conn_show() prints, and whether a block was printed yet */
struct ist_conns_seq {
	struct seq_file	*m;
	bool		first;
};

/* one block of "key: value" lines for one connection, under its lock */
static void ist_conn_show(struct isdm_conn *base, void *arg)
{
	struct ist_conn *ic = container_of(base, struct ist_conn, base);
	struct ist_conns_seq *v = arg;
	struct seq_file *m = v->m;

	mutex_lock(&ic->lock);
	if (!v->first)
		seq_putc(m, '\n');
	v->first = false;
	seq_printf(m, "peer: %pISpc\n", &ic->src);
	seq_printf(m, "state: %s\n", ist_state_name(ic->state));
	isdm_mode_show(m, &ic->base.mode);
	seq_printf(m, "ord: %u\n", ic->ord);
	seq_printf(m, "ack_timeout: %u\n", ic->ack_timeout);
	seq_printf(m, "retry_count: %u\n", ic->retry_cnt);
	seq_printf(m, "cq_entries: %u\n", ic->base.q.cq_size);
	seq_printf(m, "hellos: %u\n", READ_ONCE(ic->view.hellos));
	if (READ_ONCE(ic->view.hellos))
		seq_printf(m, "hello_reply: version %u%s\n",
			   READ_ONCE(ic->view.hello_ver),
			   READ_ONCE(ic->view.hello_rej) ?
			   ", rejected" : "");
	if (ic->state >= IST_CONN_FULL_FEATURE && ic->rx_ring.desc) {
		seq_printf(m, "session: %s\n", ic->view.discovery ?
			   "discovery" : "normal");
		seq_printf(m, "rx_buffers: %u\n", ic->rx_ring.nr);
		seq_printf(m, "rx_data_bytes: %u\n", ic->rx_max_data);
		seq_printf(m, "target_recv_dsl: %u\n",
			   ic->view.tgt_rdsl);
		seq_printf(m, "initiator_recv_dsl: %u\n",
			   ic->view.ini_rdsl);
		seq_printf(m, "max_xmit_dsl: %u\n", ic->view.max_xmit);
		seq_printf(m, "rx_held: %d\n",
			   atomic_read(&ic->rx_held));
		seq_printf(m, "imm_in_place: %ld\n",
			   atomic_long_read(&ic->imm_in_place));
		seq_printf(m, "unsignaled_sends: %ld\n",
			   atomic_long_read(&ic->unsignaled_sends));
		seq_printf(m, "unsignaled_held: %u\n",
			   ist_sends_unsignaled_held(ic));
	}
	mutex_unlock(&ic->lock);
}

/*
 * One block per connection, blank-line separated. A connection stays
 * registered with the core until its free work, so it can be read during
 * the core's walk; its fields under its own lock.
 */
static int ist_conns_show(struct seq_file *m, void *unused)
{
	struct ist_conns_seq v = { .m = m, .first = true };

	isdm_conns_walk(&ist_conn_ops, ist_conn_show, &v);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ist_conns);

/**
 * ist_debugfs_init() - create /sys/kernel/debug/ib_isert/
 *
 * connections: what each connection negotiated; closed_erl0 and
 * closed_no_timer: sessions whose last connection went and which this
 * module had LIO close at once, by falling back to ERL0 or without
 * starting the Time2Retain timer of a session being closed anyway (see
 * ist_close_session_now()); lio_abort_task_attr: what the first aborted
 * command showed of the target core (enum ist_abort_ta: 0 nothing yet, 1
 * the core skips the task-attribute bookkeeping of aborted commands and
 * this module does it, 2 the core does it). Without debugfs the view is
 * simply absent.
 */
void ist_debugfs_init(void)
{
	ist_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("connections", 0444, ist_debugfs_root, NULL,
			    &ist_conns_fops);
	debugfs_create_atomic_t("closed_erl0", 0444, ist_debugfs_root,
				&ist_erl0_closes);
	debugfs_create_atomic_t("closed_no_timer", 0444, ist_debugfs_root,
				&ist_t2r_skipped);
	debugfs_create_atomic_t("lio_abort_task_attr", 0444, ist_debugfs_root,
				&ist_abort_ta_mode);
}

/**
 * ist_debugfs_exit() - remove the view; waits for its readers
 */
void ist_debugfs_exit(void)
{
	debugfs_remove(ist_debugfs_root);
}
