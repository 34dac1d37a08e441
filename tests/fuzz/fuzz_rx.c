// SPDX-License-Identifier: GPL-2.0
/*
 * isdm_rx_parse() on any bytes, for both roles, both phases and both
 * header forms, against an independent model of its kernel-doc; on
 * success the decoded offsets must lie inside the message (whose data
 * segment is read, in an exactly sized heap copy, for ASan). A parsed PDU
 * then goes through isdm_check_ahs(), against its own model; when it
 * passes, what LIO reads of it (the extended CDB's AHSLength - 1 bytes, a
 * CDB as long as its operation code says) must lie inside the AHS.
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
	/* RFC 5046 7.3.4: every Data-Out is unsolicited, TTT 0xffffffff */
	if (op == ISDM_OP_DATA_OUT &&
	    (bhs[20] & bhs[21] & bhs[22] & bhs[23]) != 0xff)
		return -EBADE;
	return 0;
}

/* SPC-4: a CDB's length from its operation code */
static __u32 cdb_size(const __u8 *cdb)
{
	static const __u8 group[8] = { 6, 10, 10, 12, 16, 12, 10, 10 };

	return cdb[0] == 0x7f ? cdb[7] + 8u : group[cdb[0] >> 5];
}

/* the kernel-doc of isdm_check_ahs(), rule by rule */
static int model_ahs(const __u8 *bhs, const __u8 *ahs, __u32 n)
{
	__u32 i = 0, given = 16;
	int bidi = 0;

	if ((bhs[0] & 0x3f) != ISDM_OP_SCSI_CMD)
		return n ? -EPROTO : 0;
	while (i < n) {
		__u32 l = (ahs[i] << 8) | ahs[i + 1];
		__u32 padded = (l + 3 + 3) / 4 * 4;

		if (i + padded > n)
			return -EMSGSIZE;
		if (ahs[i + 2] == 1) {
			if (i != 0 || l < 2 || l > 245)
				return -EINVAL;
			given += l - 1;
		} else if (ahs[i + 2] == 2) {
			if (bidi || l != 5 || (bhs[1] & 0x60) != 0x60)
				return -EINVAL;
			bidi = 1;
		} else {
			return -EOPNOTSUPP;
		}
		i += padded;
	}
	return cdb_size(bhs + 32) > given ? -EBADMSG : 0;
}

/* what LIO's iscsit_setup_scsi_cmd() reads of an accepted AHS */
static void check_ahs_safe(const __u8 *bhs, const __u8 *ahs, __u32 n)
{
	__u32 l, i, sum = 0;

	if ((bhs[0] & 0x3f) != ISDM_OP_SCSI_CMD) {
		fuzz_check(n == 0);
		return;
	}
	if (!n) {
		fuzz_check(cdb_size(bhs + 32) <= 16);
		return;
	}
	fuzz_check(ahs[2] == 1 || ahs[2] == 2);
	if (ahs[2] != 1)
		return;
	l = (ahs[0] << 8) | ahs[1];
	fuzz_check(l >= 2 && 4 + l - 1 <= n);
	fuzz_check(cdb_size(bhs + 32) <= 16 + l - 1 &&
		   cdb_size(bhs + 32) <= 260);
	for (i = 0; i < l - 1; i++)	/* the memcpy, for ASan */
		sum += ahs[4 + i];
	(void)sum;
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
		ret = isdm_check_ahs(b + pdu.bhs_off,
				     b + pdu.bhs_off + 48, pdu.ahs_len);
		fuzz_check(ret == model_ahs(b + pdu.bhs_off,
					    b + pdu.bhs_off + 48,
					    pdu.ahs_len));
		if (!ret)
			check_ahs_safe(b + pdu.bhs_off, b + pdu.bhs_off + 48,
				       pdu.ahs_len);
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
