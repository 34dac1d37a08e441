/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The iSCSI login keys whose handling iSER changes (RFC 5046 section 6):
 * their names, their values, and the key=value records of a Login or Text
 * data segment (RFC 3720 5.1, 5.2).
 *
 * Not part of iser_dm.ko: in the kernel LIO (target) and iscsid
 * (initiator) parse the login keys, so no module calls these. The
 * userspace unit tests and fuzzers build drivers/core/login_keys.c, which
 * keeps the rules written down and checked; a kernel user would add the
 * file to the module's Kbuild.
 */
#ifndef ISDM_LOGIN_KEYS_H
#define ISDM_LOGIN_KEYS_H

#include "isdm/iser_wire.h"

/**
 * enum isdm_key - iSCSI keys whose handling iSER changes (RFC 5046 6)
 * @ISDM_KEY_UNKNOWN: a key iSER does not change
 * @ISDM_KEY_RDMA_EXTENSIONS: RDMAExtensions
 * @ISDM_KEY_TRDSL: TargetRecvDataSegmentLength
 * @ISDM_KEY_IRDSL: InitiatorRecvDataSegmentLength
 * @ISDM_KEY_MOUP: MaxOutstandingUnexpectedPDUs
 * @ISDM_KEY_HEADER_DIGEST: HeaderDigest
 * @ISDM_KEY_DATA_DIGEST: DataDigest
 * @ISDM_KEY_OF_MARKER: OFMarker
 * @ISDM_KEY_IF_MARKER: IFMarker
 * @ISDM_KEY_OF_MARK_INT: OFMarkInt
 * @ISDM_KEY_IF_MARK_INT: IFMarkInt
 * @ISDM_KEY_MRDSL: MaxRecvDataSegmentLength
 */
enum isdm_key {
	ISDM_KEY_UNKNOWN = 0,
	ISDM_KEY_RDMA_EXTENSIONS,
	ISDM_KEY_TRDSL,
	ISDM_KEY_IRDSL,
	ISDM_KEY_MOUP,
	ISDM_KEY_HEADER_DIGEST,
	ISDM_KEY_DATA_DIGEST,
	ISDM_KEY_OF_MARKER,
	ISDM_KEY_IF_MARKER,
	ISDM_KEY_OF_MARK_INT,
	ISDM_KEY_IF_MARK_INT,
	ISDM_KEY_MRDSL,
};

enum isdm_key isdm_key_lookup(const char *name, size_t len);
int isdm_key_parse(enum isdm_key key, const char *val, size_t len,
		   __u64 *out);
bool isdm_key_irrelevant(enum isdm_key key, bool rdma_ext, bool discovery);
int isdm_text_next(const char *buf, size_t len, size_t *pos,
		   const char **key, size_t *key_len,
		   const char **val, size_t *val_len);

#endif /* ISDM_LOGIN_KEYS_H */
