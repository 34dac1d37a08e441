/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel definitions drivers/core/wire.c and pi.c use, for building
 * them in userspace (unit tests, fuzzers): pass this file to gcc/clang
 * -include.
 * Types (__u8 ... __be32) come from linux-libc-dev's <linux/types.h>.
 */
#ifndef ISDM_TESTS_KSHIM_H
#define ISDM_TESTS_KSHIM_H

#ifdef __KERNEL__
#error "kshim.h is for userspace builds only"
#endif

#include <endian.h>
#include <errno.h>
#include <string.h>
#include <linux/types.h>

#define cpu_to_be16(x)	((__be16)htobe16(x))
#define cpu_to_be32(x)	((__be32)htobe32(x))
#define be16_to_cpu(x)	be16toh(x)
#define be32_to_cpu(x)	be32toh(x)

#define min(x, y) ({				\
	__auto_type __min_x = (x);		\
	__auto_type __min_y = (y);		\
	__min_x < __min_y ? __min_x : __min_y; })

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * lib/crc-t10dif.c's functions, bit by bit: CRC-16 with polynomial 0x8bb7,
 * initial value 0, no reflection, no final XOR (SBC-4 4.22.4). Its check
 * value, over "123456789", is 0xd0db (tests/unit/test_pi.c).
 */
static inline __u16 crc_t10dif_update(__u16 crc, const unsigned char *buf,
				      size_t len)
{
	size_t i;
	int bit;

	for (i = 0; i < len; i++) {
		crc ^= (__u16)(buf[i] << 8);
		for (bit = 0; bit < 8; bit++)
			crc = crc & 0x8000 ? (__u16)(crc << 1) ^ 0x8bb7 :
					     (__u16)(crc << 1);
	}
	return crc;
}

static inline __u16 crc_t10dif(const unsigned char *buf, size_t len)
{
	return crc_t10dif_update(0, buf, len);
}

/* no module here */
#define EXPORT_SYMBOL_GPL(sym)

#endif /* ISDM_TESTS_KSHIM_H */
