/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the files of the datamover core. */
#ifndef ISDM_CORE_H
#define ISDM_CORE_H

/* bytes of receive buffers isdm_rx_ring_alloc() holds, all connections */
extern atomic_long_t isdm_rx_ring_bytes;

int isdm_device_init(void);
void isdm_device_exit(void);

#endif /* ISDM_CORE_H */
