// SPDX-License-Identifier: GPL-2.0
/*
 * iSER Hello and HelloReply (RFC 5046 5.1.3, 9.3, 9.4, 10.1.3): builders,
 * parsers and the target's answer table.
 */
#include "unit.h"

static void hello_build_bytes(void **state)
{
	static const __u8 want[12] = { 0x20, 0x11, 0x12, 0x34 };
	static const __u8 want0[12] = { 0x20, 0x11, 0x00, 0x00 };
	static const __u8 wantf[12] = { 0x20, 0x11, 0xff, 0xff };
	struct isdm_hello h;

	memset(&h, 0xa5, sizeof(h));
	isdm_hello_build(&h, 0x1234);
	assert_int_equal(sizeof(h), 12);
	assert_memory_equal(&h, want, 12);
	memset(&h, 0xa5, sizeof(h));
	isdm_hello_build(&h, 0);
	assert_memory_equal(&h, want0, 12);
	isdm_hello_build(&h, 0xffff);
	assert_memory_equal(&h, wantf, 12);
}

static int hello_parse(const __u8 *msg, size_t len, __u8 *max, __u8 *min,
		       __u16 *ird)
{
	return isdm_hello_parse(unit_dup(msg, len), len, max, min, ird);
}

static void hello_parse_ok(void **state)
{
	__u8 m[13] = { 0x20, 0x11, 0x12, 0x34 };
	__u8 max = 0, min = 0;
	__u16 ird = 0;

	unit_eq("hello", hello_parse(m, 12, &max, &min, &ird), 0);
	assert_int_equal(max, 1);
	assert_int_equal(min, 1);
	assert_int_equal(ird, 0x1234);

	/* reserved nibble and bytes are ignored */
	memset(m, 0xff, sizeof(m));
	m[0] = 0x2f;
	m[1] = 0x21;
	unit_eq("reserved", hello_parse(m, 12, &max, &min, &ird), 0);
	assert_int_equal(max, 2);
	assert_int_equal(min, 1);
	assert_int_equal(ird, 0xffff);
}

static void hello_parse_roundtrip(void **state)
{
	static const __u16 irds[] = { 0, 1, 16, 0x1234, 0xffff };
	struct isdm_hello h;
	__u8 max, min;
	__u16 ird;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(irds); i++) {
		isdm_hello_build(&h, irds[i]);
		unit_eq("roundtrip", hello_parse((__u8 *)&h, 12, &max, &min,
						 &ird), 0);
		assert_int_equal(max, ISDM_ISER_VERSION);
		assert_int_equal(min, ISDM_ISER_VERSION);
		assert_int_equal(ird, irds[i]);
	}
}

static void hello_parse_length(void **state)
{
	static const __u8 m[13] = { 0x20, 0x11, 0x00, 0x10 };
	__u8 max, min;
	__u16 ird;

	unit_eq("NULL", isdm_hello_parse(NULL, 12, &max, &min, &ird),
		-ENODATA);
	unit_eq("len 0", hello_parse(m, 0, &max, &min, &ird), -ENODATA);
	unit_eq("len 1", hello_parse(m, 1, &max, &min, &ird), -EMSGSIZE);
	unit_eq("len 11", hello_parse(m, 11, &max, &min, &ird), -EMSGSIZE);
	unit_eq("len 13", hello_parse(m, 13, &max, &min, &ird), -E2BIG);
}

static void hello_parse_opcode(void **state)
{
	__u8 m[12] = { 0x30, 0x11, 0x00, 0x10 };
	__u8 max, min;
	__u16 ird;

	unit_eq("HelloReply", hello_parse(m, 12, &max, &min, &ird), -EPROTO);
	m[0] = 0x10;
	unit_eq("control", hello_parse(m, 12, &max, &min, &ird), -EPROTO);
	m[0] = 0x00;
	unit_eq("reserved 0", hello_parse(m, 12, &max, &min, &ird), -EPROTO);
	m[0] = 0xf0;
	unit_eq("reserved f", hello_parse(m, 12, &max, &min, &ird), -EPROTO);
	/* a wrong opcode with a wrong length: the length is judged first */
	unit_eq("11 bytes", hello_parse(m, 11, &max, &min, &ird), -EMSGSIZE);
}

static void hello_parse_versions(void **state)
{
	__u8 m[12] = { 0x20, 0x12, 0x00, 0x10 };
	__u8 max, min;
	__u16 ird;

	unit_eq("min 2 > max 1", hello_parse(m, 12, &max, &min, &ird),
		-EBADMSG);
	m[1] = 0x0f;
	unit_eq("min 15 > max 0", hello_parse(m, 12, &max, &min, &ird),
		-EBADMSG);
	m[1] = 0x22;
	unit_eq("max 2 min 2", hello_parse(m, 12, &max, &min, &ird), 0);
	assert_int_equal(max, 2);
	assert_int_equal(min, 2);
	m[1] = 0x00;
	unit_eq("max 0 min 0", hello_parse(m, 12, &max, &min, &ird), 0);
	assert_int_equal(max, 0);
	assert_int_equal(min, 0);
}

static const struct {
	const char *what;
	__u8 max_ver, min_ver;
	__u16 ird, target_ord;
	bool reject;
	__u8 cur_ver;
	__u16 ord;
} answers[] = {
	{ "v1, ORD < IRD", 1, 1, 16, 8, false, 1, 8 },
	{ "v1, IRD < ORD", 1, 1, 4, 8, false, 1, 4 },
	{ "v1, IRD = ORD", 1, 1, 8, 8, false, 1, 8 },
	{ "v1..2 overlaps", 2, 1, 16, 16, false, 1, 16 },
	{ "v0..15 overlaps", 15, 0, 16, 16, false, 1, 16 },
	{ "v2..3 no overlap", 3, 2, 16, 16, true, 0, 16 },
	{ "v0 no overlap", 0, 0, 16, 16, true, 0, 16 },
	{ "IRD > 0, ORD 0", 1, 1, 5, 0, true, 1, 0 },
	{ "IRD 0, ORD 0", 1, 1, 0, 0, false, 1, 0 },
	{ "IRD 0, ORD 16", 1, 1, 0, 16, false, 1, 0 },
	{ "max 16 bits", 1, 1, 0xffff, 0xffff, false, 1, 0xffff },
	{ "no overlap, IRD > 0, ORD 0", 2, 2, 5, 0, true, 0, 0 },
};

static void hello_answer_table(void **state)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(answers); i++) {
		struct isdm_hello_result r;

		memset(&r, 0xa5, sizeof(r));
		isdm_hello_answer(answers[i].max_ver, answers[i].min_ver,
				  answers[i].ird, answers[i].target_ord, &r);
		unit_eq(answers[i].what, r.reject, answers[i].reject);
		unit_eq(answers[i].what, r.cur_ver, answers[i].cur_ver);
		unit_eq(answers[i].what, r.ord, answers[i].ord);
	}
}

static void reply_build_bytes(void **state)
{
	static const struct isdm_hello_result acc = { false, 1, 0x0010 };
	static const struct isdm_hello_result rej_ver = { true, 0, 0x0010 };
	static const struct isdm_hello_result rej_ord = { true, 1, 0 };
	static const __u8 want_acc[12] = { 0x30, 0x11, 0x00, 0x10 };
	static const __u8 want_rej_ver[12] = { 0x31, 0x10, 0x00, 0x10 };
	static const __u8 want_rej_ord[12] = { 0x31, 0x11, 0x00, 0x00 };
	struct isdm_hello_reply r;

	memset(&r, 0xa5, sizeof(r));
	isdm_hello_reply_build(&r, &acc);
	assert_int_equal(sizeof(r), 12);
	assert_memory_equal(&r, want_acc, 12);
	memset(&r, 0xa5, sizeof(r));
	isdm_hello_reply_build(&r, &rej_ver);
	assert_memory_equal(&r, want_rej_ver, 12);
	memset(&r, 0xa5, sizeof(r));
	isdm_hello_reply_build(&r, &rej_ord);
	assert_memory_equal(&r, want_rej_ord, 12);
}

static int reply_parse(const __u8 *msg, size_t len,
		       struct isdm_hello_result *r)
{
	return isdm_hello_reply_parse(unit_dup(msg, len), len, r);
}

static void reply_parse_accept(void **state)
{
	__u8 m[12] = { 0x30, 0x11, 0x00, 0x08 };
	struct isdm_hello_result r;

	unit_eq("accept", reply_parse(m, 12, &r), 0);
	assert_false(r.reject);
	assert_int_equal(r.cur_ver, 1);
	assert_int_equal(r.ord, 8);
	/* MaxVer 2, reserved bits and bytes set */
	memset(m, 0xff, sizeof(m));
	m[0] = 0x3e;
	m[1] = 0x21;
	unit_eq("reserved", reply_parse(m, 12, &r), 0);
	assert_false(r.reject);
	assert_int_equal(r.cur_ver, 1);
	assert_int_equal(r.ord, 0xffff);
}

static void reply_parse_reject(void **state)
{
	__u8 m[12] = { 0x31, 0x10, 0x00, 0x00 };
	struct isdm_hello_result r;

	unit_eq("reject v0", reply_parse(m, 12, &r), 0);
	assert_true(r.reject);
	assert_int_equal(r.cur_ver, 0);
	m[1] = 0x1f;
	unit_eq("reject v15", reply_parse(m, 12, &r), 0);
	assert_true(r.reject);
	m[1] = 0x11;
	unit_eq("reject v1", reply_parse(m, 12, &r), 0);
	assert_true(r.reject);
}

static void reply_parse_bad_version(void **state)
{
	__u8 m[12] = { 0x30, 0x12, 0x00, 0x08 };
	struct isdm_hello_result r;

	unit_eq("CurVer 2", reply_parse(m, 12, &r), -ERANGE);
	m[1] = 0x10;
	unit_eq("CurVer 0", reply_parse(m, 12, &r), -ERANGE);
	m[1] = 0xff;
	unit_eq("CurVer 15", reply_parse(m, 12, &r), -ERANGE);
}

static void reply_parse_malformed(void **state)
{
	__u8 m[13] = { 0x30, 0x11, 0x00, 0x08 };
	struct isdm_hello_result r;

	unit_eq("NULL", isdm_hello_reply_parse(NULL, 12, &r), -ENODATA);
	unit_eq("len 0", reply_parse(m, 0, &r), -ENODATA);
	unit_eq("len 11", reply_parse(m, 11, &r), -EMSGSIZE);
	unit_eq("len 13", reply_parse(m, 13, &r), -E2BIG);
	m[0] = 0x20;
	unit_eq("Hello", reply_parse(m, 12, &r), -EPROTO);
	m[0] = 0x10;
	unit_eq("control", reply_parse(m, 12, &r), -EPROTO);
	m[0] = 0x40;
	unit_eq("reserved", reply_parse(m, 12, &r), -EPROTO);
}

/* every answer survives build + parse */
static void reply_roundtrip(void **state)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(answers); i++) {
		struct isdm_hello_result a, b;
		struct isdm_hello_reply r;

		isdm_hello_answer(answers[i].max_ver, answers[i].min_ver,
				  answers[i].ird, answers[i].target_ord, &a);
		isdm_hello_reply_build(&r, &a);
		unit_eq(answers[i].what, reply_parse((__u8 *)&r, 12, &b), 0);
		unit_eq(answers[i].what, b.reject, a.reject);
		unit_eq(answers[i].what, b.cur_ver, a.cur_ver);
		unit_eq(answers[i].what, b.ord, a.ord);
	}
}

static void msg_kind_table(void **state)
{
	static const struct {
		__u8 b0;
		int want;
	} rows[] = {
		{ 0x10, ISDM_MSG_PDU }, { 0x18, ISDM_MSG_PDU },
		{ 0x1c, ISDM_MSG_PDU }, { 0x1f, ISDM_MSG_PDU },
		{ 0x20, ISDM_MSG_HELLO }, { 0x2f, ISDM_MSG_HELLO },
		{ 0x30, ISDM_MSG_HELLO_REPLY }, { 0x31, ISDM_MSG_HELLO_REPLY },
		{ 0x00, -EPROTO }, { 0x0c, -EPROTO }, { 0x40, -EPROTO },
		{ 0x50, -EPROTO }, { 0x80, -EPROTO }, { 0xe0, -EPROTO },
		{ 0xf0, -EPROTO }, { 0xff, -EPROTO },
	};
	char what[32];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		snprintf(what, sizeof(what), "byte 0 = 0x%02x", rows[i].b0);
		unit_eq(what, isdm_msg_kind(unit_dup(&rows[i].b0, 1), 1),
			rows[i].want);
	}
	unit_eq("NULL", isdm_msg_kind(NULL, 12), -ENODATA);
	unit_eq("len 0", isdm_msg_kind(unit_dup(rows, 0), 0), -ENODATA);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(hello_build_bytes),
		cmocka_unit_test(hello_parse_ok),
		cmocka_unit_test(hello_parse_roundtrip),
		cmocka_unit_test(hello_parse_length),
		cmocka_unit_test(hello_parse_opcode),
		cmocka_unit_test(hello_parse_versions),
		cmocka_unit_test(hello_answer_table),
		cmocka_unit_test(reply_build_bytes),
		cmocka_unit_test(reply_parse_accept),
		cmocka_unit_test(reply_parse_reject),
		cmocka_unit_test(reply_parse_bad_version),
		cmocka_unit_test(reply_parse_malformed),
		cmocka_unit_test(reply_roundtrip),
		cmocka_unit_test(msg_kind_table),
	};

	unit_plan(ARRAY_SIZE(tests));
	return unit_done(cmocka_run_group_tests_name("hello", tests, NULL,
						     unit_free_all),
			 ARRAY_SIZE(tests));
}
