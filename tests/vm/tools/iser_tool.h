/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the userspace iSER tools (iser_ffp, an initiator, and iser_tgt,
 * a target): one RC connection over rdma_cm with its verbs objects, receive
 * and send buffers, completion waits and PDU building. Single-threaded; a
 * tool drives one struct itool at a time.
 */
#ifndef ISER_TOOL_H
#define ISER_TOOL_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>
#include <rdma/rdma_cma.h>

#include "isdm/iser_wire.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* "no", or @yes when @v is set: for the tools' summary lines */
static inline const char *itool_yes_no(int v, const char *yes)
{
	if (v)
		return yes;
	return "no";
}

/* wr_id of the Sends a tool posts; receives use their buffer index */
#define ITOOL_SEND_ID	(~0ULL)
#define ITOOL_MAX_RX	32

/**
 * struct itool - one connection of a tool
 * @ch: the rdma_cm event channel
 * @id: the connection's cm id
 * @pd: protection domain
 * @cq: one CQ for sends and receives
 * @rx_mr: registration of @rx_buf
 * @tx_mr: registration of @tx_buf
 * @rx_buf: @nr_rx receive buffers of @rx_size bytes
 * @tx_buf: the one send buffer, @tx_size bytes
 * @nr_rx: receive buffers
 * @rx_size: bytes of each
 * @tx_size: bytes of @tx_buf
 * @closed: a DISCONNECTED event was seen, or a REJECTED one after the
 *	connection was established
 * @rejected: it was a REJECTED one
 * @pending: a CONNECT_REQUEST (on a listener's channel) that came while
 *	another event was awaited, not yet acknowledged
 * @stashed: receives that completed while a Send was awaited, oldest first
 * @nr_stashed: entries in @stashed
 * @last_rx: the buffer itool_recv() handed out last, posted again next call
 */
struct itool {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *rx_mr, *tx_mr;
	unsigned char *rx_buf;
	unsigned char *tx_buf;
	int nr_rx;
	size_t rx_size;
	size_t tx_size;
	int closed;
	int rejected;
	/*
	 * iSER header length of the connection: 0 for the 28-byte expanded
	 * header, ISDM_HDR_LEN_RFC when ZBVA was agreed (Annex A12)
	 */
	int hdr_len;
	/* send queue depth to create the QP with: 0 for 16 */
	int sq_depth;
	/*
	 * itool_verbs_init() posts no receive buffer: the caller posts them
	 * with itool_post_rx() when it wants the peer's Sends to land (until
	 * then they wait in RNR retry)
	 */
	int rx_later;
	int send_status;	/* ibv_wc_status of the last itool_send_wr() */
	struct rdma_cm_event *pending;
	struct ibv_wc stashed[ITOOL_MAX_RX];
	int nr_stashed;
	int last_rx;
};

/*
 * The PRNG of the random modes (iser_ffp -m random, iser_tgt -m random):
 * xorshift64*, each PDU's state seeded with splitmix64 of the seed and the
 * PDU's index (itool_rnd_mix()), so a sequence replays from any PDU.
 */
extern uint64_t itool_rng;

uint64_t itool_rnd_mix(uint64_t x);

/* xorshift64* */
static inline uint64_t rnd64(void)
{
	itool_rng ^= itool_rng >> 12;
	itool_rng ^= itool_rng << 25;
	itool_rng ^= itool_rng >> 27;
	return itool_rng * 0x2545f4914f6cdd1dULL;
}

/* [0, n) */
static inline uint32_t rnd(uint32_t n)
{
	return n ? (uint32_t)((rnd64() >> 11) % n) : 0;
}

/* true @p percent of the time */
static inline int pct(unsigned int p)
{
	return rnd(100) < p;
}

static inline void itool_put_be32(unsigned char *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static inline uint32_t itool_get_be32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

static inline uint32_t itool_get_be24(const unsigned char *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

double itool_now(void);
int itool_cm_wait(struct itool *t, enum rdma_cm_event_type want, double secs);
int itool_verbs_init(struct itool *t, int nr_rx, size_t rx_size,
		     size_t tx_size);
void itool_verbs_destroy(struct itool *t);
int itool_post_rx(struct itool *t, int i);
int itool_wait_wc(struct itool *t, struct ibv_wc *wc, double secs);
int itool_send_wr(struct itool *t, struct ibv_send_wr *first,
		  struct ibv_send_wr *send, double secs);
int itool_send(struct itool *t, uint32_t len);
int itool_recv(struct itool *t, unsigned char **msg, double secs);
unsigned char *itool_pdu_start(struct itool *t, unsigned char op,
			       unsigned char flags, uint32_t dlen);

#endif /* ISER_TOOL_H */
