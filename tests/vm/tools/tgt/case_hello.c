// SPDX-License-Identifier: GPL-2.0
/*
 * iser_tgt: the initiator's Hello (its first iSER message after the login,
 * with ib_iser hello=on), answered by a proper HelloReply, or, in the
 * hello cases, by what the initiator must refuse.
 */
#include <string.h>

#include "tgt.h"

/* A HelloReply of @len bytes in t.tx_buf: @flags, CurVer @ver, @ord. */
int hello_reply(unsigned char flags, unsigned char ver, uint16_t ord,
		uint32_t len)
{
	memset(t.tx_buf, 0, len);
	t.tx_buf[0] = ISDM_OP_HELLO_REPLY | flags;
	t.tx_buf[1] = (ISDM_ISER_VERSION << 4) | ver;
	t.tx_buf[2] = ord >> 8;
	t.tx_buf[3] = ord & 0xff;
	return post_rsp(len, NULL, 0, 0, 0);
}

/*
 * A Hello from the initiator: answer it, or do the case's wrong thing. 0 to
 * go on, 1 when the case was done (the initiator must close), -1 on a local
 * error.
 */
int hello_step(const unsigned char *msg, int len)
{
	uint16_t ird = len >= 4 ? (msg[2] << 8) | msg[3] : 0;
	uint16_t ord = ird < 16 ? ird : 16;

	hello_seen = 1;
	switch (tcase) {
	case HELLO_REJ:
		hello_reply(ISDM_HELLO_REPLY_REJ, ISDM_ISER_VERSION, ord,
			    ISDM_HELLO_LEN);
		break;
	case HELLO_VER:
		hello_reply(0, 2, ord, ISDM_HELLO_LEN);
		break;
	case HELLO_LEN:
		hello_reply(0, ISDM_ISER_VERSION, ord, ISDM_HELLO_LEN + 4);
		break;
	case HELLO_NONE:
		break;
	case HELLO_PDU:
		rsp_start(ISDM_OP_NOP_IN, ISDM_BHS_FINAL, 0, 0xffffffff, 0);
		post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
		break;
	case HELLO_DROP:
		rdma_disconnect(t.id);
		fired = 1;
		return 2;
	default:
		return hello_reply(0, ISDM_ISER_VERSION, ord, ISDM_HELLO_LEN) ?
		       -1 : 0;
	}
	/* a Send the initiator refuses may fail here: it went out */
	fired = 1;
	sent = 1;
	return 1;
}
