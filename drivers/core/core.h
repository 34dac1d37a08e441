/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the files of the datamover core. */
#ifndef ISDM_CORE_H
#define ISDM_CORE_H

int isdm_device_init(void);
void isdm_device_exit(void);

#endif /* ISDM_CORE_H */
