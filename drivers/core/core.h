/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the files of the datamover core. */
#ifndef ISDM_CORE_H
#define ISDM_CORE_H

/* bytes of receive buffers isdm_rx_ring_alloc() holds, all connections */
extern atomic_long_t isdm_rx_ring_bytes;

int isdm_device_init(void);
void isdm_device_exit(void);

/* one receive buffer of its own (rx.c), for the login phase (conn.c) */
int isdm_rx_desc_init(struct isdm_device *dev, struct isdm_rx_desc *d,
		      u32 size, void (*done)(struct ib_cq *cq, struct ib_wc *wc));
void isdm_rx_desc_destroy(struct isdm_device *dev, struct isdm_rx_desc *d);

#endif /* ISDM_CORE_H */
