// SPDX-License-Identifier: GPL-2.0
/*
 * Per-device objects, the registry of connections on each device, and
 * device removal for the iSER datamover core.
 *
 * All connections on one RDMA device share one &struct isdm_device (and so
 * one PD). The objects live in a list under isdm_dev_mutex. A connection
 * attaches to its device in one step that takes a reference and enters the
 * device's registry (isdm_conn_attach()), so every holder of a reference
 * is known by name. The core's ib_client turns device removal into one
 * callback per attached connection, each of which starts releasing what it
 * holds on the device, and then waits until every reference is gone.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "isdm/isdm.h"
#include "core.h"

static LIST_HEAD(isdm_dev_list);
/*
 * protects isdm_dev_list, each device's conns and the connections'
 * dev_entry and notifier; taken after a side's connection lock, never
 * held across a side's callback
 */
static DEFINE_MUTEX(isdm_dev_mutex);
/* a device_removed callback returned */
static DECLARE_WAIT_QUEUE_HEAD(isdm_notify_wq);

/* a device being removed: isdm_conn_attach() refuses it */
struct isdm_removal {
	struct list_head	entry;
	struct ib_device	*ib_dev;
};

static LIST_HEAD(isdm_removals);	/* under isdm_dev_mutex */

static bool isdm_removing(struct ib_device *ib_dev)
{
	struct isdm_removal *r;

	lockdep_assert_held(&isdm_dev_mutex);
	list_for_each_entry(r, &isdm_removals, entry)
		if (r->ib_dev == ib_dev)
			return true;
	return false;
}

static struct isdm_device *isdm_device_create(struct ib_device *ib_dev)
{
	struct isdm_device *dev;
	bool frwr;

	frwr = ib_dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS;
	if (!frwr) {
		pr_info_ratelimited("%s: no fast registration, not usable for iSER\n",
				    dev_name(&ib_dev->dev));
		return ERR_PTR(-EOPNOTSUPP);
	}

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	dev->pd = ib_alloc_pd(ib_dev, 0);
	if (IS_ERR(dev->pd)) {
		struct ib_pd *pd = dev->pd;

		kfree(dev);
		return ERR_CAST(pd);
	}
	dev->ib_dev = ib_dev;
	kref_init(&dev->ref);
	INIT_LIST_HEAD(&dev->conns);
	/*
	 * With fast registration we can place an MR at any I/O virtual
	 * address (so at zero for ZBVA) and the peer may invalidate it.
	 */
	dev->caps.zbva = true;
	dev->caps.send_inv = true;
	return dev;
}

/* Find or create the object of @ib_dev, with a reference for the caller. */
static struct isdm_device *isdm_device_get(struct ib_device *ib_dev)
{
	struct isdm_device *dev;

	lockdep_assert_held(&isdm_dev_mutex);
	if (isdm_removing(ib_dev))
		return ERR_PTR(-ENODEV);
	list_for_each_entry(dev, &isdm_dev_list, entry) {
		if (dev->ib_dev == ib_dev && kref_get_unless_zero(&dev->ref))
			return dev;
	}
	dev = isdm_device_create(ib_dev);
	if (!IS_ERR(dev))
		list_add(&dev->entry, &isdm_dev_list);
	return dev;
}

static void isdm_device_release(struct kref *ref)
{
	struct isdm_device *dev = container_of(ref, struct isdm_device, ref);
	struct completion *gone = dev->gone;

	/* kref_put_mutex() calls us with isdm_dev_mutex held */
	list_del(&dev->entry);
	mutex_unlock(&isdm_dev_mutex);
	ib_dealloc_pd(dev->pd);
	kfree(dev);
	if (gone)
		complete(gone);
}

/**
 * isdm_conn_attach() - find or create the core's object for the device a
 *	connection resolved to, and register the connection with it
 * @conn: the connection, not attached yet
 * @ib_dev: its rdma_cm id's device
 * @ops: the side's callbacks; must stay valid while @conn is attached
 *
 * Taking the reference and entering the registry is one step under the
 * core's device mutex, so a device removal either sees the connection or
 * has already made this call fail: no connection can hold the device
 * unseen by the removal.
 *
 * Context: process context; may be called with the side's connection lock
 * held (it takes the core's device mutex).
 * Return: 0 with @conn->dev set, or -EALREADY when it is attached
 * already, -ENODEV for a device being removed,
 * -EOPNOTSUPP for a device without fast registration, -ENOMEM, or the
 * error of ib_alloc_pd().
 */
int isdm_conn_attach(struct isdm_conn *conn, struct ib_device *ib_dev,
		     const struct isdm_conn_ops *ops)
{
	struct isdm_device *dev;

	if (conn->dev)
		return -EALREADY;
	mutex_lock(&isdm_dev_mutex);
	dev = isdm_device_get(ib_dev);
	if (!IS_ERR(dev)) {
		conn->ops = ops;
		conn->notifier = NULL;
		list_add_tail(&conn->dev_entry, &dev->conns);
		conn->dev = dev;
	}
	mutex_unlock(&isdm_dev_mutex);
	return PTR_ERR_OR_ZERO(dev);
}
EXPORT_SYMBOL_GPL(isdm_conn_attach);

/**
 * isdm_conn_unregister() - take a connection out of its device's registry
 * @conn: the connection; attached, detached or never attached
 *
 * From its return on, the core does not call @conn's device_removed
 * callback; a call that runs in another task is waited for. The side calls
 * this before it frees the connection, and before it releases what the
 * callback would release, so that the two never run at once. Called from
 * the callback itself, it does not wait. Idempotent.
 *
 * Context: process context; takes the core's device mutex and may sleep.
 */
void isdm_conn_unregister(struct isdm_conn *conn)
{
	if (!conn->dev && !READ_ONCE(conn->notifier))
		return;
	mutex_lock(&isdm_dev_mutex);
	if (conn->dev)
		list_del_init(&conn->dev_entry);
	while (conn->notifier && conn->notifier != current) {
		mutex_unlock(&isdm_dev_mutex);
		wait_event(isdm_notify_wq, !READ_ONCE(conn->notifier));
		mutex_lock(&isdm_dev_mutex);
	}
	mutex_unlock(&isdm_dev_mutex);
}
EXPORT_SYMBOL_GPL(isdm_conn_unregister);

/**
 * isdm_conn_detach() - unregister a connection and drop its device
 * @conn: the connection; it holds no resource on the device any more
 *
 * Unregisters @conn (isdm_conn_unregister()), then drops its reference;
 * the last one frees the device's PD. Sets @conn->dev to NULL: the caller
 * makes sure nothing else reads it meanwhile. Idempotent.
 *
 * Context: process context; may sleep.
 */
void isdm_conn_detach(struct isdm_conn *conn)
{
	struct isdm_device *dev = conn->dev;

	if (!dev)
		return;
	isdm_conn_unregister(conn);
	conn->dev = NULL;
	kref_put_mutex(&dev->ref, isdm_device_release, &isdm_dev_mutex);
}
EXPORT_SYMBOL_GPL(isdm_conn_detach);

/**
 * isdm_conns_walk() - call a function for each registered connection of
 *	one side
 * @ops: the side's callbacks, as given to isdm_conn_attach()
 * @fn: called for each connection registered with @ops, under the core's
 *	device mutex: it may take the side's connection lock, and must not
 *	attach, unregister or detach a connection
 * @arg: passed to @fn
 *
 * For views such as debugfs: a connection stays valid while registered.
 */
void isdm_conns_walk(const struct isdm_conn_ops *ops,
		     void (*fn)(struct isdm_conn *conn, void *arg), void *arg)
{
	struct isdm_device *dev;
	struct isdm_conn *conn;

	mutex_lock(&isdm_dev_mutex);
	list_for_each_entry(dev, &isdm_dev_list, entry)
		list_for_each_entry(conn, &dev->conns, dev_entry)
			if (conn->ops == ops)
				fn(conn, arg);
	mutex_unlock(&isdm_dev_mutex);
}
EXPORT_SYMBOL_GPL(isdm_conns_walk);

static int isdm_ib_add(struct ib_device *ib_dev)
{
	/* objects are created on first use by a connection */
	return 0;
}

/*
 * The device is going away: from now on no connection attaches to it,
 * each attached one is told, and we wait until the last reference has
 * gone and the PD is freed. The callbacks run one at a time without the
 * mutex; a connection is taken off the list before its call, so one that
 * unregisters meanwhile is simply not called, and one whose call runs is
 * kept alive by isdm_conn_unregister() waiting for it. Nothing of ours may
 * outlive this function, so there is no time limit: a side must not need
 * userspace to let go.
 */
static void isdm_ib_remove(struct ib_device *ib_dev, void *client_data)
{
	DECLARE_COMPLETION_ONSTACK(gone);
	struct isdm_removal removal = { .ib_dev = ib_dev };
	struct isdm_device *dev, *found = NULL;
	struct isdm_conn *conn;
	unsigned int n = 0;
	LIST_HEAD(todo);

	mutex_lock(&isdm_dev_mutex);
	list_add(&removal.entry, &isdm_removals);
	/* every object in the list has a reference: none is being freed */
	list_for_each_entry(dev, &isdm_dev_list, entry) {
		if (dev->ib_dev == ib_dev) {
			dev->gone = &gone;
			found = dev;
			list_splice_tail_init(&dev->conns, &todo);
		}
	}
	while ((conn = list_first_entry_or_null(&todo, struct isdm_conn,
						dev_entry))) {
		list_del_init(&conn->dev_entry);
		conn->notifier = current;
		mutex_unlock(&isdm_dev_mutex);
		conn->ops->device_removed(conn);
		n++;
		mutex_lock(&isdm_dev_mutex);
		WRITE_ONCE(conn->notifier, NULL);
		wake_up_all(&isdm_notify_wq);
	}
	mutex_unlock(&isdm_dev_mutex);

	if (found) {
		pr_info("%s removed: %u connection(s) closing, waiting for them to let go\n",
			dev_name(&ib_dev->dev), n);
		wait_for_completion(&gone);
	}
	pr_info("%s removed: released\n", dev_name(&ib_dev->dev));

	mutex_lock(&isdm_dev_mutex);
	list_del(&removal.entry);
	mutex_unlock(&isdm_dev_mutex);
}

static struct ib_client isdm_ib_client = {
	.name	= "iser_dm",
	.add	= isdm_ib_add,
	.remove	= isdm_ib_remove,
};

int isdm_device_init(void)
{
	return ib_register_client(&isdm_ib_client);
}

void isdm_device_exit(void)
{
	ib_unregister_client(&isdm_ib_client);
}
