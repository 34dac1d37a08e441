/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels the project supports (Debian 12's 6.1
 * and 6.12). Every version test of the project lives here.
 */
#ifndef ISDM_COMPAT_H
#define ISDM_COMPAT_H

#include <linux/version.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * scsi_host_alloc() and iscsi_host_alloc() take a const template from 6.12
 * on; 6.1 wants a writable one.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define ISDM_SHT_CONST const
#else
#define ISDM_SHT_CONST
#endif

#endif /* ISDM_COMPAT_H */
