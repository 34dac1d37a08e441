// SPDX-License-Identifier: GPL-2.0
/*
 * iSER login keys: pure functions over the key=value text of Login and
 * Text data segments. Built by the userspace unit tests and fuzzers only
 * (see include/isdm/login_keys.h), with tests/unit/kshim.h.
 */
#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#endif

#include "isdm/login_keys.h"

/* RFC 3720 5.1: key names up to 63 bytes, values up to 255 bytes. */
#define ISDM_KEY_NAME_MAX	63
#define ISDM_KEY_VALUE_MAX	255

/* ------------------------------------------------------------------ */
/* Login keys (RFC 5046 section 6)                                    */
/* ------------------------------------------------------------------ */

static const struct {
	const char *name;
	enum isdm_key key;
} isdm_keys[] = {
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

static bool isdm_str_eq(const char *s, size_t len, const char *lit)
{
	size_t n = strlen(lit);

	return len == n && !memcmp(s, lit, n);
}

/**
 * isdm_key_lookup() - which iSER-relevant key a key name is
 * @name: the key name (not necessarily NUL-terminated)
 * @len: its length
 *
 * Key names are case-sensitive (RFC 3720 5.1).
 *
 * Return: the key, or %ISDM_KEY_UNKNOWN.
 */
enum isdm_key isdm_key_lookup(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(isdm_keys); i++)
		if (isdm_str_eq(name, len, isdm_keys[i].name))
			return isdm_keys[i].key;
	return ISDM_KEY_UNKNOWN;
}

/* RFC 3720 5.1: decimal or 0x-hex numbers, no sign, no empty value. */
static int isdm_parse_number(const char *s, size_t len, __u64 *out)
{
	unsigned int base = 10;
	__u64 v = 0;
	size_t i = 0;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == len)
		return -EINVAL;
	for (; i < len; i++) {
		unsigned int d;
		char c = s[i];

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -EINVAL;
		if (v > (~(__u64)0 - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static int isdm_parse_bool(const char *s, size_t len, __u64 *out)
{
	if (isdm_str_eq(s, len, "Yes"))
		*out = 1;
	else if (isdm_str_eq(s, len, "No"))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

/* HeaderDigest/DataDigest: a list of None and CRC32C; bit 0 None, bit 1 CRC32C */
static int isdm_parse_digest(const char *s, size_t len, __u64 *out)
{
	size_t start = 0, i;

	*out = 0;
	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != ',')
			continue;
		if (isdm_str_eq(s + start, i - start, "None"))
			*out |= 1;
		else if (isdm_str_eq(s + start, i - start, "CRC32C"))
			*out |= 2;
		else
			return -EINVAL;
		start = i + 1;
	}
	return 0;
}

/* OFMarkInt/IFMarkInt: "a~b" or a single value, 1..65535 (RFC 3720 A.3.2) */
static int isdm_parse_mark_int(const char *s, size_t len, __u64 *out)
{
	const char *tilde = memchr(s, '~', len);
	__u64 lo, hi;
	int ret;

	if (!tilde) {
		ret = isdm_parse_number(s, len, &lo);
		hi = lo;
	} else {
		ret = isdm_parse_number(s, tilde - s, &lo);
		if (!ret)
			ret = isdm_parse_number(tilde + 1,
						len - (tilde - s) - 1, &hi);
	}
	if (ret)
		return ret;
	if (lo < 1 || hi > 65535 || lo > hi)
		return -ERANGE;
	*out = (hi << 16) | lo;
	return 0;
}

/**
 * isdm_key_parse() - validate the value of an iSER-relevant key
 * @key: the key, from isdm_key_lookup()
 * @val: its value (not necessarily NUL-terminated)
 * @len: the value's length
 * @out: the parsed value, filled on success
 *
 * RDMAExtensions, OFMarker, IFMarker: Yes (1) or No (0).
 * TargetRecvDataSegmentLength, InitiatorRecvDataSegmentLength,
 * MaxRecvDataSegmentLength: 512 to 2^24-1. MaxOutstandingUnexpectedPDUs: 0
 * (no limit) or 2 to 2^32-1. Digests: a list of None (bit 0) and CRC32C
 * (bit 1). Marker intervals: 1 to 65535, as "lo~hi" (@out = hi << 16 | lo).
 *
 * Return: 0; -ENOENT for %ISDM_KEY_UNKNOWN; -ENOMSG for the special values
 * Reject, Irrelevant and NotUnderstood; -E2BIG for a value over 255 bytes;
 * -EINVAL for a malformed value; -ERANGE for a number out of range.
 */
int isdm_key_parse(enum isdm_key key, const char *val, size_t len,
		   __u64 *out)
{
	__u64 v;
	int ret;

	if (key == ISDM_KEY_UNKNOWN)
		return -ENOENT;
	if (len > ISDM_KEY_VALUE_MAX)
		return -E2BIG;
	if (isdm_str_eq(val, len, "Reject") ||
	    isdm_str_eq(val, len, "Irrelevant") ||
	    isdm_str_eq(val, len, "NotUnderstood"))
		return -ENOMSG;

	switch (key) {
	case ISDM_KEY_RDMA_EXTENSIONS:
	case ISDM_KEY_OF_MARKER:
	case ISDM_KEY_IF_MARKER:
		return isdm_parse_bool(val, len, out);
	case ISDM_KEY_HEADER_DIGEST:
	case ISDM_KEY_DATA_DIGEST:
		return isdm_parse_digest(val, len, out);
	case ISDM_KEY_OF_MARK_INT:
	case ISDM_KEY_IF_MARK_INT:
		return isdm_parse_mark_int(val, len, out);
	case ISDM_KEY_TRDSL:
	case ISDM_KEY_IRDSL:
	case ISDM_KEY_MRDSL:
		ret = isdm_parse_number(val, len, &v);
		if (ret)
			return ret;
		if (v < ISDM_RDSL_MIN || v > ISDM_RDSL_MAX)
			return -ERANGE;
		*out = v;
		return 0;
	case ISDM_KEY_MOUP:
		ret = isdm_parse_number(val, len, &v);
		if (ret)
			return ret;
		if (v == 1 || v > 0xffffffffULL)
			return -ERANGE;
		*out = v;
		return 0;
	default:
		return -ENOENT;
	}
}

/**
 * isdm_key_irrelevant() - is a key irrelevant in a session (RFC 5046 6)
 * @key: the key
 * @rdma_ext: RDMAExtensions was negotiated to Yes
 * @discovery: the session is a discovery session
 *
 * RDMAExtensions is irrelevant in a discovery session (6.3). The three iSER
 * keys are irrelevant unless RDMAExtensions=Yes (6.4, 6.5, 6.7). With
 * RDMAExtensions=Yes, digests are None and markers No whatever was said
 * (6.1, 6.6), and MaxRecvDataSegmentLength is derived from the iSER data
 * segment lengths (6.2).
 *
 * Return: true if the key's value must be treated as irrelevant.
 */
bool isdm_key_irrelevant(enum isdm_key key, bool rdma_ext, bool discovery)
{
	switch (key) {
	case ISDM_KEY_RDMA_EXTENSIONS:
		return discovery;
	case ISDM_KEY_TRDSL:
	case ISDM_KEY_IRDSL:
	case ISDM_KEY_MOUP:
		return discovery || !rdma_ext;
	case ISDM_KEY_HEADER_DIGEST:
	case ISDM_KEY_DATA_DIGEST:
	case ISDM_KEY_OF_MARKER:
	case ISDM_KEY_IF_MARKER:
	case ISDM_KEY_OF_MARK_INT:
	case ISDM_KEY_IF_MARK_INT:
	case ISDM_KEY_MRDSL:
		return rdma_ext && !discovery;
	default:
		return false;
	}
}

static bool isdm_key_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' ||
	       c == '@' || c == '_' || c == '#';
}

/**
 * isdm_text_next() - next key=value pair of a Login/Text data segment
 * @buf: the data segment
 * @len: its length
 * @pos: where to start; advanced past the pair on success
 * @key: the key name, filled
 * @key_len: its length, filled
 * @val: the value, filled
 * @val_len: its length, filled
 *
 * Pairs are NUL-terminated (RFC 3720 5.1); empty records (padding) are
 * skipped. Key names are up to 63 characters of letters, digits and
 * ".-+@_", and '#' for the X# extension keys; values up to 255 bytes.
 *
 * Return: 1 when a pair was found, 0 at the end, or -EBADMSG for a pair
 * without its NUL terminator, -EINVAL for a pair without '=' or with an
 * empty name, -ENAMETOOLONG for a long name, -EILSEQ for a bad character
 * in the name, -E2BIG for a long value.
 */
int isdm_text_next(const char *buf, size_t len, size_t *pos,
		   const char **key, size_t *key_len,
		   const char **val, size_t *val_len)
{
	const char *rec, *nul, *eq;
	size_t i, klen;

	while (*pos < len && buf[*pos] == '\0')
		(*pos)++;
	if (*pos >= len)
		return 0;

	rec = buf + *pos;
	nul = memchr(rec, '\0', len - *pos);
	if (!nul)
		return -EBADMSG;
	eq = memchr(rec, '=', nul - rec);
	if (!eq || eq == rec)
		return -EINVAL;
	klen = eq - rec;
	if (klen > ISDM_KEY_NAME_MAX)
		return -ENAMETOOLONG;
	for (i = 0; i < klen; i++)
		if (!isdm_key_char_ok(rec[i]))
			return -EILSEQ;
	if ((size_t)(nul - eq - 1) > ISDM_KEY_VALUE_MAX)
		return -E2BIG;

	*key = rec;
	*key_len = klen;
	*val = eq + 1;
	*val_len = nul - eq - 1;
	*pos = nul - buf + 1;
	return 1;
}
