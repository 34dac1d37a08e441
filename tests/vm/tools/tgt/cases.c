// SPDX-License-Identifier: GPL-2.0
/*
 * iser_tgt: the full-feature cases, what each sends on the trigger (the
 * first READ of block -t, or the first SCSI Command) instead of the
 * proper answer.
 */
#include <string.h>
#include <unistd.h>

#include "tgt.h"

/* The trigger of a full-feature case: send what the initiator must refuse. */
int offend(const struct cmd *c)
{
	struct answer a;
	struct cmd dup;
	unsigned char *bhs;
	uint64_t lba;
	uint32_t hl = HDR_LEN + ISDM_BHS_LEN;

	emulate(c, &a, &lba);
	switch (tcase) {
	case DLEN:
	case DLEN_BIG:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL,
			  tcase == DLEN ? 4096 : 0xffffff, c->itt, 1);
		return post_rsp(hl, NULL, 0, 0, 0);
	case PAD:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
		memset(t.tx_buf + hl, 0, 8);
		return post_rsp(hl + 8, NULL, 0, 0, 0);
	case SHORT:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
		return post_rsp(40, NULL, 0, 0, 0);
	case AHS:
		bhs = rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
		bhs[4] = 1;
		memset(t.tx_buf + hl, 0, 4);
		return post_rsp(hl + 4, NULL, 0, 0, 0);
	case ITT:
		if (respond_ok(c))
			return -1;
		dup = *c;
		dup.rsv = 0;
		memset(&a, 0, sizeof(a));
		return respond(&dup, &a, c->itt, 0, 0);
	case ITT_BOGUS:
		return respond(c, &a, 0x0badf00d, 0, 0);
	case INV_RKEY:
		return respond(c, &a, c->itt, 1,
			       (c->stag & ~0xffu) | ((c->stag + 1) & 0xff));
	case INV_UNNEG:
		return respond(c, &a, c->itt, 1, c->stag);
	case INV_OTHER:
		held = *c;
		have_held = 1;
		return 0;		/* acts on the next command */
	case INV_NOP:
		/* an unsolicited NOP-In (a ping) carries no StatSN advance */
		bhs = rsp_start(ISDM_OP_NOP_IN, ISDM_BHS_FINAL, 0, 0xffffffff, 0);
		itool_put_be32(bhs + 20, 0x1234);
		return post_rsp(hl, NULL, 0, 1, c->stag);
	case OP_LOGIN:
		bhs = rsp_start(ISDM_OP_LOGIN_RSP, 0x87, 0, c->itt, 1);
		return post_rsp(hl, NULL, 0, 0, 0);
	case OP_R2T:
		bhs = rsp_start(ISDM_OP_R2T, ISDM_BHS_FINAL, 0, c->itt, 0);
		itool_put_be32(bhs + 20, 1);		/* TTT */
		itool_put_be32(bhs + 44, c->edtl);	/* desired length */
		return post_rsp(hl, NULL, 0, 0, 0);
	case OP_DATAIN:
		rsp_start(ISDM_OP_DATA_IN, ISDM_BHS_FINAL, 0, c->itt, 0);
		return post_rsp(hl, NULL, 0, 0, 0);
	case OP_UNKNOWN:
		rsp_start(0x28, ISDM_BHS_FINAL, 0, c->itt, 1);
		return post_rsp(hl, NULL, 0, 0, 0);
	case ISER_OP:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
		t.tx_buf[0] = 0x40;
		return post_rsp(hl, NULL, 0, 0, 0);
	case BIGSEND:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, BIG_LEN, c->itt, 1);
		memset(t.tx_buf + hl, 0, BIG_LEN);
		return post_rsp(hl + BIG_LEN, NULL, 0, 0, 0);
	case ABORT_LATE:
	case ABORT_ZBVA:
		if (!c->rsv)
			return -1;
		/* abort-zbva: the task is live, the write must land */
		if (tcase == ABORT_ZBVA)
			pre = late_write(c) ? "refused" : "landed";
		aborted = *c;
		have_aborted = 1;
		return 0;		/* acts on the ABORT TASK */
	case LATE_WRITE:
		if (!c->rsv)
			return -1;
		if (respond(c, &a, c->itt, 0, 0))
			return -1;
		sleep(1);
		late = late_write(c) ? "refused" : "written";
		return 0;
	case RESERVED:
		return respond_ok(c);
	case HELLO_UNASKED:
		return hello_reply(0, ISDM_ISER_VERSION, 1, ISDM_HELLO_LEN);
	case KIND_NOP:
		return nop_answer(c->itt);
	case KIND_TMF:
	case KIND_TEXT:
	case KIND_LOGOUT:
		bhs = rsp_start(tcase == KIND_TMF ? ISDM_OP_TMF_RSP :
				tcase == KIND_TEXT ? ISDM_OP_TEXT_RSP :
				ISDM_OP_LOGOUT_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
		if (tcase == KIND_TEXT)
			itool_put_be32(bhs + 20, 0xffffffff);	/* TTT */
		return post_rsp(hl, NULL, 0, 0, 0);
	case KIND_REJECT:
		bhs = rsp_start(ISDM_OP_REJECT, ISDM_BHS_FINAL, ISDM_BHS_LEN,
				0xffffffff, 1);
		bhs[2] = 0x06;		/* immediate command reject */
		nop_out_hdr(t.tx_buf + hl, c->itt);
		return post_rsp(hl + ISDM_BHS_LEN, NULL, 0, 0, 0);
	default:
		return -1;
	}
}
