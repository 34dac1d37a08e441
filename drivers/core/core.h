/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the files of the datamover core. */
#ifndef ISDM_CORE_H
#define ISDM_CORE_H

#include <linux/fault-inject.h>

/* bytes of receive buffers isdm_rx_ring_alloc() holds, all connections */
extern atomic_long_t isdm_rx_ring_bytes;

int isdm_device_init(void);
void isdm_device_exit(void);

/* one receive buffer of its own (rx.c), for the login phase (conn.c) */
int isdm_rx_desc_init(struct isdm_device *dev, struct isdm_rx_desc *d,
		      u32 size, void (*done)(struct ib_cq *cq, struct ib_wc *wc));
void isdm_rx_desc_destroy(struct isdm_device *dev, struct isdm_rx_desc *d);

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
extern struct fault_attr isdm_fail_queues;

/* true when debugfs iser_dm/fail_queues says this queue creation fails */
static inline bool isdm_queues_fault(void)
{
	return should_fail(&isdm_fail_queues, 1);
}
#else
static inline bool isdm_queues_fault(void)
{
	return false;
}
#endif

#endif /* ISDM_CORE_H */
