// SPDX-License-Identifier: GPL-2.0
/*
 * T10 protection information on the wire (drivers/core/pi.c): the lengths
 * with and without tuples, the map from the interleaved stream to the data
 * and protection buffers, and the tuple checks of SBC-4 4.22.
 */
#include "unit.h"
#include "isdm/pi.h"

/* the tuple of an interval, from its data */
static void generate(const void *data, __u32 interval, __u8 type, __u32 ref,
		     struct isdm_pi_tuple *t)
{
	isdm_pi_tuple_make(isdm_pi_guard(data, interval), type, ref, t);
}

/* check an interval against its tuple */
static enum isdm_pi_err verify(const void *data, __u32 interval, __u8 type,
			       __u32 ref, unsigned int checks,
			       const struct isdm_pi_tuple *t)
{
	return isdm_pi_tuple_check(isdm_pi_guard(data, interval), type, ref,
				   checks, t);
}

static void crc_check_value(void **state)
{
	static const char digits[] = "123456789";

	/* the catalogued check value of CRC-16/T10-DIF */
	assert_int_equal(isdm_pi_guard(unit_dup(digits, 9), 9), 0xd0db);
	assert_int_equal(isdm_pi_guard(unit_fill(0, 512), 512), 0);
}

/* a guard computed piece by piece equals the guard of the whole */
static void guard_in_pieces(void **state)
{
	__u8 *d = unit_dup(NULL, 4096);
	__u32 i, cut, cut2;

	for (i = 0; i < 4096; i++)
		d[i] = (__u8)(i * 31 + 7);
	for (cut = 0; cut <= 512; cut += 37)
		for (cut2 = cut; cut2 <= 512; cut2 += 101) {
			__u16 crc = isdm_pi_guard_update(0, d, cut);

			crc = isdm_pi_guard_update(crc, d + cut, cut2 - cut);
			crc = isdm_pi_guard_update(crc, d + cut2, 512 - cut2);
			assert_int_equal(crc, isdm_pi_guard(d, 512));
		}
}

static void interval_table(void **state)
{
	static const struct {
		__u32 interval;
		bool ok;
	} rows[] = {
		{ 512, true }, { 1024, true }, { 2048, true }, { 4096, true },
		{ 0, false }, { 1, false }, { 256, false }, { 520, false },
		{ 3072, false }, { 8192, false }, { 0x80000000U, false },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		if (isdm_pi_interval_ok(rows[i].interval) != rows[i].ok)
			fail_msg("interval %u: want %d", rows[i].interval,
				 rows[i].ok);
}

static void wire_len_table(void **state)
{
	static const struct {
		__u32 data, interval;
		int rc;
		__u32 wire;
	} rows[] = {
		{ 0, 512, 0, 0 },
		{ 512, 512, 0, 520 },
		{ 4096, 512, 0, 4160 },
		{ 4096, 4096, 0, 4104 },
		{ 1048576, 512, 0, 1064960 },
		{ 1000, 512, -EINVAL, 0 },
		{ 4096, 520, -EINVAL, 0 },
		{ 4096, 0, -EINVAL, 0 },
		/* one tuple per 512 bytes pushes this past 32 bits */
		{ 0xfffffe00U, 512, -EINVAL, 0 },
		{ 0xfc000000U, 4096, 0, 0xfc000000U + (0xfc000000U / 4096) * 8 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		__u32 wire = 0x5a5a5a5a;
		int rc = isdm_pi_wire_len(rows[i].data, rows[i].interval, &wire);

		unit_eq("rc", rc, rows[i].rc);
		if (rc)
			assert_int_equal(wire, 0x5a5a5a5a);
		else
			assert_int_equal(wire, rows[i].wire);
	}
}

static void data_len_table(void **state)
{
	static const struct {
		__u32 wire, interval;
		int rc;
		__u32 data;
	} rows[] = {
		{ 0, 512, 0, 0 },
		{ 520, 512, 0, 512 },
		{ 4160, 512, 0, 4096 },
		{ 4104, 4096, 0, 4096 },
		/* a tuple short, a tuple too many, data without its tuple */
		{ 4152, 512, -EBADMSG, 0 },
		{ 4168, 512, -EBADMSG, 0 },
		{ 4096, 512, -EBADMSG, 0 },
		{ 8, 512, -EBADMSG, 0 },
		{ 4160, 1000, -EINVAL, 0 },
		{ 0xffffffffU, 512, -EBADMSG, 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		__u32 data = 0x5a5a5a5a;
		int rc = isdm_pi_data_len(rows[i].wire, rows[i].interval, &data);

		unit_eq("rc", rc, rows[i].rc);
		if (rc)
			assert_int_equal(data, 0x5a5a5a5a);
		else
			assert_int_equal(data, rows[i].data);
	}
}

/* every whole number of intervals survives the round trip, for each size */
static void len_roundtrip(void **state)
{
	__u32 interval, n, wire, data;

	for (interval = 512; interval <= 4096; interval <<= 1)
		for (n = 0; n <= 2048; n++) {
			unit_eq("wire", isdm_pi_wire_len(n * interval, interval,
							 &wire), 0);
			assert_int_equal(wire, n * (interval + 8));
			unit_eq("data", isdm_pi_data_len(wire, interval, &data),
				0);
			assert_int_equal(data, n * interval);
			if (n && isdm_pi_data_len(wire - 1, interval, &data) !=
				 -EBADMSG)
				fail_msg("wire %u - 1 accepted", wire);
		}
}

/*
 * Build the wire stream run by run with isdm_pi_locate() from a data buffer
 * and a protection buffer, and compare it with the layout written out by
 * hand: interval, tuple, interval, tuple...
 */
static void locate_builds_layout(void **state)
{
	const __u32 interval = 512, n = 5;
	const __u32 wire_len = n * (interval + 8);
	__u8 *data = unit_dup(NULL, n * interval);
	__u8 *prot = unit_dup(NULL, n * 8);
	__u8 *want = unit_dup(NULL, wire_len);
	__u8 *got = unit_fill(0xee, wire_len);
	__u32 i, off, runs = 0;

	for (i = 0; i < n * interval; i++)
		data[i] = (__u8)(i * 7 + 1);
	for (i = 0; i < n * 8; i++)
		prot[i] = (__u8)(0x80 | i);
	for (i = 0; i < n; i++) {
		memcpy(want + i * (interval + 8), data + i * interval, interval);
		memcpy(want + i * (interval + 8) + interval, prot + i * 8, 8);
	}
	for (off = 0; off < wire_len; runs++) {
		struct isdm_pi_pos pos;

		isdm_pi_locate(off, interval, &pos);
		assert_true(pos.run > 0);
		assert_true(off + pos.run <= wire_len);
		if (pos.is_pi)
			memcpy(got + off, prot + pos.off, pos.run);
		else
			memcpy(got + off, data + pos.off, pos.run);
		off += pos.run;
	}
	assert_memory_equal(got, want, wire_len);
	assert_int_equal(runs, 2 * n);
}

/* a run that starts inside an interval or a tuple ends where it ends */
static void locate_mid_run(void **state)
{
	static const struct {
		__u32 wire_off, interval;
		bool is_pi;
		__u32 off, run;
	} rows[] = {
		{ 0, 512, false, 0, 512 },
		{ 100, 512, false, 100, 412 },
		{ 511, 512, false, 511, 1 },
		{ 512, 512, true, 0, 8 },
		{ 515, 512, true, 3, 5 },
		{ 519, 512, true, 7, 1 },
		{ 520, 512, false, 512, 512 },
		{ 520 * 3 + 516, 512, true, 3 * 8 + 4, 4 },
		{ 4096, 4096, true, 0, 8 },
		{ 4104 + 4095, 4096, false, 4096 + 4095, 1 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		struct isdm_pi_pos pos;

		isdm_pi_locate(rows[i].wire_off, rows[i].interval, &pos);
		if (pos.is_pi != rows[i].is_pi || pos.off != rows[i].off ||
		    pos.run != rows[i].run)
			fail_msg("wire offset %u: got %d %u %u, want %d %u %u",
				 rows[i].wire_off, pos.is_pi, pos.off, pos.run,
				 rows[i].is_pi, rows[i].off, rows[i].run);
	}
}

static __u8 *pattern(__u32 len, __u8 seed)
{
	__u8 *p = unit_dup(NULL, len);
	__u32 i;

	for (i = 0; i < len; i++)
		p[i] = (__u8)(seed + i * 13);
	return p;
}

static void generate_fields(void **state)
{
	__u8 *d = pattern(512, 3);
	struct isdm_pi_tuple t;

	assert_int_equal(sizeof(t), ISDM_PI_TUPLE_LEN);
	memset(&t, 0xa5, sizeof(t));
	generate(d, 512, 1, 0x12345678, &t);
	assert_int_equal(be16toh(t.guard), isdm_pi_guard(d, 512));
	assert_int_equal(t.app, 0);
	assert_int_equal(be32toh(t.ref), 0x12345678);
	/* on the wire: guard, application tag, reference tag, big-endian */
	assert_int_equal(((__u8 *)&t)[4], 0x12);
	assert_int_equal(((__u8 *)&t)[7], 0x78);
	generate(d, 512, 3, 0x12345678, &t);
	assert_int_equal(be32toh(t.ref), ISDM_PI_REF_ESCAPE);
}

static void verify_type1(void **state)
{
	const unsigned int all = ISDM_PI_CHECK_GUARD | ISDM_PI_CHECK_REF;
	__u8 *d = pattern(4096, 9);
	struct isdm_pi_tuple t, bad;

	generate(d, 4096, 1, 77, &t);
	unit_eq("good", verify(d, 4096, 1, 77, all, &t), ISDM_PI_OK);
	unit_eq("ref", verify(d, 4096, 1, 78, all, &t), ISDM_PI_REF);
	unit_eq("ref unchecked", verify(d, 4096, 1, 78,
					ISDM_PI_CHECK_GUARD, &t),
		ISDM_PI_OK);
	d[4095] ^= 0x01;
	unit_eq("guard", verify(d, 4096, 1, 77, all, &t),
		ISDM_PI_GUARD);
	/* the guard is checked before the reference tag */
	unit_eq("guard first", verify(d, 4096, 1, 78, all, &t),
		ISDM_PI_GUARD);
	unit_eq("guard unchecked", verify(d, 4096, 1, 77,
					  ISDM_PI_CHECK_REF, &t),
		ISDM_PI_OK);
	unit_eq("no checks", verify(d, 4096, 1, 78, 0, &t), ISDM_PI_OK);
	/* the application tag escape turns off both checks */
	bad = t;
	bad.app = htobe16(ISDM_PI_APP_ESCAPE);
	unit_eq("escape", verify(d, 4096, 1, 78, all, &bad),
		ISDM_PI_OK);
	unit_eq("type 2 escape", verify(d, 4096, 2, 78, all, &bad),
		ISDM_PI_OK);
	/* any other application tag is not checked */
	bad.app = htobe16(0x1234);
	d[4095] ^= 0x01;
	unit_eq("app tag", verify(d, 4096, 1, 77, all, &bad),
		ISDM_PI_OK);
}

static void verify_type3(void **state)
{
	const unsigned int all = ISDM_PI_CHECK_GUARD | ISDM_PI_CHECK_REF;
	__u8 *d = pattern(512, 1);
	struct isdm_pi_tuple t, esc;

	generate(d, 512, 3, 0, &t);
	/* no reference tag check for type 3, whatever is expected */
	unit_eq("good", verify(d, 512, 3, 12345, all, &t), ISDM_PI_OK);
	t.ref = htobe32(42);
	unit_eq("any ref", verify(d, 512, 3, 7, all, &t), ISDM_PI_OK);
	d[0] ^= 0x80;
	unit_eq("guard", verify(d, 512, 3, 7, all, &t), ISDM_PI_GUARD);
	/* the application tag alone is no escape for type 3 */
	esc = t;
	esc.app = htobe16(ISDM_PI_APP_ESCAPE);
	unit_eq("half escape", verify(d, 512, 3, 7, all, &esc),
		ISDM_PI_GUARD);
	esc.ref = htobe32(ISDM_PI_REF_ESCAPE);
	unit_eq("escape", verify(d, 512, 3, 7, all, &esc), ISDM_PI_OK);
}

/* a changed bit anywhere in the interval or the guard is caught */
static void verify_every_bit(void **state)
{
	__u8 *d = pattern(512, 5);
	struct isdm_pi_tuple t;
	__u32 bit;

	generate(d, 512, 1, 0, &t);
	for (bit = 0; bit < 512 * 8; bit++) {
		d[bit / 8] ^= (__u8)(1 << (bit % 8));
		if (verify(d, 512, 1, 0, ISDM_PI_CHECK_GUARD, &t) !=
		    ISDM_PI_GUARD)
			fail_msg("data bit %u flipped, not caught", bit);
		d[bit / 8] ^= (__u8)(1 << (bit % 8));
	}
	for (bit = 0; bit < 16; bit++) {
		struct isdm_pi_tuple bad = t;

		bad.guard ^= htobe16((__u16)(1 << bit));
		if (verify(d, 512, 1, 0, ISDM_PI_CHECK_GUARD, &bad) !=
		    ISDM_PI_GUARD)
			fail_msg("guard bit %u flipped, not caught", bit);
	}
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc_check_value),
		cmocka_unit_test(guard_in_pieces),
		cmocka_unit_test(interval_table),
		cmocka_unit_test(wire_len_table),
		cmocka_unit_test(data_len_table),
		cmocka_unit_test(len_roundtrip),
		cmocka_unit_test(locate_builds_layout),
		cmocka_unit_test(locate_mid_run),
		cmocka_unit_test(generate_fields),
		cmocka_unit_test(verify_type1),
		cmocka_unit_test(verify_type3),
		cmocka_unit_test(verify_every_bit),
	};

	unit_plan(ARRAY_SIZE(tests));
	return unit_done(cmocka_run_group_tests_name("pi", tests, NULL,
						     unit_free_all),
			 ARRAY_SIZE(tests));
}
