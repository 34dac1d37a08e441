/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The iSER datamover core (iser_dm.ko): what the initiator (ib_iser.ko) and
 * the target (ib_isert.ko) share. Kernel only; the wire format and its pure
 * functions are in isdm/iser_wire.h.
 */
#ifndef ISDM_ISDM_H
#define ISDM_ISDM_H

#include <linux/kref.h>
#include <linux/list.h>
#include <rdma/ib_verbs.h>

#include "isdm/iser_wire.h"

/**
 * struct isdm_device - one RDMA device as the datamover uses it
 * @ib_dev: the device
 * @pd: protection domain shared by every connection on the device
 * @ref: one reference per user; the last put frees the object
 * @entry: in the core's device list, under its mutex
 * @caps: what the device lets us offer in the Annex A12 exchange
 *
 * Found or created by isdm_device_get(), so all connections on one device
 * share the PD. Device removal is handled by the core's ib_client, which
 * asks every registered ULP to let go of the device.
 */
struct isdm_device {
	struct ib_device	*ib_dev;
	struct ib_pd		*pd;
	struct kref		ref;
	struct list_head	entry;
	struct isdm_caps	caps;
};

/**
 * struct isdm_ulp - a user of the core (the initiator or the target)
 * @name: for log lines
 * @remove_device: close every connection that uses @ib_dev and drop every
 *	reference to its &struct isdm_device before returning. Called from
 *	the core's ib_client remove callback, in process context.
 * @entry: in the core's ULP list
 */
struct isdm_ulp {
	const char		*name;
	void			(*remove_device)(struct ib_device *ib_dev);
	struct list_head	entry;
};

int isdm_register_ulp(struct isdm_ulp *ulp);
void isdm_unregister_ulp(struct isdm_ulp *ulp);

struct isdm_device *isdm_device_get(struct ib_device *ib_dev);
void isdm_device_put(struct isdm_device *dev);

#endif /* ISDM_ISDM_H */
