// SPDX-License-Identifier: GPL-2.0
/*
 * isdm_hdr_build() with any STags in both header forms: the bytes must be
 * the RFC 5046 9.2 / Annex A12 table 4 layout, and the header, completed
 * into a PDU, must parse back through isdm_rx_parse() to the same STags.
 *
 * Input: byte 0 selects the form (bit 0), WSV (bit 1), RSV (bit 2), the
 * receiving role (bit 3) and the padding (bits 4-5); bytes 1-24 are the
 * Write STag, Read STag, Write VA and Read VA (big-endian); the rest is
 * the data segment.
 */
#include "fuzz.h"

#define IN_HDR	25

static const struct isdm_mode rfc = { .zbva = true,
				      .hdr_len = ISDM_HDR_LEN_RFC };
static const struct isdm_mode ext = { .hdr_len = ISDM_HDR_LEN_EXT };

static void check_bytes(const __u8 *b, const struct isdm_mode *m,
			const struct isdm_stags *st)
{
	fuzz_check(b[0] == (ISDM_OP_CTRL | (st->wsv ? ISDM_CTRL_WSV : 0) |
			    (st->rsv ? ISDM_CTRL_RSV : 0)));
	fuzz_check(!b[1] && !b[2] && !b[3]);
	if (m->hdr_len == ISDM_HDR_LEN_RFC) {
		fuzz_check(fuzz_be32(b + 4) == (st->wsv ? st->write_stag : 0));
		fuzz_check(fuzz_be32(b + 8) == (st->rsv ? st->read_stag : 0));
		return;
	}
	/* Linux struct iser_ctrl: stag@4, va@8, stag@16, va@20 */
	fuzz_check(fuzz_be32(b + 4) == (st->wsv ? st->write_stag : 0));
	fuzz_check(fuzz_be64(b + 8) == (st->wsv ? st->write_va : 0));
	fuzz_check(fuzz_be32(b + 16) == (st->rsv ? st->read_stag : 0));
	fuzz_check(fuzz_be64(b + 20) == (st->rsv ? st->read_va : 0));
}

/* too small a buffer: refused, and nothing written */
static void check_short(const struct isdm_mode *m,
			const struct isdm_stags *st, __u8 sel)
{
	size_t len = sel % m->hdr_len;
	__u8 *b = malloc(len);
	size_t i;

	if (!b && len)
		abort();
	memset(b, 0xa5, len);
	fuzz_check(isdm_hdr_build(b, len, m, st) == -ENOBUFS);
	for (i = 0; i < len; i++)
		fuzz_check(b[i] == 0xa5);
	free(b);
}

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	const struct isdm_mode *m;
	struct isdm_rx_pdu pdu;
	struct isdm_stags st;
	enum isdm_role role;
	size_t dlen, pad, len, i;
	__u8 *b, *bhs;
	int ret;

	if (size < IN_HDR)
		return 0;
	m = data[0] & 1 ? &ext : &rfc;
	memset(&st, 0, sizeof(st));
	st.wsv = data[0] & 2;
	st.rsv = data[0] & 4;
	role = data[0] & 8 ? ISDM_ROLE_INITIATOR : ISDM_ROLE_TARGET;
	st.write_stag = fuzz_be32(data + 1);
	st.read_stag = fuzz_be32(data + 5);
	st.write_va = fuzz_be64(data + 9);
	st.read_va = fuzz_be64(data + 17);
	dlen = size - IN_HDR;
	pad = (4 - dlen % 4) % 4;
	if (pad > (size_t)((data[0] >> 4) & 3))
		pad = (data[0] >> 4) & 3;
	len = m->hdr_len + ISDM_BHS_LEN + dlen + pad;

	check_short(m, &st, data[1]);
	b = malloc(len);
	if (!b)
		abort();
	memset(b, 0xa5, len);
	ret = isdm_hdr_build(b, len, m, &st);
	if (m == &rfc && ((st.wsv && st.write_va) || (st.rsv && st.read_va))) {
		/* the 12-byte form has no room for an address */
		fuzz_check(ret == -EINVAL);
		for (i = 0; i < len; i++)
			fuzz_check(b[i] == 0xa5);
		free(b);
		return 0;
	}
	fuzz_check(ret == m->hdr_len);
	fuzz_check(b[ret] == 0xa5);
	check_bytes(b, m, &st);

	/* complete the PDU: a NOP-Out or NOP-In carrying the data */
	bhs = b + m->hdr_len;
	memset(bhs, 0, ISDM_BHS_LEN);
	bhs[0] = role == ISDM_ROLE_TARGET ? ISDM_OP_NOP_OUT : ISDM_OP_NOP_IN;
	bhs[1] = ISDM_BHS_FINAL;
	bhs[5] = dlen >> 16;
	bhs[6] = dlen >> 8;
	bhs[7] = dlen;
	memcpy(bhs + ISDM_BHS_LEN, data + IN_HDR, dlen);
	memset(bhs + ISDM_BHS_LEN + dlen, 0, pad);

	ret = isdm_rx_parse(b, len, m, role, ISDM_PHASE_FFP, 1 << 24, &pdu);
	fuzz_check(ret == 0);
	fuzz_check(pdu.stags.wsv == st.wsv && pdu.stags.rsv == st.rsv);
	fuzz_check(pdu.stags.write_stag == (st.wsv ? st.write_stag : 0));
	fuzz_check(pdu.stags.read_stag == (st.rsv ? st.read_stag : 0));
	if (m == &ext) {
		fuzz_check(pdu.stags.write_va == (st.wsv ? st.write_va : 0));
		fuzz_check(pdu.stags.read_va == (st.rsv ? st.read_va : 0));
	} else {
		fuzz_check(!pdu.stags.write_va && !pdu.stags.read_va);
	}
	fuzz_check(pdu.data_off == m->hdr_len + ISDM_BHS_LEN);
	fuzz_check(pdu.data_len == dlen);
	fuzz_check(!memcmp(b + pdu.data_off, data + IN_HDR, dlen));
	free(b);
	return 0;
}
