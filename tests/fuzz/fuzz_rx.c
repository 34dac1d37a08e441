// SPDX-License-Identifier: GPL-2.0
/*
 * isdm_rx_parse() on any bytes, for both roles, both phases and both
 * header forms, against an independent model of its kernel-doc; on
 * success the decoded offsets must lie inside the message (whose data
 * segment is read, in an exactly sized heap copy, for ASan).
 *
 * Input: byte 0 selects the role (bit 0), the phase (bit 1), the header
 * form (bit 2) and NULL instead of an empty buffer (bit 3); bytes 1-4 are
 * max_data_len (big-endian); the rest is the received message.
 */
#include "fuzz.h"

/* RFC 3720 10.2.1.2: what each side sends (vendor opcodes aside) */
static bool sent_by_initiator(__u8 op)
{
	return op <= ISDM_OP_LOGOUT_REQ || op == ISDM_OP_SNACK;
}

static bool sent_by_target(__u8 op)
{
	return (op >= ISDM_OP_NOP_IN && op <= ISDM_OP_LOGOUT_RSP) ||
	       op == ISDM_OP_R2T || op == ISDM_OP_ASYNC ||
	       op == ISDM_OP_REJECT;
}

/* the kernel-doc of isdm_rx_parse(), check by check */
static int model(const __u8 *b, size_t len, __u8 hdr_len,
		 enum isdm_role role, enum isdm_phase phase, __u32 max)
{
	const __u8 *bhs = b + hdr_len;
	bool login, in_login;
	size_t need, data_off;
	__u32 dlen;
	__u8 op;

	if (!len)
		return -ENODATA;
	if (len < hdr_len + 48u)
		return -EMSGSIZE;
	if (b[0] >> 4 != 1)
		return -EPROTO;
	op = bhs[0] & 0x3f;
	if (role == ISDM_ROLE_TARGET ? !sent_by_initiator(op) :
	    !sent_by_target(op))
		return -EOPNOTSUPP;
	if (op == ISDM_OP_SNACK || op == ISDM_OP_DATA_IN || op == ISDM_OP_R2T)
		return -EPROTOTYPE;
	login = op == ISDM_OP_LOGIN_REQ || op == ISDM_OP_LOGIN_RSP;
	in_login = phase == ISDM_PHASE_LOGIN;
	if (login != in_login)
		return -EPERM;
	dlen = (bhs[5] << 16) | (bhs[6] << 8) | bhs[7];
	if (dlen > max)
		return -E2BIG;
	data_off = hdr_len + 48 + bhs[4] * 4;
	need = data_off + dlen;
	if (len < need)
		return -EOVERFLOW;
	if (len - need > (4 - dlen % 4) % 4)
		return -EBADMSG;
	return 0;
}

static void check_stags(const __u8 *b, __u8 hdr_len,
			const struct isdm_stags *st)
{
	bool wsv = b[0] & ISDM_CTRL_WSV, rsv = b[0] & ISDM_CTRL_RSV;

	fuzz_check(st->wsv == wsv && st->rsv == rsv);
	if (hdr_len == ISDM_HDR_LEN_RFC) {
		fuzz_check(st->write_stag == (wsv ? fuzz_be32(b + 4) : 0));
		fuzz_check(st->read_stag == (rsv ? fuzz_be32(b + 8) : 0));
		fuzz_check(!st->write_va && !st->read_va);
	} else {
		fuzz_check(st->write_stag == (wsv ? fuzz_be32(b + 4) : 0));
		fuzz_check(st->write_va == (wsv ? fuzz_be64(b + 8) : 0));
		fuzz_check(st->read_stag == (rsv ? fuzz_be32(b + 16) : 0));
		fuzz_check(st->read_va == (rsv ? fuzz_be64(b + 20) : 0));
	}
}

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	static const struct isdm_mode rfc = { .zbva = true,
					      .hdr_len = ISDM_HDR_LEN_RFC };
	static const struct isdm_mode ext = { .hdr_len = ISDM_HDR_LEN_EXT };
	const struct isdm_mode *mode;
	enum isdm_phase phase;
	enum isdm_role role;
	struct isdm_rx_pdu pdu;
	__u32 sum = 0, want = 0;
	size_t len, i;
	__u32 max;
	__u8 *b;
	int ret;

	if (size < 5)
		return 0;
	role = data[0] & 1 ? ISDM_ROLE_INITIATOR : ISDM_ROLE_TARGET;
	phase = data[0] & 2 ? ISDM_PHASE_LOGIN : ISDM_PHASE_FFP;
	mode = data[0] & 4 ? &ext : &rfc;
	max = fuzz_be32(data + 1);
	len = size - 5;
	b = fuzz_dup(data + 5, len);

	memset(&pdu, 0xa5, sizeof(pdu));
	ret = isdm_rx_parse(!len && (data[0] & 8) ? NULL : b, len, mode,
			    role, phase, max, &pdu);
	fuzz_check(ret == model(b, len, mode->hdr_len, role, phase, max));
	if (!ret) {
		fuzz_check(pdu.bhs_off == mode->hdr_len);
		fuzz_check(pdu.opcode == (b[pdu.bhs_off] & 0x3f));
		fuzz_check(pdu.ahs_len == b[pdu.bhs_off + 4] * 4u);
		fuzz_check(pdu.data_off == pdu.bhs_off + 48 + pdu.ahs_len);
		fuzz_check(pdu.data_len <= max);
		fuzz_check((size_t)pdu.data_off + pdu.data_len <= len);
		fuzz_check(len - pdu.data_off - pdu.data_len <= 3);
		fuzz_check(isdm_pdu_classify(pdu.opcode) == ISDM_PDU_CONTROL ||
			   isdm_pdu_classify(pdu.opcode) == ISDM_PDU_LOGIN);
		fuzz_check(isdm_msg_kind(b, len) == ISDM_MSG_PDU);
		check_stags(b, mode->hdr_len, &pdu.stags);
		/* the data segment is there (ASan sees any overread) */
		for (i = 0; i < pdu.data_len; i++) {
			sum += b[pdu.data_off + i];
			want += data[5 + pdu.data_off + i];
		}
		fuzz_check(sum == want);
	}
	free(b);
	return 0;
}
