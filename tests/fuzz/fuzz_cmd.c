// SPDX-License-Identifier: GPL-2.0
/*
 * A SCSI Command's STags and data against its direction
 * (isdm_check_cmd_stags()),
 * its unsolicited length (isdm_cmd_unsol_len(), with the unsolicited
 * length bytes as immediate data, byte 0 bit 4 as InitialR2T and the
 * Write STag bytes as FirstBurstLength) and the Send-type message of any
 * outgoing PDU (isdm_send_op()), on any BHS, checked against RFC 3720
 * 10.3.1, RFC 5046 7.3 and 9.2 and Annex A12 CA12-11.
 *
 * Input: byte 0 selects WSV (bit 0), RSV (bit 1), Send with Invalidate
 * (bit 2) and no advertised STags (bit 3); bytes 1-4 are the unsolicited
 * length, 5-8 the Write STag, 9-12 the Read STag (big-endian); the next
 * 48 bytes are the BHS, zero-filled if short.
 */
#include "fuzz.h"

#define HDR	13

static void fuzz_stags(const __u8 *bhs, const struct isdm_stags *st,
		       __u32 unsol)
{
	bool rd = bhs[1] & ISDM_BHS_CMD_READ, wr = bhs[1] & ISDM_BHS_CMD_WRITE;
	__u32 edtl = fuzz_be32(bhs + 20);
	bool stray, nodata, over, missing;
	int ret;

	ret = isdm_check_cmd_stags(bhs, st, unsol);
	if ((bhs[0] & 0x3f) != ISDM_OP_SCSI_CMD) {
		fuzz_check(ret == -EINVAL);
		return;
	}
	/* a STag for a direction the command lacks */
	stray = (st->rsv && !rd) || (st->wsv && !wr);
	/* data on a command that is not a write (RFC 3720 10.3.1) */
	nodata = !wr && unsol;
	/* more unsolicited write data than the command has */
	over = wr && unsol > edtl;
	/* reads need the Read STag, solicited writes the Write STag */
	missing = (rd && (wr || edtl) && !st->rsv) ||
		  (wr && edtl > unsol && !st->wsv);
	if (stray)
		fuzz_check(ret == -EBADMSG);
	else if (nodata)
		fuzz_check(ret == -EPROTO);
	else if (over)
		fuzz_check(ret == -EOVERFLOW);
	else if (missing)
		fuzz_check(ret == -ENOKEY);
	else
		fuzz_check(ret == 0);
}

/*
 * RFC 3720 10.3.1, 12.11: F=1, InitialR2T=Yes or no W bit: the immediate
 * data only
 */
static void fuzz_unsol(const __u8 *bhs, __u32 imm, bool r2t, __u32 fbl)
{
	__u32 edtl = fuzz_be32(bhs + 20);
	__u32 got = isdm_cmd_unsol_len(bhs, imm, r2t, fbl);

	if (r2t || (bhs[1] & ISDM_BHS_FINAL) ||
	    !(bhs[1] & ISDM_BHS_CMD_WRITE))
		fuzz_check(got == imm);
	else
		fuzz_check(got >= imm &&
			   (got == imm || got == (fbl < edtl ? fbl : edtl)) &&
			   (got > imm || imm >= (fbl < edtl ? fbl : edtl)));
}

static void fuzz_send(const __u8 *bhs, const struct isdm_stags *adv,
		      bool send_inv)
{
	struct isdm_mode mode = {
		.zbva = false, .send_inv = send_inv,
		.hdr_len = ISDM_HDR_LEN_EXT,
	};
	struct isdm_send_op op = { .kind = 0, .inv_stag = 0xeeeeeeee };
	__u8 opcode = bhs[0] & 0x3f;
	int cls = isdm_pdu_classify(opcode);
	int ret;

	ret = isdm_send_op(bhs, adv, &mode, &op);
	if (cls < 0) {
		fuzz_check(cls == -EOPNOTSUPP && ret == cls);
		return;
	}
	fuzz_check(cls >= ISDM_PDU_CONTROL && cls <= ISDM_PDU_FORBIDDEN);
	if (cls == ISDM_PDU_DATA || cls == ISDM_PDU_FORBIDDEN) {
		fuzz_check(ret == -EPROTOTYPE);
		return;
	}
	fuzz_check(ret == 0);
	if (opcode == ISDM_OP_DATA_OUT && !(bhs[1] & ISDM_BHS_FINAL)) {
		fuzz_check(op.kind == ISDM_SEND && !op.inv_stag);
	} else if (opcode == ISDM_OP_SCSI_RSP && adv && send_inv &&
		   (adv->rsv || adv->wsv)) {
		fuzz_check(op.kind == ISDM_SEND_INV_SE);
		fuzz_check(op.inv_stag == (adv->rsv ? adv->read_stag :
					   adv->write_stag));
	} else {
		fuzz_check(op.kind == ISDM_SEND_SE && !op.inv_stag);
	}
}

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	__u8 raw[ISDM_BHS_LEN] = { 0 };
	struct isdm_stags st = { 0 };
	__u32 unsol;
	__u8 *bhs;

	if (size < HDR)
		return 0;
	st.wsv = data[0] & 1;
	st.rsv = data[0] & 2;
	unsol = fuzz_be32(data + 1);
	st.write_stag = fuzz_be32(data + 5);
	st.read_stag = fuzz_be32(data + 9);
	memcpy(raw, data + HDR, size - HDR < sizeof(raw) ? size - HDR :
	       sizeof(raw));
	bhs = fuzz_dup(raw, sizeof(raw));

	fuzz_stags(bhs, &st, unsol);
	fuzz_unsol(bhs, unsol, data[0] & 16, st.write_stag);
	fuzz_send(bhs, data[0] & 8 ? NULL : &st, data[0] & 4);
	free(bhs);
	return 0;
}
