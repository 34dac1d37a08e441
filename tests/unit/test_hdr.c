// SPDX-License-Identifier: GPL-2.0
/*
 * The iSER header of control-type PDUs: isdm_hdr_build() byte for byte in
 * the 12-byte RFC 5046 form and the 28-byte Annex A12 form (the layout of
 * Linux's struct iser_ctrl), and its decoding by isdm_rx_parse().
 */
#include "unit.h"

static const struct isdm_mode rfc = { .zbva = true,
				      .hdr_len = ISDM_HDR_LEN_RFC };
static const struct isdm_mode ext = { .hdr_len = ISDM_HDR_LEN_EXT };

/* build into an exactly sized heap buffer and compare */
static void build_check(const struct isdm_mode *mode,
			const struct isdm_stags *st, const __u8 *want)
{
	size_t len = mode->hdr_len;
	__u8 *buf = unit_fill(0xa5, len);

	unit_eq("hdr_build", isdm_hdr_build(buf, len, mode, st), len);
	assert_memory_equal(buf, want, len);
}

static void rfc_no_stags(void **state)
{
	static const __u8 want[12] = { 0x10 };
	static const struct isdm_stags none;

	build_check(&rfc, NULL, want);
	build_check(&rfc, &none, want);
}

static void rfc_wsv(void **state)
{
	static const struct isdm_stags st = {
		.wsv = true, .write_stag = 0x11223344, .read_stag = 0x55667788,
	};
	static const __u8 want[12] = {
		0x18, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0
	};

	build_check(&rfc, &st, want);
}

static void rfc_rsv(void **state)
{
	static const struct isdm_stags st = {
		.rsv = true, .write_stag = 0x11223344, .read_stag = 0xaabbccdd,
	};
	static const __u8 want[12] = {
		0x14, 0, 0, 0, 0, 0, 0, 0, 0xaa, 0xbb, 0xcc, 0xdd
	};

	build_check(&rfc, &st, want);
}

static void rfc_both(void **state)
{
	static const struct isdm_stags st = {
		.wsv = true, .rsv = true,
		.write_stag = 0x01020304, .read_stag = 0xfffffffe,
	};
	static const __u8 want[12] = {
		0x1c, 0, 0, 0, 0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0xfe
	};

	build_check(&rfc, &st, want);
}

/* the 12-byte form carries no address: a VA with a valid STag is refused */
static void rfc_va_refused(void **state)
{
	static const struct isdm_stags w = {
		.wsv = true, .write_stag = 1, .write_va = 0x1000,
	};
	static const struct isdm_stags r = {
		.rsv = true, .read_stag = 1, .read_va = 1,
	};
	/* an address beside a clear valid bit is ignored like the STag */
	static const struct isdm_stags ign = {
		.rsv = true, .read_stag = 7, .write_va = 0x1000,
		.write_stag = 9,
	};
	static const __u8 want[12] = { 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7 };
	__u8 buf[12];

	unit_eq("write VA", isdm_hdr_build(buf, 12, &rfc, &w), -EINVAL);
	unit_eq("read VA", isdm_hdr_build(buf, 12, &rfc, &r), -EINVAL);
	build_check(&rfc, &ign, want);
}

static void ext_no_stags(void **state)
{
	static const __u8 want[28] = { 0x10 };
	/* valid bits clear: STags and VAs go out as zero */
	static const struct isdm_stags junk = {
		.write_stag = 0x11111111, .read_stag = 0x22222222,
		.write_va = 0x3333333333333333ULL,
		.read_va = 0x4444444444444444ULL,
	};

	build_check(&ext, NULL, want);
	build_check(&ext, &junk, want);
}

static void ext_wsv(void **state)
{
	static const struct isdm_stags st = {
		.wsv = true, .write_stag = 0x01020304,
		.write_va = 0x1122334455667788ULL,
		.read_stag = 0x99999999, .read_va = 0x99,
	};
	static const __u8 want[28] = {
		0x18, 0, 0, 0,
		0x01, 0x02, 0x03, 0x04,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
	};

	build_check(&ext, &st, want);
}

static void ext_rsv(void **state)
{
	static const struct isdm_stags st = {
		.rsv = true, .read_stag = 0xdeadbeef,
		.read_va = 0x00000000ffff0000ULL,
		.write_stag = 0x99999999, .write_va = 0x99,
	};
	static const __u8 want[28] = {
		0x14, 0, 0, 0,
		0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
		0xde, 0xad, 0xbe, 0xef,
		0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00, 0x00,
	};

	build_check(&ext, &st, want);
}

/* Linux iser_ctrl: write_stag@4, write_va@8, read_stag@16, read_va@20 */
static void ext_both_linux_layout(void **state)
{
	static const struct isdm_stags st = {
		.wsv = true, .rsv = true,
		.write_stag = 0x00001a2b, .write_va = 0xffff8881deadb000ULL,
		.read_stag = 0x00003c4d, .read_va = 0x0000000100002000ULL,
	};
	static const __u8 want[28] = {
		0x1c, 0, 0, 0,
		0x00, 0x00, 0x1a, 0x2b,
		0xff, 0xff, 0x88, 0x81, 0xde, 0xad, 0xb0, 0x00,
		0x00, 0x00, 0x3c, 0x4d,
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x20, 0x00,
	};

	build_check(&ext, &st, want);
}

static void build_errors(void **state)
{
	static const struct isdm_stags st = { .wsv = true, .write_stag = 1 };
	struct isdm_mode bad = { .hdr_len = 0 };
	__u8 *b;

	b = unit_fill(0, 11);
	unit_eq("rfc len 11", isdm_hdr_build(b, 11, &rfc, &st), -ENOBUFS);
	b = unit_fill(0, 27);
	unit_eq("ext len 27", isdm_hdr_build(b, 27, &ext, &st), -ENOBUFS);
	b = unit_fill(0, 12);
	unit_eq("ext len 12", isdm_hdr_build(b, 12, &ext, NULL), -ENOBUFS);
	b = unit_fill(0, 28);
	unit_eq("hdr_len 0", isdm_hdr_build(b, 28, &bad, &st), -EINVAL);
	bad.hdr_len = 13;
	unit_eq("hdr_len 13", isdm_hdr_build(b, 28, &bad, &st), -EINVAL);
	bad.hdr_len = 48;
	unit_eq("hdr_len 48", isdm_hdr_build(b, 28, &bad, &st), -EINVAL);
	/* a larger buffer is fine; nothing past the header is written */
	b = unit_fill(0xa5, 40);
	unit_eq("ext in 40", isdm_hdr_build(b, 40, &ext, &st), 28);
	assert_int_equal(b[28], 0xa5);
	assert_int_equal(b[39], 0xa5);
	b = unit_fill(0xa5, 40);
	unit_eq("rfc in 40", isdm_hdr_build(b, 40, &rfc, &st), 12);
	assert_int_equal(b[12], 0xa5);
}

/* header + a NOP-Out BHS, received by a target */
static void roundtrip(const struct isdm_mode *mode,
		      const struct isdm_stags *st)
{
	__u8 msg[ISDM_HDR_LEN_EXT + ISDM_BHS_LEN] = { 0 };
	size_t len = mode->hdr_len + ISDM_BHS_LEN;
	struct isdm_rx_pdu pdu;
	__u8 *b;

	unit_eq("build", isdm_hdr_build(msg, sizeof(msg), mode, st),
		mode->hdr_len);
	msg[mode->hdr_len] = ISDM_BHS_IMMEDIATE | ISDM_OP_NOP_OUT;
	msg[mode->hdr_len + 1] = ISDM_BHS_FINAL;
	b = unit_dup(msg, len);
	memset(&pdu, 0xa5, sizeof(pdu));
	unit_eq("parse", isdm_rx_parse(b, len, mode, ISDM_ROLE_TARGET,
				       ISDM_PHASE_FFP, 8192, &pdu), 0);
	assert_int_equal(pdu.stags.wsv, st->wsv);
	assert_int_equal(pdu.stags.rsv, st->rsv);
	assert_int_equal(pdu.stags.write_stag, st->wsv ? st->write_stag : 0);
	assert_int_equal(pdu.stags.read_stag, st->rsv ? st->read_stag : 0);
	assert_int_equal(pdu.stags.write_va, st->wsv ? st->write_va : 0);
	assert_int_equal(pdu.stags.read_va, st->rsv ? st->read_va : 0);
}

static void build_parse_roundtrip(void **state)
{
	static const struct isdm_stags sts[] = {
		{ 0 },
		{ .wsv = true, .write_stag = 0x12345678 },
		{ .rsv = true, .read_stag = 0x9abcdef0 },
		{ .wsv = true, .rsv = true, .write_stag = 1, .read_stag = 2 },
		{ .write_stag = 5, .read_stag = 6 },
	};
	static const struct isdm_stags vas[] = {
		{ .wsv = true, .write_stag = 0x12345678,
		  .write_va = 0x8000000000000001ULL },
		{ .rsv = true, .read_stag = 0x9abcdef0,
		  .read_va = 0xffffffffffffffffULL },
		{ .wsv = true, .rsv = true, .write_stag = 1, .read_stag = 2,
		  .write_va = 0x100000000ULL, .read_va = 0xffffffffULL },
		{ .write_stag = 5, .read_stag = 6, .write_va = 7,
		  .read_va = 8 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sts); i++) {
		roundtrip(&rfc, &sts[i]);
		roundtrip(&ext, &sts[i]);
	}
	for (i = 0; i < ARRAY_SIZE(vas); i++)
		roundtrip(&ext, &vas[i]);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(rfc_no_stags),
		cmocka_unit_test(rfc_wsv),
		cmocka_unit_test(rfc_rsv),
		cmocka_unit_test(rfc_both),
		cmocka_unit_test(rfc_va_refused),
		cmocka_unit_test(ext_no_stags),
		cmocka_unit_test(ext_wsv),
		cmocka_unit_test(ext_rsv),
		cmocka_unit_test(ext_both_linux_layout),
		cmocka_unit_test(build_errors),
		cmocka_unit_test(build_parse_roundtrip),
	};

	unit_plan(ARRAY_SIZE(tests));
	return unit_done(cmocka_run_group_tests_name("hdr", tests, NULL,
						     unit_free_all),
			 ARRAY_SIZE(tests));
}
