/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What random.c (the sessions) and random_pdu.c (the PDUs) of iser_ffp's
 * random mode share.
 */
#ifndef FFP_RANDOM_H
#define FFP_RANDOM_H

#include "ffp.h"

#define RND_ITT_CMD	0x10000000u	/* + PDU index: SCSI Commands */
#define RND_DATA	(1024 * 1024)	/* the buffer the STags name */

/* per PDU index: what SBC-3 lets the target answer to the command */
enum { V_NONE, V_BAD, V_UNDERFED };

extern unsigned char *data_buf;	/* RND_DATA bytes the STags name */
extern struct ibv_mr *data_mr;	/* its registration on the connection */
extern unsigned char *verdict;	/* V_* per PDU index */
extern uint64_t cap_blocks;	/* the LUN's size (READ CAPACITY) */
extern uint32_t blk_len;	/* and its block length */

uint32_t rnd_pdu(unsigned long idx, int *hello);

#endif /* FFP_RANDOM_H */
