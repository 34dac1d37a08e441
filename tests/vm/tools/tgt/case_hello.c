// SPDX-License-Identifier: GPL-2.0
/*
 * iser_tgt: the initiator's Hello (its first iSER message after the login,
 * with ib_iser hello=on), answered by a proper HelloReply, or, in the
 * hello cases, by what the initiator must refuse: their hello functions
 * (struct tgt_case's @hello), and hello-unasked, whose trigger sends a
 * HelloReply where no Hello was sent.
 */
#include <string.h>

#include "tgt.h"

/* A HelloReply of @len bytes in t.tx_buf: @flags, CurVer @ver, @ord. */
static int hello_reply(unsigned char flags, unsigned char ver, uint16_t ord,
		       uint32_t len)
{
	memset(t.tx_buf, 0, len);
	t.tx_buf[0] = ISDM_OP_HELLO_REPLY | flags;
	t.tx_buf[1] = (ISDM_ISER_VERSION << 4) | ver;
	t.tx_buf[2] = ord >> 8;
	t.tx_buf[3] = ord & 0xff;
	return post_rsp(len, NULL, 0, 0, 0);
}

int hello_rej(uint16_t ord)
{
	hello_reply(ISDM_HELLO_REPLY_REJ, ISDM_ISER_VERSION, ord,
		    ISDM_HELLO_LEN);
	return 1;
}

int hello_ver(uint16_t ord)
{
	hello_reply(0, 2, ord, ISDM_HELLO_LEN);
	return 1;
}

int hello_len(uint16_t ord)
{
	hello_reply(0, ISDM_ISER_VERSION, ord, ISDM_HELLO_LEN + 4);
	return 1;
}

int hello_none(uint16_t ord)
{
	(void)ord;
	return 1;
}

int hello_pdu(uint16_t ord)
{
	(void)ord;
	rsp_start(ISDM_OP_NOP_IN, ISDM_BHS_FINAL, 0, 0xffffffff, 0);
	post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
	return 1;
}

int hello_drop(uint16_t ord)
{
	(void)ord;
	rdma_disconnect(t.id);
	return 2;
}

/*
 * A Hello from the initiator: answer it, or do the case's wrong thing. 0 to
 * go on, 1 when the case was done (the initiator must close), 2 when the
 * tool closed the connection, -1 on a local error.
 */
int hello_step(const unsigned char *msg, int len)
{
	uint16_t ird = len >= 4 ? (msg[2] << 8) | msg[3] : 0;
	uint16_t ord = ird < 16 ? ird : 16;
	int ret;

	hello_seen = 1;
	if (!tcase->hello)
		return hello_reply(0, ISDM_ISER_VERSION, ord, ISDM_HELLO_LEN) ?
		       -1 : 0;
	ret = tcase->hello(ord);
	fired = 1;
	if (ret == 2)
		return 2;
	/* a Send the initiator refuses may fail here: it went out */
	sent = 1;
	return 1;
}

int fire_hello_unasked(const struct cmd *c)
{
	(void)c;
	return hello_reply(0, ISDM_ISER_VERSION, 1, ISDM_HELLO_LEN);
}
