// SPDX-License-Identifier: GPL-2.0
/*
 * Login keys (RFC 5046 6, RFC 3720 5.1): lookup, value parsing with its
 * bounds, the irrelevance table, and walking a Login/Text data segment.
 */
#include "unit.h"
#include "isdm/login_keys.h"

static const struct {
	const char *name;
	enum isdm_key key;
} names[] = {
	{ "RDMAExtensions", ISDM_KEY_RDMA_EXTENSIONS },
	{ "TargetRecvDataSegmentLength", ISDM_KEY_TRDSL },
	{ "InitiatorRecvDataSegmentLength", ISDM_KEY_IRDSL },
	{ "MaxOutstandingUnexpectedPDUs", ISDM_KEY_MOUP },
	{ "HeaderDigest", ISDM_KEY_HEADER_DIGEST },
	{ "DataDigest", ISDM_KEY_DATA_DIGEST },
	{ "OFMarker", ISDM_KEY_OF_MARKER },
	{ "IFMarker", ISDM_KEY_IF_MARKER },
	{ "OFMarkInt", ISDM_KEY_OF_MARK_INT },
	{ "IFMarkInt", ISDM_KEY_IF_MARK_INT },
	{ "MaxRecvDataSegmentLength", ISDM_KEY_MRDSL },
};

/* lookup on an exactly sized, unterminated heap copy */
static enum isdm_key lookup(const char *s)
{
	size_t len = strlen(s);

	return isdm_key_lookup(unit_dup(s, len), len);
}

static void key_lookup_all(void **state)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		unit_eq(names[i].name, lookup(names[i].name), names[i].key);
}

static void key_lookup_unknown(void **state)
{
	static const char *const unknown[] = {
		"rdmaextensions", "RDMAEXTENSIONS", "RDMAExtension",
		"RDMAExtensionsX", "headerdigest", "MaxBurstLength",
		"InitiatorName", "SessionType", "", "R",
		"MaxRecvDataSegmentLengt",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(unknown); i++)
		unit_eq(unknown[i], lookup(unknown[i]), ISDM_KEY_UNKNOWN);
	/* a name inside a larger buffer: only @len counts */
	unit_eq("prefix", isdm_key_lookup("RDMAExtensions=Yes", 14),
		ISDM_KEY_RDMA_EXTENSIONS);
	unit_eq("short prefix", isdm_key_lookup("RDMAExtensions", 13),
		ISDM_KEY_UNKNOWN);
}

struct val_case {
	const char *val;
	int want;
	__u64 out;
};

static void run_vals(enum isdm_key key, const struct val_case *c, size_t n)
{
	char what[128];
	size_t i;

	for (i = 0; i < n; i++) {
		size_t len = strlen(c[i].val);
		__u64 out = 0xa5a5a5a5a5a5a5a5ULL;

		snprintf(what, sizeof(what), "key %d = \"%s\"", key, c[i].val);
		unit_eq(what, isdm_key_parse(key, unit_dup(c[i].val, len), len,
					     &out), c[i].want);
		if (!c[i].want && out != c[i].out)
			fail_msg("%s: value %llu, want %llu", what,
				 (unsigned long long)out,
				 (unsigned long long)c[i].out);
	}
}

static void key_parse_bool(void **state)
{
	static const struct val_case c[] = {
		{ "Yes", 0, 1 }, { "No", 0, 0 }, { "yes", -EINVAL, 0 },
		{ "NO", -EINVAL, 0 }, { "", -EINVAL, 0 }, { "Yes ", -EINVAL, 0 },
		{ "1", -EINVAL, 0 }, { "Ye", -EINVAL, 0 },
	};

	run_vals(ISDM_KEY_RDMA_EXTENSIONS, c, ARRAY_SIZE(c));
	run_vals(ISDM_KEY_OF_MARKER, c, ARRAY_SIZE(c));
	run_vals(ISDM_KEY_IF_MARKER, c, ARRAY_SIZE(c));
}

static void key_parse_rdsl(void **state)
{
	static const struct val_case c[] = {
		{ "511", -ERANGE, 0 }, { "512", 0, 512 },
		{ "8192", 0, 8192 }, { "262144", 0, 262144 },
		{ "16777215", 0, 16777215 }, { "16777216", -ERANGE, 0 },
		{ "0", -ERANGE, 0 }, { "0x200", 0, 0x200 },
		{ "0X200", 0, 0x200 }, { "0x1ff", -ERANGE, 0 },
		{ "0xFFFFFF", 0, 0xffffff }, { "0x1000000", -ERANGE, 0 },
		{ "", -EINVAL, 0 }, { "0x", -EINVAL, 0 }, { "+5", -EINVAL, 0 },
		{ "-512", -EINVAL, 0 }, { "12a", -EINVAL, 0 }, { " 512", -EINVAL, 0 },
		{ "512 ", -EINVAL, 0 }, { "0x20g", -EINVAL, 0 },
		{ "99999999999999999999999", -ERANGE, 0 },
		{ "18446744073709551615", -ERANGE, 0 },
		{ "0x10000000000000000", -ERANGE, 0 },
	};

	run_vals(ISDM_KEY_TRDSL, c, ARRAY_SIZE(c));
	run_vals(ISDM_KEY_IRDSL, c, ARRAY_SIZE(c));
	run_vals(ISDM_KEY_MRDSL, c, ARRAY_SIZE(c));
}

static void key_parse_moup(void **state)
{
	static const struct val_case c[] = {
		{ "0", 0, 0 }, { "1", -ERANGE, 0 }, { "2", 0, 2 },
		{ "4294967295", 0, 4294967295ULL },
		{ "4294967296", -ERANGE, 0 }, { "0xffffffff", 0, 0xffffffff },
		{ "0x100000000", -ERANGE, 0 },
		{ "18446744073709551615", -ERANGE, 0 },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "", -EINVAL, 0 }, { "+5", -EINVAL, 0 }, { "12a", -EINVAL, 0 },
	};

	run_vals(ISDM_KEY_MOUP, c, ARRAY_SIZE(c));
}

static void key_parse_digest(void **state)
{
	static const struct val_case c[] = {
		{ "None", 0, 1 }, { "CRC32C", 0, 2 },
		{ "CRC32C,None", 0, 3 }, { "None,CRC32C", 0, 3 },
		{ "None,None", 0, 1 },
		{ "crc32c", -EINVAL, 0 }, { "none", -EINVAL, 0 },
		{ "None,", -EINVAL, 0 }, { ",None", -EINVAL, 0 },
		{ "None,,CRC32C", -EINVAL, 0 }, { "", -EINVAL, 0 },
		{ "None, CRC32C", -EINVAL, 0 }, { "CRC32", -EINVAL, 0 },
	};

	run_vals(ISDM_KEY_HEADER_DIGEST, c, ARRAY_SIZE(c));
	run_vals(ISDM_KEY_DATA_DIGEST, c, ARRAY_SIZE(c));
}

static void key_parse_mark_int(void **state)
{
	static const struct val_case c[] = {
		{ "1~65535", 0, (65535ULL << 16) | 1 },
		{ "2048~2048", 0, (2048ULL << 16) | 2048 },
		{ "2048", 0, (2048ULL << 16) | 2048 },
		{ "1", 0, (1ULL << 16) | 1 },
		{ "0x10~0x20", 0, (0x20ULL << 16) | 0x10 },
		{ "0~5", -ERANGE, 0 }, { "5~4", -ERANGE, 0 }, { "0", -ERANGE, 0 },
		{ "1~65536", -ERANGE, 0 }, { "65536", -ERANGE, 0 },
		{ "~5", -EINVAL, 0 }, { "5~", -EINVAL, 0 }, { "~", -EINVAL, 0 },
		{ "1~2~3", -EINVAL, 0 }, { "a~b", -EINVAL, 0 }, { "", -EINVAL, 0 },
		{ "1-5", -EINVAL, 0 },
	};

	run_vals(ISDM_KEY_OF_MARK_INT, c, ARRAY_SIZE(c));
	run_vals(ISDM_KEY_IF_MARK_INT, c, ARRAY_SIZE(c));
}

static void key_parse_special(void **state)
{
	static const struct val_case c[] = {
		{ "Reject", -ENOMSG, 0 }, { "Irrelevant", -ENOMSG, 0 },
		{ "NotUnderstood", -ENOMSG, 0 }, { "reject", -EINVAL, 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		run_vals(names[i].key, c, 3);
	/* "reject" is no special value, and no boolean either */
	run_vals(ISDM_KEY_RDMA_EXTENSIONS, c + 3, 1);
}

static void key_parse_long(void **state)
{
	char v[257];
	__u64 out;
	size_t i;

	memset(v, '1', sizeof(v));
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		unit_eq(names[i].name,
			isdm_key_parse(names[i].key, unit_dup(v, 256), 256,
				       &out), -E2BIG);
		unit_eq(names[i].name,
			isdm_key_parse(names[i].key, unit_dup(v, 257), 257,
				       &out), -E2BIG);
	}
	/* 255 bytes is not too long; as a number it overflows */
	unit_eq("255 digits", isdm_key_parse(ISDM_KEY_TRDSL,
					     unit_dup(v, 255), 255, &out),
		-ERANGE);
	memset(v, '0', 252);
	memcpy(v + 252, "512", 3);
	unit_eq("255 bytes, 512", isdm_key_parse(ISDM_KEY_TRDSL,
						 unit_dup(v, 255), 255, &out),
		0);
	assert_int_equal(out, 512);
}

static void key_parse_unknown(void **state)
{
	__u64 out;

	unit_eq("unknown", isdm_key_parse(ISDM_KEY_UNKNOWN,
					  unit_dup("Yes", 3), 3, &out),
		-ENOENT);
	unit_eq("unknown, Reject", isdm_key_parse(ISDM_KEY_UNKNOWN,
						  unit_dup("Reject", 6), 6,
						  &out), -ENOENT);
	unit_eq("out of the enum", isdm_key_parse((enum isdm_key)99,
						  unit_dup("Yes", 3), 3,
						  &out), -ENOENT);
}

/* RFC 5046 6: irrelevant[rdma_ext][discovery] for each key */
static void key_irrelevant_table(void **state)
{
	static const struct {
		enum isdm_key key;
		bool irr[2][2];
	} rows[] = {
		{ ISDM_KEY_UNKNOWN, { { 0, 0 }, { 0, 0 } } },
		{ ISDM_KEY_RDMA_EXTENSIONS, { { 0, 1 }, { 0, 1 } } },
		{ ISDM_KEY_TRDSL, { { 1, 1 }, { 0, 1 } } },
		{ ISDM_KEY_IRDSL, { { 1, 1 }, { 0, 1 } } },
		{ ISDM_KEY_MOUP, { { 1, 1 }, { 0, 1 } } },
		{ ISDM_KEY_HEADER_DIGEST, { { 0, 0 }, { 1, 0 } } },
		{ ISDM_KEY_DATA_DIGEST, { { 0, 0 }, { 1, 0 } } },
		{ ISDM_KEY_OF_MARKER, { { 0, 0 }, { 1, 0 } } },
		{ ISDM_KEY_IF_MARKER, { { 0, 0 }, { 1, 0 } } },
		{ ISDM_KEY_OF_MARK_INT, { { 0, 0 }, { 1, 0 } } },
		{ ISDM_KEY_IF_MARK_INT, { { 0, 0 }, { 1, 0 } } },
		{ ISDM_KEY_MRDSL, { { 0, 0 }, { 1, 0 } } },
	};
	char what[64];
	size_t i;
	int e, d;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		for (e = 0; e < 2; e++) {
			for (d = 0; d < 2; d++) {
				snprintf(what, sizeof(what),
					 "key %d, rdma_ext %d, discovery %d",
					 rows[i].key, e, d);
				unit_eq(what, isdm_key_irrelevant(rows[i].key,
								  e, d),
					rows[i].irr[e][d]);
			}
		}
	}
}

static int next(const char *buf, size_t len, size_t *pos, const char **k,
		size_t *kl, const char **v, size_t *vl)
{
	return isdm_text_next(buf, len, pos, k, kl, v, vl);
}

static void expect_pair(const char *buf, size_t len, size_t *pos,
			const char *key, const char *val)
{
	const char *k, *v;
	size_t kl, vl;

	unit_eq(key, next(buf, len, pos, &k, &kl, &v, &vl), 1);
	assert_int_equal(kl, strlen(key));
	assert_memory_equal(k, key, kl);
	assert_int_equal(vl, strlen(val));
	assert_memory_equal(v, val, vl);
}

/* an open-iscsi first Login Request over iSER, padded to 4 bytes */
static void text_login_blob(void **state)
{
	static const char blob[] =
		"InitiatorName=iqn.2004-10.com.ubuntu:01:1d2c3b4a\0"
		"SessionType=Normal\0"
		"TargetName=iqn.2003-01.org.linux-iscsi.t:sn.1\0"
		"AuthMethod=None\0"
		"RDMAExtensions=Yes\0\0"
		"TargetRecvDataSegmentLength=262144\0"
		"InitiatorRecvDataSegmentLength=262144\0"
		"MaxOutstandingUnexpectedPDUs=0\0"
		"HeaderDigest=None,CRC32C\0"
		"a=b=c\0"
		"Ex=\0";
	char padded[sizeof(blob) + 3] = { 0 };
	size_t raw = sizeof(blob) - 1;	/* without the literal's own NUL */
	size_t len = (raw + 3) & ~(size_t)3;
	const char *buf, *k, *v;
	size_t pos = 0, kl, vl;

	assert_true(len > raw);		/* there is padding to skip */
	memcpy(padded, blob, raw);
	buf = unit_dup(padded, len);
	expect_pair(buf, len, &pos, "InitiatorName",
		    "iqn.2004-10.com.ubuntu:01:1d2c3b4a");
	expect_pair(buf, len, &pos, "SessionType", "Normal");
	expect_pair(buf, len, &pos, "TargetName",
		    "iqn.2003-01.org.linux-iscsi.t:sn.1");
	expect_pair(buf, len, &pos, "AuthMethod", "None");
	expect_pair(buf, len, &pos, "RDMAExtensions", "Yes");
	unit_eq("lookup", isdm_key_lookup(buf + pos - 19, 14),
		ISDM_KEY_RDMA_EXTENSIONS);
	expect_pair(buf, len, &pos, "TargetRecvDataSegmentLength", "262144");
	expect_pair(buf, len, &pos, "InitiatorRecvDataSegmentLength",
		    "262144");
	expect_pair(buf, len, &pos, "MaxOutstandingUnexpectedPDUs", "0");
	expect_pair(buf, len, &pos, "HeaderDigest", "None,CRC32C");
	expect_pair(buf, len, &pos, "a", "b=c");
	expect_pair(buf, len, &pos, "Ex", "");
	unit_eq("end", next(buf, len, &pos, &k, &kl, &v, &vl), 0);
	assert_int_equal(pos, len);
	unit_eq("end again", next(buf, len, &pos, &k, &kl, &v, &vl), 0);
}

static void text_empty(void **state)
{
	const char *k, *v;
	size_t pos = 0, kl, vl;
	const char *z = unit_dup("\0\0\0\0", 4);

	unit_eq("len 0", next(unit_dup("", 0), 0, &pos, &k, &kl, &v, &vl), 0);
	unit_eq("only NULs", next(z, 4, &pos, &k, &kl, &v, &vl), 0);
	assert_int_equal(pos, 4);
}

/* the error for the first and only record of @rec (with its NUL) */
static int one(const char *rec, size_t len)
{
	const char *k, *v;
	size_t pos = 0, kl, vl;

	return next(unit_dup(rec, len), len, &pos, &k, &kl, &v, &vl);
}

static void text_malformed(void **state)
{
	unit_eq("missing '='", one("Foo\0", 4), -EINVAL);
	unit_eq("missing '=', no value", one("Foo=", 4), -EBADMSG);
	unit_eq("empty key", one("=v\0", 3), -EINVAL);
	unit_eq("only '='", one("=\0", 2), -EINVAL);
	unit_eq("space", one("Fo o=1\0", 7), -EILSEQ);
	unit_eq("colon", one("a:b=1\0", 6), -EILSEQ);
	unit_eq("high bit", one("\xc3\xa9=1\0", 5), -EILSEQ);
	unit_eq("unterminated", one("A=1", 3), -EBADMSG);
	unit_eq("unterminated name", one("A", 1), -EBADMSG);
	unit_eq("allowed chars", one("aZ09.-+@_=1\0", 12), 1);
	/* RFC 3720 5.1 / 11.1: X# public extension keys */
	unit_eq("X# extension key", one("X#Ext=1\0", 8), 1);
}

static void text_limits(void **state)
{
	char rec[64 + 1 + 256 + 1];

	/* 63-character name ok, 64 too long */
	memset(rec, 'K', 63);
	memcpy(rec + 63, "=1\0", 3);
	unit_eq("63-char key", one(rec, 66), 1);
	memset(rec, 'K', 64);
	memcpy(rec + 64, "=1\0", 3);
	unit_eq("64-char key", one(rec, 67), -ENAMETOOLONG);
	/* 255-byte value ok, 256 too long */
	memcpy(rec, "K=", 2);
	memset(rec + 2, 'v', 255);
	rec[257] = '\0';
	unit_eq("255-byte value", one(rec, 258), 1);
	memset(rec + 2, 'v', 256);
	rec[258] = '\0';
	unit_eq("256-byte value", one(rec, 259), -E2BIG);
}

/* a good pair, then an unterminated one: one pair, then the error */
static void text_unterminated_last(void **state)
{
	static const char blob[] = "HeaderDigest=None\0DataDigest=None";
	size_t len = sizeof(blob) - 1;
	const char *buf = unit_dup(blob, len);
	const char *k, *v;
	size_t pos = 0, kl, vl;

	expect_pair(buf, len, &pos, "HeaderDigest", "None");
	unit_eq("unterminated", next(buf, len, &pos, &k, &kl, &v, &vl),
		-EBADMSG);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(key_lookup_all),
		cmocka_unit_test(key_lookup_unknown),
		cmocka_unit_test(key_parse_bool),
		cmocka_unit_test(key_parse_rdsl),
		cmocka_unit_test(key_parse_moup),
		cmocka_unit_test(key_parse_digest),
		cmocka_unit_test(key_parse_mark_int),
		cmocka_unit_test(key_parse_special),
		cmocka_unit_test(key_parse_long),
		cmocka_unit_test(key_parse_unknown),
		cmocka_unit_test(key_irrelevant_table),
		cmocka_unit_test(text_login_blob),
		cmocka_unit_test(text_empty),
		cmocka_unit_test(text_malformed),
		cmocka_unit_test(text_limits),
		cmocka_unit_test(text_unterminated_last),
	};

	unit_plan(ARRAY_SIZE(tests));
	return unit_done(cmocka_run_group_tests_name("keys", tests, NULL,
						     unit_free_all),
			 ARRAY_SIZE(tests));
}
