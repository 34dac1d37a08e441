// SPDX-License-Identifier: GPL-2.0
/*
 * iser_tgt -I (or -T TYPE): the LUN formatted with T10 protection
 * information type 1 (or 2). A protected READ (RDPROTECT not 0: READ (10)
 * and (16), and with type 2 READ (32)) gets the wire layout of
 * Documentation/wire-protocol.md, section 8: each 512-byte block followed
 * by its 8-byte tuple (CRC guard, application tag 0, the LBA's low 32 bits
 * as reference tag). -G LBA gives that block a wrong guard, -Q LBA a
 * wrong reference tag; the data itself stays right, so only a check of
 * the tuple can tell.
 */
#include <string.h>

#include "tgt.h"

int pi_type;
unsigned long pi_read32;	/* READ (32)s served (type 2) */
uint64_t pi_bad_guard = NO_TRIGGER, pi_bad_ref = NO_TRIGGER;

/* CRC-16 T10-DIF: polynomial 0x8bb7, no reflection, initial value 0 */
static uint16_t pi_crc(const unsigned char *p, size_t n)
{
	uint16_t crc = 0;
	int i;

	while (n--) {
		crc ^= (uint16_t)*p++ << 8;
		for (i = 0; i < 8; i++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x8bb7 : crc << 1;
	}
	return crc;
}

/*
 * The wire layout of @blocks blocks from @lba, whose data is at @data, in
 * the PI area of data_buf (which data_mr covers): its start.
 */
const unsigned char *pi_wire(const unsigned char *data, uint64_t lba,
			     uint32_t blocks)
{
	unsigned char *w = data_buf + PI_AREA, *b;
	uint32_t i;
	uint16_t crc;

	for (i = 0; i < blocks; i++) {
		b = w + i * (512 + PI_TUPLE);
		memcpy(b, data + (size_t)i * 512, 512);
		crc = pi_crc(b, 512);
		if (lba + i == pi_bad_guard)
			crc ^= 0x5a5a;
		b[512] = crc >> 8;
		b[513] = crc;
		b[514] = 0;
		b[515] = 0;
		itool_put_be32(b + 516, (uint32_t)(lba + i) +
			       (lba + i == pi_bad_ref));
	}
	return w;
}
