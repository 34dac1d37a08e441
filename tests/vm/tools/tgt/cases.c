// SPDX-License-Identifier: GPL-2.0
/*
 * iser_tgt: the full-feature cases, what each sends on the trigger (the
 * first READ of block -t, or the first SCSI Command) instead of the
 * proper answer: PDUs of a wrong length, layout, ITT, opcode or kind, and
 * Send with Invalidate where it does not belong. Each is the trigger
 * function of its row in main.c's case table; the return is that of
 * struct tgt_case's @trigger. The cases of late RDMA Writes are in
 * case_stag.c, those of the Hello in case_hello.c.
 *
 * A new case: its function here (or in the file of its kind), its
 * prototype in tgt.h, its row in the table and its description at the
 * head of main.c.
 */
#include <string.h>

#include "tgt.h"

/* an empty SCSI Response for @c whose header says DataSegmentLength @dlen */
static int rsp_dlen(const struct cmd *c, uint32_t dlen)
{
	rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, dlen, c->itt, 1);
	return post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
}

int fire_dlen(const struct cmd *c)
{
	return rsp_dlen(c, 4096);
}

int fire_dlen_big(const struct cmd *c)
{
	return rsp_dlen(c, 0xffffff);
}

int fire_pad(const struct cmd *c)
{
	uint32_t hl = HDR_LEN + ISDM_BHS_LEN;

	rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
	memset(t.tx_buf + hl, 0, 8);
	return post_rsp(hl + 8, NULL, 0, 0, 0);
}

int fire_short(const struct cmd *c)
{
	rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
	return post_rsp(40, NULL, 0, 0, 0);
}

int fire_ahs(const struct cmd *c)
{
	uint32_t hl = HDR_LEN + ISDM_BHS_LEN;
	unsigned char *bhs;

	bhs = rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
	bhs[4] = 1;
	memset(t.tx_buf + hl, 0, 4);
	return post_rsp(hl + 4, NULL, 0, 0, 0);
}

int fire_itt(const struct cmd *c)
{
	struct answer a;
	struct cmd dup;

	if (respond_ok(c))
		return -1;
	dup = *c;
	dup.rsv = 0;
	memset(&a, 0, sizeof(a));
	return respond(&dup, &a, c->itt, 0, 0);
}

int fire_itt_bogus(const struct cmd *c)
{
	struct answer a;
	uint64_t lba;

	emulate(c, &a, &lba);
	return respond(c, &a, 0x0badf00d, 0, 0);
}

int fire_inv_rkey(const struct cmd *c)
{
	struct answer a;
	uint64_t lba;

	emulate(c, &a, &lba);
	return respond(c, &a, c->itt, 1,
		       (c->stag & ~0xffu) | ((c->stag + 1) & 0xff));
}

int fire_inv_unneg(const struct cmd *c)
{
	struct answer a;
	uint64_t lba;

	emulate(c, &a, &lba);
	return respond(c, &a, c->itt, 1, c->stag);
}

/* the trigger held: ffp_step() answers the next command with its STag */
int fire_inv_other(const struct cmd *c)
{
	held = *c;
	have_held = 1;
	return 0;		/* acts on the next command */
}

int fire_inv_nop(const struct cmd *c)
{
	unsigned char *bhs;

	/* an unsolicited NOP-In (a ping) carries no StatSN advance */
	bhs = rsp_start(ISDM_OP_NOP_IN, ISDM_BHS_FINAL, 0, 0xffffffff, 0);
	itool_put_be32(bhs + 20, 0x1234);
	return post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 1, c->stag);
}

int fire_op_login(const struct cmd *c)
{
	rsp_start(ISDM_OP_LOGIN_RSP, 0x87, 0, c->itt, 1);
	return post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
}

int fire_op_r2t(const struct cmd *c)
{
	unsigned char *bhs;

	bhs = rsp_start(ISDM_OP_R2T, ISDM_BHS_FINAL, 0, c->itt, 0);
	itool_put_be32(bhs + 20, 1);		/* TTT */
	itool_put_be32(bhs + 44, c->edtl);	/* desired length */
	return post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
}

int fire_op_datain(const struct cmd *c)
{
	rsp_start(ISDM_OP_DATA_IN, ISDM_BHS_FINAL, 0, c->itt, 0);
	return post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
}

int fire_op_unknown(const struct cmd *c)
{
	rsp_start(0x28, ISDM_BHS_FINAL, 0, c->itt, 1);
	return post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
}

int fire_iser_op(const struct cmd *c)
{
	rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
	t.tx_buf[0] = 0x40;
	return post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
}

int fire_bigsend(const struct cmd *c)
{
	uint32_t hl = HDR_LEN + ISDM_BHS_LEN;

	rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, BIG_LEN, c->itt, 1);
	memset(t.tx_buf + hl, 0, BIG_LEN);
	return post_rsp(hl + BIG_LEN, NULL, 0, 0, 0);
}

/* reserved: the trigger answered properly (the reserved bits are the case) */
int fire_reserved(const struct cmd *c)
{
	return respond_ok(c);
}

/* the kind cases: the trigger answered by a response of another kind */
static int kind_rsp(const struct cmd *c, unsigned char op)
{
	unsigned char *bhs;

	bhs = rsp_start(op, ISDM_BHS_FINAL, 0, c->itt, 1);
	if (op == ISDM_OP_TEXT_RSP)
		itool_put_be32(bhs + 20, 0xffffffff);	/* TTT */
	return post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
}

int fire_kind_tmf(const struct cmd *c)
{
	return kind_rsp(c, ISDM_OP_TMF_RSP);
}

int fire_kind_text(const struct cmd *c)
{
	return kind_rsp(c, ISDM_OP_TEXT_RSP);
}

int fire_kind_logout(const struct cmd *c)
{
	return kind_rsp(c, ISDM_OP_LOGOUT_RSP);
}

int fire_kind_nop(const struct cmd *c)
{
	return nop_answer(c->itt);
}

int fire_kind_reject(const struct cmd *c)
{
	uint32_t hl = HDR_LEN + ISDM_BHS_LEN;
	unsigned char *bhs;

	bhs = rsp_start(ISDM_OP_REJECT, ISDM_BHS_FINAL, ISDM_BHS_LEN,
			0xffffffff, 1);
	bhs[2] = 0x06;		/* immediate command reject */
	nop_out_hdr(t.tx_buf + hl, c->itt);
	return post_rsp(hl + ISDM_BHS_LEN, NULL, 0, 0, 0);
}
