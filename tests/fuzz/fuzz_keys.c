// SPDX-License-Identifier: GPL-2.0
/*
 * Login/Text data segments: isdm_text_next() walks any bytes; each pair
 * it returns must be well-formed and inside the buffer, and goes through
 * isdm_key_lookup(), isdm_key_parse() and isdm_key_irrelevant(), whose
 * results are checked against RFC 5046 6 and RFC 3720 5.1.
 *
 * Input: byte 0 selects a key (modulo the number of keys) whose value the
 * whole rest is also parsed as; the rest is the data segment.
 */
#include "fuzz.h"
#include "isdm/login_keys.h"

#define MAX_PAIRS	1024

/* RFC 3720 5.1 key-name characters, and # of the X# extension keys */
static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (c && strchr(".-+@_#", c));
}

static bool is_lit(const char *s, size_t len, const char *lit)
{
	return len == strlen(lit) && !memcmp(s, lit, len);
}

static void fuzz_value(enum isdm_key key, const char *val, size_t len)
{
	__u64 out = 0xeeeeeeeeeeeeeeeeULL;
	__u64 lo, hi;
	int ret;

	ret = isdm_key_parse(key, val, len, &out);
	if (key == ISDM_KEY_UNKNOWN) {
		fuzz_check(ret == -ENOENT);
		return;
	}
	if (len > 255) {
		fuzz_check(ret == -E2BIG);
		return;
	}
	if (is_lit(val, len, "Reject") || is_lit(val, len, "Irrelevant") ||
	    is_lit(val, len, "NotUnderstood")) {
		fuzz_check(ret == -ENOMSG);
		return;
	}
	fuzz_check(ret == 0 || ret == -EINVAL || ret == -ERANGE);
	if (ret)
		return;
	switch (key) {
	case ISDM_KEY_RDMA_EXTENSIONS:
	case ISDM_KEY_OF_MARKER:
	case ISDM_KEY_IF_MARKER:
		fuzz_check(out == 1 ? is_lit(val, len, "Yes") :
			   out == 0 && is_lit(val, len, "No"));
		break;
	case ISDM_KEY_TRDSL:
	case ISDM_KEY_IRDSL:
	case ISDM_KEY_MRDSL:
		fuzz_check(out >= ISDM_RDSL_MIN && out <= ISDM_RDSL_MAX);
		break;
	case ISDM_KEY_MOUP:
		fuzz_check(out == 0 || (out >= 2 && out <= 0xffffffffULL));
		break;
	case ISDM_KEY_HEADER_DIGEST:
	case ISDM_KEY_DATA_DIGEST:
		fuzz_check(out >= 1 && out <= 3);
		break;
	case ISDM_KEY_OF_MARK_INT:
	case ISDM_KEY_IF_MARK_INT:
		lo = out & 0xffff;
		hi = out >> 16;
		fuzz_check(lo >= 1 && lo <= hi && hi <= 65535);
		break;
	default:
		fuzz_check(0);
	}
}

static void fuzz_pair(const char *k, size_t kl, const char *v, size_t vl)
{
	enum isdm_key key = isdm_key_lookup(k, kl);
	int e, d;

	fuzz_check(key >= ISDM_KEY_UNKNOWN && key <= ISDM_KEY_MRDSL);
	fuzz_value(key, v, vl);
	for (e = 0; e < 2; e++)
		for (d = 0; d < 2; d++)
			if (key == ISDM_KEY_UNKNOWN)
				fuzz_check(!isdm_key_irrelevant(key, e, d));
			else if (key == ISDM_KEY_RDMA_EXTENSIONS)
				fuzz_check(isdm_key_irrelevant(key, e, d) == d);
			else
				(void)isdm_key_irrelevant(key, e, d);
}

static void fuzz_text(const char *buf, size_t len)
{
	size_t pos = 0, start, kl, vl, n;
	const char *k, *v;
	int ret;

	for (n = 0; n < MAX_PAIRS; n++) {
		start = pos;
		ret = isdm_text_next(buf, len, &pos, &k, &kl, &v, &vl);
		if (ret <= 0) {
			fuzz_check(ret == 0 || ret == -EBADMSG ||
				   ret == -EINVAL || ret == -ENAMETOOLONG ||
				   ret == -EILSEQ || ret == -E2BIG);
			if (!ret) {
				/* only padding was left */
				fuzz_check(pos >= len);
				while (start < len)
					fuzz_check(!buf[start++]);
			}
			return;
		}
		fuzz_check(ret == 1);
		fuzz_check(k >= buf + start && k < buf + len);
		fuzz_check(kl >= 1 && kl <= 63);
		fuzz_check(vl <= 255);
		fuzz_check(v == k + kl + 1 && k[kl] == '=');
		fuzz_check(v + vl < buf + len && !v[vl]);
		fuzz_check(pos == (size_t)(v + vl + 1 - buf) && pos > start);
		while (buf + start < k)
			fuzz_check(!buf[start++]);
		for (start = 0; start < kl; start++)
			fuzz_check(name_char(k[start]));
		fuzz_check(!memchr(v, '\0', vl));
		fuzz_pair(k, kl, v, vl);
	}
}

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	char *buf;

	if (size < 1)
		return 0;
	buf = (char *)fuzz_dup(data + 1, size - 1);
	fuzz_text(buf, size - 1);
	fuzz_value((enum isdm_key)(data[0] % (ISDM_KEY_MRDSL + 1)), buf,
		   size - 1);
	free(buf);
	return 0;
}
