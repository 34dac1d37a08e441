// SPDX-License-Identifier: GPL-2.0
/*
 * Per-device objects and device removal for the iSER datamover core.
 *
 * All connections on one RDMA device share one &struct isdm_device (and so
 * one PD). The objects live in a list under isdm_dev_mutex; a reference
 * is taken per connection. The core's ib_client turns device removal into
 * one call per registered ULP, which starts releasing everything it holds
 * on that device, and then waits until every reference is gone.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "isdm/isdm.h"
#include "core.h"

static LIST_HEAD(isdm_dev_list);
static DEFINE_MUTEX(isdm_dev_mutex);	/* protects isdm_dev_list */

static LIST_HEAD(isdm_ulp_list);
static DEFINE_MUTEX(isdm_ulp_mutex);	/* isdm_ulp_list, isdm_ulp.users */
static DECLARE_WAIT_QUEUE_HEAD(isdm_ulp_wq);	/* a ULP's users went to 0 */

/* a device being removed: isdm_device_get() refuses it */
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
	/*
	 * With fast registration we can place an MR at any I/O virtual
	 * address (so at zero for ZBVA) and the peer may invalidate it.
	 */
	dev->caps.zbva = true;
	dev->caps.send_inv = true;
	return dev;
}

/**
 * isdm_device_get() - find or create the core's object for an RDMA device
 * @ib_dev: the device a connection resolved to
 *
 * Context: process context; takes isdm_dev_mutex.
 * Return: the object with a reference held for the caller, or an ERR_PTR
 * (-ENODEV for a device being removed, -EOPNOTSUPP for a device without
 * fast registration, -ENOMEM, or the error of ib_alloc_pd()).
 */
struct isdm_device *isdm_device_get(struct ib_device *ib_dev)
{
	struct isdm_device *dev;

	mutex_lock(&isdm_dev_mutex);
	if (isdm_removing(ib_dev)) {
		dev = ERR_PTR(-ENODEV);
		goto out;
	}
	list_for_each_entry(dev, &isdm_dev_list, entry) {
		if (dev->ib_dev == ib_dev && kref_get_unless_zero(&dev->ref))
			goto out;
	}
	dev = isdm_device_create(ib_dev);
	if (!IS_ERR(dev))
		list_add(&dev->entry, &isdm_dev_list);
out:
	mutex_unlock(&isdm_dev_mutex);
	return dev;
}
EXPORT_SYMBOL_GPL(isdm_device_get);

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
 * isdm_device_put() - drop a reference taken by isdm_device_get()
 * @dev: the object; freed with its PD when this was the last reference
 *
 * Context: process context; may take isdm_dev_mutex.
 */
void isdm_device_put(struct isdm_device *dev)
{
	kref_put_mutex(&dev->ref, isdm_device_release, &isdm_dev_mutex);
}
EXPORT_SYMBOL_GPL(isdm_device_put);

/**
 * isdm_register_ulp() - bind an initiator or target module to the core
 * @ulp: its description; must stay valid until isdm_unregister_ulp()
 *
 * Return: 0, or -EINVAL when @ulp lacks a remove_device callback.
 */
int isdm_register_ulp(struct isdm_ulp *ulp)
{
	if (!ulp->name || !ulp->remove_device)
		return -EINVAL;
	ulp->users = 0;
	mutex_lock(&isdm_ulp_mutex);
	list_add_tail(&ulp->entry, &isdm_ulp_list);
	mutex_unlock(&isdm_ulp_mutex);
	pr_info("%s bound to the datamover core\n", ulp->name);
	return 0;
}
EXPORT_SYMBOL_GPL(isdm_register_ulp);

/**
 * isdm_unregister_ulp() - unbind a module registered with isdm_register_ulp()
 * @ulp: the same description
 *
 * Waits for a device removal that is running @ulp's callback. The caller
 * must have released every &struct isdm_device it held.
 */
void isdm_unregister_ulp(struct isdm_ulp *ulp)
{
	mutex_lock(&isdm_ulp_mutex);
	while (ulp->users) {
		mutex_unlock(&isdm_ulp_mutex);
		wait_event(isdm_ulp_wq, !READ_ONCE(ulp->users));
		mutex_lock(&isdm_ulp_mutex);
	}
	list_del(&ulp->entry);
	mutex_unlock(&isdm_ulp_mutex);
}
EXPORT_SYMBOL_GPL(isdm_unregister_ulp);

static int isdm_ib_add(struct ib_device *ib_dev)
{
	/* objects are created on first use by a connection */
	return 0;
}

/*
 * Each ULP's callback, without isdm_ulp_mutex held across it (a callback
 * may wait for work that registers or looks up things); the ULP's users
 * count keeps isdm_unregister_ulp() from returning meanwhile, and keeps
 * the ULP in the list, so the walk can go on from it.
 */
static void isdm_ulps_remove_device(struct ib_device *ib_dev)
{
	struct isdm_ulp *ulp;

	mutex_lock(&isdm_ulp_mutex);
	list_for_each_entry(ulp, &isdm_ulp_list, entry) {
		ulp->users++;
		mutex_unlock(&isdm_ulp_mutex);
		ulp->remove_device(ib_dev);
		mutex_lock(&isdm_ulp_mutex);
		if (!--ulp->users)
			wake_up_all(&isdm_ulp_wq);
	}
	mutex_unlock(&isdm_ulp_mutex);
}

/*
 * The device is going away: from now on nobody gets it, the ULPs close
 * what runs on it, and we wait until the last reference has gone and the
 * PD is freed. Nothing of ours may outlive this function, so there is no
 * time limit: a ULP must not need userspace to let go.
 */
static void isdm_ib_remove(struct ib_device *ib_dev, void *client_data)
{
	DECLARE_COMPLETION_ONSTACK(gone);
	struct isdm_removal removal = { .ib_dev = ib_dev };
	struct isdm_device *dev, *found = NULL;

	mutex_lock(&isdm_dev_mutex);
	list_add(&removal.entry, &isdm_removals);
	/* every object in the list has a reference: none is being freed */
	list_for_each_entry(dev, &isdm_dev_list, entry) {
		if (dev->ib_dev == ib_dev) {
			dev->gone = &gone;
			found = dev;
		}
	}
	mutex_unlock(&isdm_dev_mutex);

	isdm_ulps_remove_device(ib_dev);
	if (found) {
		pr_info("%s removed: waiting for its connections to let go\n",
			dev_name(&ib_dev->dev));
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
