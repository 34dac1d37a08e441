/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The iSER datamover core (iser_dm.ko): what the initiator (ib_iser.ko) and
 * the target (ib_isert.ko) share. Kernel only; the wire format and its pure
 * functions are in isdm/iser_wire.h.
 */
#ifndef ISDM_ISDM_H
#define ISDM_ISDM_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/moduleparam.h>
#include <rdma/ib_verbs.h>

#include "isdm/iser_wire.h"

/*
 * version of the three modules (modinfo; gives them a srcversion too): the
 * package version, as in VERSION, dkms.conf and debian/changelog
 * (scripts/dkms-tree.sh refuses a tree where they differ)
 */
#define ISDM_VERSION	"0.9.0"

/**
 * struct isdm_device - one RDMA device as the datamover uses it
 * @ib_dev: the device
 * @pd: protection domain shared by every connection on the device
 * @ref: one reference per attached connection; the last put frees the
 *	object and its PD
 * @entry: in the core's device list, under its mutex
 * @conns: the connections attached to it (&struct isdm_conn @dev_entry),
 *	under the core's device mutex
 * @caps: what the device lets us offer in the Annex A12 exchange
 * @gone: set by the core's device removal, which waits on it: completed
 *	when the last reference is dropped and the PD is freed
 *
 * Found or created by isdm_conn_attach(), so all connections on one device
 * share the PD. Device removal is handled by the core's ib_client: from
 * its start no connection can attach to the device; it calls the
 * @device_removed callback of every connection attached to it, then waits,
 * without a time limit, until no reference is left.
 */
struct isdm_device {
	struct ib_device	*ib_dev;
	struct ib_pd		*pd;
	struct kref		ref;
	struct list_head	entry;
	struct list_head	conns;
	struct isdm_caps	caps;
	struct completion	*gone;
};

/**
 * struct isdm_queue_attr - queue sizes and callbacks of a connection
 * @send_wr: send WRs the side posts itself (not counting RDMA contexts)
 * @recv_wr: receive buffers it keeps posted
 * @rdma_ctxs: rdma_rw contexts it may have in flight
 * @send_sge: SGEs per send WR it needs
 * @recv_sge: SGEs per receive WR it needs (0 means 1)
 * @poll_ctx: where completions run
 * @qp_context: passed to @event_handler and found in wc->qp->qp_context
 * @event_handler: QP async events
 */
struct isdm_queue_attr {
	u32			send_wr;
	u32			recv_wr;
	u32			rdma_ctxs;
	u32			send_sge;
	u32			recv_sge;
	enum ib_poll_context	poll_ctx;
	void			*qp_context;
	void			(*event_handler)(struct ib_event *ev, void *ctx);
};

/**
 * struct isdm_queues - the CQ and QP of a connection
 * @cm_id: the rdma_cm id the QP belongs to
 * @qp: the QP, NULL before creation and after destruction
 * @cq: the CQ from the CQ pool, or NULL
 * @cq_size: entries taken from the pool
 * @drained: bit 0 set once ib_drain_qp() ran
 */
struct isdm_queues {
	struct rdma_cm_id	*cm_id;
	struct ib_qp		*qp;
	struct ib_cq		*cq;
	u32			cq_size;
	unsigned long		drained;
};

struct isdm_conn;

/**
 * struct isdm_conn_ops - what the core asks of one side's connections
 * @device_removed: the connection's device is going away: start closing
 *	the connection so that it releases everything it holds on the
 *	device and calls isdm_conn_detach(), without waiting for userspace.
 *	Called once, in process context, with no core lock held; the
 *	connection's memory stays valid meanwhile, since
 *	isdm_conn_unregister() waits for a running call. It must not free
 *	the connection.
 */
struct isdm_conn_ops {
	void	(*device_removed)(struct isdm_conn *conn);
};

/**
 * struct isdm_conn - what every iSER connection has, initiator or target;
 *	each side's connection object embeds it as its first member (@base)
 * @cm_id: the connection's rdma_cm id; when it goes is the side's
 *	business (the target's through isdm_queues_destroy_id())
 * @dev: the core's device object, NULL before isdm_conn_attach() and after
 *	isdm_conn_detach()
 * @q: CQ and QP (isdm_queues_create())
 * @mode: header form, ZBVA and Send with Invalidate the CM exchange fixed
 *	(isdm_cm_negotiate_target() on the target, isdm_cm_rep_parse() on
 *	the initiator)
 * @ops: the side's callbacks, set by isdm_conn_attach()
 * @dev_entry: in @dev's @conns while registered, or in a device
 *	removal's list of connections still to call (core's device mutex)
 * @notifier: the task running @ops->device_removed for it, or NULL (core's
 *	device mutex)
 * @flags: %ISDM_CONN_FAILED (isdm_conn_fail_once())
 *
 * The state of a connection stays with each side: the target's passes
 * through LIO's login (accepted, pending, bound) where the initiator's
 * passes through address and route resolution, and each side's lock
 * protects more than the state.
 */
struct isdm_conn {
	struct rdma_cm_id		*cm_id;
	struct isdm_device		*dev;
	struct isdm_queues		q;
	struct isdm_mode		mode;
	const struct isdm_conn_ops	*ops;
	struct list_head		dev_entry;
	struct task_struct		*notifier;
	unsigned long			flags;
};

/**
 * enum isdm_conn_flag - bits of &isdm_conn.flags
 * @ISDM_CONN_FAILED: the connection failed, and the failure went up to
 *	libiscsi or LIO (once)
 */
enum isdm_conn_flag {
	ISDM_CONN_FAILED,
};

/**
 * isdm_conn_fail_once() - mark a connection failed
 * @c: the connection
 *
 * A connection's failure goes up to libiscsi or LIO once: after a queue
 * pair error every outstanding work request completes flushed, and each
 * would report it again, as would a CM event that follows.
 *
 * Context: any.
 * Return: true for the first caller only.
 */
static inline bool isdm_conn_fail_once(struct isdm_conn *c)
{
	return !test_and_set_bit(ISDM_CONN_FAILED, &c->flags);
}

/**
 * isdm_conn_failed() - whether a connection failed
 * @c: the connection
 *
 * Context: any; a receive handler reads it to keep what arrived behind a
 * failing PDU from the layer above.
 * Return: true once isdm_conn_fail_once() ran.
 */
static inline bool isdm_conn_failed(const struct isdm_conn *c)
{
	return test_bit(ISDM_CONN_FAILED, &c->flags);
}

/**
 * struct isdm_rx_desc - one receive buffer
 * @buf: iSER header, BHS, AHS and data segment
 * @dma: its DMA address
 * @size: its size
 * @sge: the receive SGE
 * @cqe: completion entry; @cqe.done is the handler
 */
struct isdm_rx_desc {
	void			*buf;
	u64			dma;
	u32			size;
	struct ib_sge		sge;
	struct ib_cqe		cqe;
};

/**
 * struct isdm_rx_ring - a connection's receive buffers, packed in chunks
 *	(isdm_rx_ring_alloc())
 * @desc: one descriptor per buffer
 * @nr: buffers
 * @chunk: the chunks' addresses
 * @chunk_dma: their DMA addresses
 * @nr_chunks: entries of @chunk and @chunk_dma
 * @per_chunk: buffers of each chunk but the last, which may hold fewer
 * @stride: bytes of each buffer, DMA-aligned; a chunk takes the whole
 *	pages its buffers need (isdm_rx_chunk_bytes())
 * @lead: bytes at the start of each chunk in front of its first buffer,
 *	which place every buffer's data segment on an
 *	%ISDM_RX_DATA_ALIGN boundary (0 when not asked for)
 */
struct isdm_rx_ring {
	struct isdm_rx_desc	*desc;
	u32			nr;
	void			**chunk;
	u64			*chunk_dma;
	u32			nr_chunks;
	u32			per_chunk;
	u32			stride;
	u32			lead;
};

/**
 * struct isdm_login_buf - the buffers of a connection's login phase (and,
 *	on the initiator, of its Text exchanges)
 * @rx: the receive buffer of Login (Text) PDUs
 * @data: the data segment of the Login (Text) PDU the side sends
 * @data_dma: its DMA address, mapped for the life of the connection
 * @data_size: its size
 */
struct isdm_login_buf {
	struct isdm_rx_desc	rx;
	void			*data;
	u64			data_dma;
	u32			data_size;
};

/* iSER header (either form) + BHS: the headers of every PDU either side sends */
#define ISDM_TX_HDR_MAX		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN)
/* SGEs of one Send: the headers, then up to four of data */
#define ISDM_TX_SGE		5

/**
 * struct isdm_tx - one outgoing Send: its headers and its work request
 * @hdr: iSER header, ending at offset %ISDM_HDR_LEN_EXT, then the BHS (and,
 *	in a ring slot, inline data); the message starts at
 *	%ISDM_HDR_LEN_EXT minus the negotiated header length, so both header
 *	forms use one layout. A ring slot (isdm_tx_ring_slot()), or a
 *	buffer of the caller's that is mapped per Send
 * @dma: DMA address of @hdr; 0 when not mapped
 * @map_len: bytes of @hdr mapped (when not @premapped)
 * @premapped: @hdr is a ring slot, mapped for the life of the ring
 * @hdr_ready: @hdr already holds the iSER header of a Send that advertises
 *	no STag, in the connection's form (a ring filled by
 *	isdm_tx_ring_alloc() with a mode)
 * @num_sge: entries of @sge in use, set by the caller: 1 for the headers
 *	alone
 * @sge: the headers (filled by isdm_tx_build()), then data segment pieces
 *	(filled by the caller)
 * @cqe: completion entry
 * @wr: the Send
 *
 * Built by isdm_tx_build() (a PDU) or isdm_hello_post() (a Hello or
 * HelloReply), posted by isdm_tx_post(), unmapped by isdm_tx_unmap().
 */
struct isdm_tx {
	u8			*hdr;
	u64			dma;
	u32			map_len;
	bool			premapped;
	bool			hdr_ready;
	u32			num_sge;
	struct ib_sge		sge[ISDM_TX_SGE];
	struct ib_cqe		cqe;
	struct ib_send_wr	wr;
};

/* where the BHS of @tx goes: right behind the longest iSER header */
static inline void *isdm_tx_bhs(const struct isdm_tx *tx)
{
	return tx->hdr + ISDM_HDR_LEN_EXT;
}

/**
 * struct isdm_tx_ring - a connection's premapped Send header buffers
 *	(isdm_tx_ring_alloc())
 * @nr: slots
 * @stride: bytes from one slot to the next (the slot size, DMA-aligned)
 * @per_page: slots in one page
 * @hdr_ready: each slot holds the iSER header of a Send without STags
 * @pages: the pages, each mapped once for DMA to the device
 * @dma: their DMA addresses
 */
struct isdm_tx_ring {
	u32			nr;
	u32			stride;
	u32			per_page;
	bool			hdr_ready;
	void			**pages;
	u64			*dma;
};

/**
 * struct isdm_credits - send queue slots a side accounts for itself
 * @avail: slots free now
 * @size: slots in all
 *
 * A post takes the slots of its work requests first (isdm_credits_take())
 * and their completions give them back (isdm_credits_give()). A full
 * queue is backpressure for the caller, never a failed post.
 */
struct isdm_credits {
	atomic_t	avail;
	u32		size;
};

/**
 * isdm_credits_init() - start with all of @size slots free
 * @cr: the counter
 * @size: slots in all
 */
static inline void isdm_credits_init(struct isdm_credits *cr, u32 size)
{
	cr->size = size;
	atomic_set(&cr->avail, size);
}

/**
 * isdm_credits_take() - take @nr slots
 * @cr: the counter
 * @nr: slots the post needs
 *
 * Return: true when taken; false, taking none, when fewer are free.
 */
static inline bool isdm_credits_take(struct isdm_credits *cr, u32 nr)
{
	if (atomic_sub_return(nr, &cr->avail) < 0) {
		atomic_add(nr, &cr->avail);
		return false;
	}
	return true;
}

/**
 * isdm_credits_give() - give back @nr slots taken before
 * @cr: the counter
 * @nr: slots whose work requests completed (or were never posted)
 */
static inline void isdm_credits_give(struct isdm_credits *cr, u32 nr)
{
	atomic_add(nr, &cr->avail);
}

struct rdma_cm_id;

int isdm_queues_create(struct rdma_cm_id *cm_id, struct isdm_device *dev,
		       struct isdm_queues *q, const struct isdm_queue_attr *attr);
void isdm_qp_event_log(const struct ib_event *ev,
		       const struct sockaddr_storage *peer);
void isdm_queues_drain(struct isdm_queues *q);
void isdm_queues_destroy(struct isdm_queues *q);
void isdm_queues_destroy_id(struct isdm_queues *q);
int isdm_rx_post(struct ib_qp *qp, struct isdm_device *dev,
		 struct isdm_rx_desc *d);
/*
 * Where a receive ring places a buffer's data segment: the block layer's
 * default DMA alignment (a queue's dma_alignment of 511), which a buffer
 * the target hands to a block backstore in place must meet.
 */
#define ISDM_RX_DATA_ALIGN	512

int isdm_rx_ring_alloc(struct isdm_device *dev, struct isdm_rx_ring *r,
		       u32 nr, u32 size, u32 data_off,
		       void (*done)(struct ib_cq *cq, struct ib_wc *wc));
void isdm_rx_ring_free(struct isdm_device *dev, struct isdm_rx_ring *r);
int isdm_login_buf_alloc(struct isdm_device *dev, struct isdm_login_buf *lb,
			 u32 rx_size, u32 data_size,
			 void (*done)(struct ib_cq *cq, struct ib_wc *wc));
void isdm_login_buf_free(struct isdm_device *dev, struct isdm_login_buf *lb);
int isdm_login_buf_send_data(struct isdm_device *dev,
			     struct isdm_login_buf *lb, struct isdm_tx *tx,
			     const void *data, u32 len);
int isdm_tx_build(struct isdm_conn *c, struct isdm_tx *tx,
		  const struct isdm_stags *adv, const struct isdm_stags *st,
		  u32 inline_len,
		  void (*done)(struct ib_cq *cq, struct ib_wc *wc));
void isdm_tx_unmap(struct isdm_device *dev, struct isdm_tx *tx);
int isdm_tx_post(struct isdm_conn *c, struct isdm_tx *tx,
		 struct ib_send_wr *first);
int isdm_hello_post(struct isdm_conn *c, struct isdm_tx *tx, void *msg,
		    u32 len, void (*done)(struct ib_cq *cq, struct ib_wc *wc));
bool isdm_wc_log(const struct ib_wc *wc, const char *what,
		 const struct sockaddr_storage *peer);

/**
 * struct isdm_rx_spec - the receiving side's rules for isdm_rx_check()
 * @peer: the peer's address, for the log lines
 * @role: our side (the peer sends the other side's opcodes)
 * @phase: Login Phase or Full Feature Phase
 * @max_data: the largest data segment taken (our MaxRecvDataSegmentLength,
 *	or the login buffer's size)
 * @ahs: an AHS is taken (and checked); without it any AHS is refused
 * @reject: a PDU iSER forbids in a Send or one not allowed in @phase
 *	comes back unlogged, to be answered with a Reject
 */
struct isdm_rx_spec {
	const struct sockaddr_storage	*peer;
	enum isdm_role			role;
	enum isdm_phase			phase;
	u32				max_data;
	bool				ahs;
	bool				reject;
};

bool isdm_rx_begin(struct isdm_conn *c, struct isdm_rx_desc *d);
int isdm_rx_check(struct isdm_conn *c, const void *buf, u32 len,
		  const struct isdm_rx_spec *spec, struct isdm_rx_pdu *pdu);
int isdm_tx_ring_alloc(struct isdm_device *dev, struct isdm_tx_ring *r,
		       u32 nr, u32 slot_size, const struct isdm_mode *mode);
void isdm_tx_ring_free(struct isdm_device *dev, struct isdm_tx_ring *r);
bool isdm_tx_ring_slot(const struct isdm_tx_ring *r, struct isdm_tx *tx,
		       u32 idx);

/**
 * struct isdm_pi_xfer - how isdm_pi_copy() treats a protected transfer
 * @interval: protection interval: the LUN's logical block size
 * @type: protection type, 1 to 3, of tuples made or checked
 * @ref: reference tag of the first interval (types 1 and 2)
 * @checks: %ISDM_PI_CHECK_GUARD, %ISDM_PI_CHECK_REF: what is checked of
 *	tuples dropped
 * @bad: set to the index of the interval whose check failed
 */
struct isdm_pi_xfer {
	u32		interval;
	u8		type;
	u32		ref;
	unsigned int	checks;
	u32		bad;
};

struct sg_table;
int isdm_bounce_alloc(struct sg_table *t, u32 len, gfp_t gfp);
void isdm_bounce_free(struct sg_table *t);
int isdm_bounce_copy(struct sg_table *bounce, struct scatterlist *sgl,
		     u32 len, bool to_bounce);
int isdm_pi_copy(struct scatterlist *wire, struct scatterlist *data,
		 struct scatterlist *prot, u32 wire_len, bool to_wire,
		 struct isdm_pi_xfer *x);

int isdm_conn_attach(struct isdm_conn *conn, struct ib_device *ib_dev,
		     const struct isdm_conn_ops *ops);
void isdm_conn_unregister(struct isdm_conn *conn);
void isdm_conn_detach(struct isdm_conn *conn);
void isdm_conns_walk(const struct isdm_conn_ops *ops,
		     void (*fn)(struct isdm_conn *conn, void *arg), void *arg);

/**
 * struct isdm_feature_param - a module parameter that switches what one
 *	side offers in the Annex A12 exchange
 * @on: offered (the default)
 *
 * Read with READ_ONCE() once per connection, by isdm_caps_offer().
 */
struct isdm_feature_param {
	bool	on;
};

struct seq_file;
void isdm_mode_show(struct seq_file *m, const struct isdm_mode *mode);

extern const struct kernel_param_ops isdm_param_zbva_ops;
extern const struct kernel_param_ops isdm_param_send_inv_ops;

/* the smallest ack_timeout taken: 4.096 us * 2^10 = 4.2 ms a try */
#define ISDM_ACK_TIMEOUT_MIN	10
extern const struct kernel_param_ops isdm_param_ack_timeout_ops;
extern const struct kernel_param_ops isdm_param_retry_count_ops;
int isdm_cm_set_ack_timeout(struct rdma_cm_id *cm_id,
			    const unsigned int *ack_timeout);
void isdm_caps_offer(const struct isdm_device *dev,
		     const struct isdm_feature_param *zbva,
		     const struct isdm_feature_param *send_inv,
		     struct isdm_caps *caps);

#endif /* ISDM_ISDM_H */
