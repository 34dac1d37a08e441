/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_isert: the LIO iSER transport (ISCSI_INFINIBAND) on the datamover core.
 *
 * The files, top down, and the files each one calls. No file calls one
 * above it, so the calls between files have no cycle:
 *
 *   main.c        the module and LIO's transport table; its workqueues
 *                 serve every file -> cm, login, lio, rdma, teardown,
 *                 debugfs
 *   debugfs.c     the debugfs view -> teardown, tx, conn
 *   teardown.c    LIO's wait_conn and free_conn: the close of a connection
 *                 LIO owns -> lio_quirks, rdma, tx, conn
 *   cm.c          listening, connection requests and accept, CM events;
 *                 LIO's portal callbacks -> login, rdma, conn
 *   login.c       the login phase, the full-feature rings -> rx, conn
 *   lio.c         LIO's callbacks for responses
 *                 -> lio_quirks, tx, cmd, rw
 *   lio_quirks.c  work-arounds for LIO's core -> cmd, rw
 *   rdma.c        RDMA Reads of a WRITE's data, Data-In as RDMA Writes
 *                 -> tx, cmd, rw, pi, conn
 *   tx.c          response Sends and their completions
 *                 -> rx, cmd, rw, conn
 *   rx.c          received full-feature messages -> cmd, pi, conn
 *   cmd.c         our part of an LIO command: bind, alloc, put -> rw, conn
 *   rw.c          rdma_rw contexts and the send queue room they take
 *                 -> pi
 *   pi.c          T10 protection information: the bounce buffer in the
 *                 wire layout, the check of a protected command's length
 *   conn.c        references, state, the "fail once" path, the pre-login
 *                 timer and bounds, device removal
 *
 * tx.c calls into rx.c for one thing: a Text continuation that arrived
 * before the Send of the part it continues completed is processed by that
 * Send's completion. rx.c sends nothing itself: LIO answers what it is
 * handed through lio.c, and the HelloReply goes to the core directly.
 */
#ifndef IST_H
#define IST_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/semaphore.h>
#include <linux/workqueue.h>
#include <rdma/rdma_cm.h>
#include <rdma/rw.h>
#include <target/iscsi/iscsi_transport.h>

#include "isdm/isdm.h"

/*
 * A slot of a connection's premapped Send buffers (&struct isdm_tx_ring):
 * the headers, then a short data segment sent inline with them in one
 * SGE: sense data (SenseLength and up to 96 bytes), a Reject's copy of
 * the rejected BHS, a short ping or Text payload.
 */
#define IST_TX_SLOT		256
#define IST_TX_INLINE		(IST_TX_SLOT - ISDM_TX_HDR_MAX)
/* Login PDUs carry at most 8192 bytes of keys (LIO's MAX_KEY_VALUE_PAIRS) */
#define IST_LOGIN_DATA_MAX	8192
/* room for an AHS (extended CDB) in a receive buffer */
#define IST_AHS_MAX		256
/*
 * Bound on full-feature receive buffers: LIO's largest CmdSN window is
 * 512; unsolicited Data-Out adds to it. A window beyond this only makes
 * the initiator wait (RNR retry).
 */
#define IST_MAX_RX		512
/* receive buffers of a discovery session */
#define IST_DISCOVERY_RX	8
/*
 * Responses in flight the send queue is sized for: twice Linux
 * initiators' default queue depth, four times LIO's default CmdSN window.
 * A deeper window fills the send queue, and a full send queue is
 * backpressure (LIO's queue-full retry, the rdma_wait list). The send
 * queue is most of a connection's memory: its entries are sized for the
 * QP's SGEs per WR (soft-RoCE: 1 KiB each with its 32, and it rounds
 * their count up to a power of two).
 */
#define IST_MAX_SENDS		256
/* Sends beyond those: NOP-In pings, async events, HelloReply */
#define IST_EXTRA_SENDS		16
/* buckets of the waiting SCSI commands by ITT: a few per bucket at QD128 */
#define IST_ITT_HASH_BITS	6
/* commands with RDMA Reads or Writes in flight the send queue is sized for */
#define IST_MAX_RDMA_CMDS	128
/*
 * I/O size (in 4 KiB pages) the send queue is sized for: 512 KiB, Linux
 * initiators' default. Larger I/Os work (up to IST_MAX_RDMA_CMDS times
 * this in one command). When the send queue is full, Data-In waits in
 * LIO's queue-full retry (-EAGAIN) and RDMA Reads on the connection's
 * rdma_wait list.
 */
#define IST_RDMA_PAGES		128

/**
 * enum ist_conn_state - what is true of a connection in each state
 * @IST_CONN_ACCEPTED: REP sent; waiting for the first login PDU. LIO does
 *	not know the connection; the pre-login timer runs.
 * @IST_CONN_PENDING: the first login PDU arrived; on the portal's pending
 *	list, waiting for LIO's login thread to accept it.
 * @IST_CONN_BOUND: LIO owns the connection and runs the login.
 * @IST_CONN_FULL_FEATURE: login done; full-feature receives are posted.
 * @IST_CONN_TERMINATING: rdma_disconnect() was called.
 * @IST_CONN_DOWN: released or being released.
 */
enum ist_conn_state {
	IST_CONN_ACCEPTED,
	IST_CONN_PENDING,
	IST_CONN_BOUND,
	IST_CONN_FULL_FEATURE,
	IST_CONN_TERMINATING,
	IST_CONN_DOWN,
};

/**
 * enum ist_cm_kind - what the context of an rdma_cm id points to
 * @IST_CM_PORTAL: the @cm_kind of a &struct ist_np: a listening id, or a
 *	new connection's id during its CONNECT_REQUEST (rdma_cm gives it the
 *	listener's context)
 * @IST_CM_CONN: the @cm_kind of a &struct ist_conn
 *
 * ist_cma_handler() routes every event by this tag. The id's QP says
 * nothing reliable: a connection's id may outlive its QP.
 */
enum ist_cm_kind {
	IST_CM_PORTAL = 1,
	IST_CM_CONN,
};

/* how often a portal that lost its device tries to listen again */
#define IST_RELISTEN_MS		2000

/*
 * How long ist_abort_task_attr() holds the first aborted command to see
 * what the target core did with it: a command the core still holds then
 * (a TASK ABORTED status not yet acknowledged) teaches nothing.
 */
#define IST_ABORT_TA_WATCH	(10 * HZ)

/**
 * struct ist_np - a portal with iSER enabled
 * @cm_kind: IST_CM_PORTAL; the context of its rdma_cm ids points here
 * @ref: one for LIO's portal (dropped by ist_free_np()), one per connection
 *	that arrived on it (dropped when the connection is freed), so a
 *	connection's pre-login paths may always lock @lock
 * @np: LIO's portal, valid until ist_free_np()
 * @cm_id: the listening rdma_cm id, NULL while there is no listener
 * @dead_id: a listening id whose device went away, destroyed by
 *	@relisten_work (never in its own CM handler)
 * @closing: ist_free_np() runs; no new listener, no more @relisten_work
 * @relisten_work: destroys @dead_id and listens again, every
 *	IST_RELISTEN_MS until it succeeds
 * @sem: counts connections ready for ist_accept_np()
 * @lock: protects the lists, the counters, @cm_id, @dead_id, @closing
 * @accepted: connections before their first login PDU (the pre-login set)
 * @pending: connections whose first login PDU arrived, not yet given to LIO
 * @nr_accepted: length of @accepted
 */
struct ist_np {
	enum ist_cm_kind	cm_kind;
	struct kref		ref;
	struct iscsi_np		*np;
	struct rdma_cm_id	*cm_id;
	struct rdma_cm_id	*dead_id;
	bool			closing;
	struct delayed_work	relisten_work;
	struct semaphore	sem;
	struct mutex		lock;		/* lists, counter, ids, closing */
	struct list_head	accepted;
	struct list_head	pending;
	unsigned int		nr_accepted;
};

/**
 * struct ist_conn_view - what a connection negotiated, for debugfs
 * @discovery: a discovery session
 * @tgt_rdsl: TargetRecvDataSegmentLength (what we receive)
 * @ini_rdsl: InitiatorRecvDataSegmentLength (what we send at most)
 * @max_xmit: MaxXmitDataSegmentLength LIO uses
 * @hellos: Hello messages answered
 * @hello_ver: the iSER version of the last HelloReply
 * @hello_rej: the last HelloReply had the reject bit
 *
 * The login fields are written under the connection's @lock, the Hello
 * fields by the receive completion alone; ist_conns_show() reads them.
 */
struct ist_conn_view {
	bool	discovery;
	u32	tgt_rdsl;
	u32	ini_rdsl;
	u32	max_xmit;
	u32	hellos;
	u8	hello_ver;
	bool	hello_rej;
};

/**
 * struct ist_conn - one iSER connection of the target
 * @base: rdma_cm id, device, CQ and QP, and the mode (header form and Send
 *	with Invalidate), fixed at accept
 * @cm_kind: IST_CM_CONN; the context of @base.cm_id points here
 * @isnp: the portal it arrived on
 * @conn: LIO's connection, once bound
 * @state: see &enum ist_conn_state; changed under @lock
 * @lock: protects @state
 * @ref: references: the CM side (until @release_work), LIO (accept to
 *	free_conn), the pre-login timer (while @prelogin_work is queued or
 *	runs); the last put queues @free_work
 * @np_entry: on one of @isnp's lists while LIO does not own it
 * @established: the CM reported ESTABLISHED
 * @ord: RDMA Reads we may have outstanding (CM initiator depth)
 * @ack_timeout: the QP's local ACK timeout exponent, once accepted
 * @retry_cnt: the QP's transport retry count (the initiator's REQ's)
 * @rdma: RDMA work requests the send queue holds besides the sends
 *	(@rdma.size; a command whose transfer needs more can never be
 *	posted) and how many are free: a context is posted only when all
 *	its WRs fit, since a post that does not fit leaves part of its
 *	chain in the queue
 * @src: the peer's address, for the per-source pre-login bound
 * @listed_at: when it joined its portal's @accepted list (jiffies): its
 *	age, for the pre-login bounds (ist_np_make_room())
 * @login: the login receive buffer and the buffer of the login
 *	response keys (mapped once)
 * @login_len: bytes received in @login.rx
 * @login_tx: the login response
 * @login_hdr: its headers
 * @login_req_comp: a login PDU is ready for LIO
 * @login_rsp_pending: the final login response waits for ist_get_rx_pdu()
 * @login_done: LIO built the final login response; its login work is done
 *	with the connection (under @lock)
 * @login_waiting: LIO's login work waits for the next login PDU (a
 *	non-final response was posted; under @lock)
 * @login_closed: the connection failed during login: LIO's login work is
 *	woken, or will be once it waits, and ist_get_login_rx() fails
 *	(under @lock)
 * @login_queued: we queued LIO's login work at least once (under @lock)
 * @login_tx_done: completed when no login response is in flight
 * @rx_ring: full-feature receive buffers, packed at their exact size
 * @tx_ring: the Send buffers of full-feature commands, one per tag
 * @rx_max_data: the largest data segment we accept in full feature phase
 * @prelogin_work: closes the connection when no login PDU arrives in time
 * @release_work: disconnects (if nobody did), drains, drops the CM side's
 *	reference
 * @free_work: destroys the rdma_cm id, then the QP, then everything else;
 *	queued by the last put, so no release runs in a CM handler
 * @logout_posted: a Logout Response was posted
 * @dev_removed: the device is going away
 * @unbound_fail: why the connection failed while in ACCEPTED or PENDING
 *	state (the first reason), for a failure that comes before its
 *	CONNECT_REQUEST handler put it on its portal's list
 * @hello_tx: the HelloReply
 * @hello_reply: its bytes; the headers @hello_tx sends
 * @view: what it negotiated, shown in debugfs
 * @ffp_seen: a full-feature message arrived (a Hello must come first)
 * @hello_refused: a HelloReply with the reject bit was posted; nothing
 *	received after the Hello reaches LIO (receive completion context
 *	only)
 * @ctrl_cnt: control completions (TMF, Reject, Text) still running
 * @rdma_wait: commands whose RDMA Reads did not fit in the send queue yet,
 *	in arrival order (under @rdma_wait_lock)
 * @rdma_wait_lock: protects @rdma_wait and @rdma_wait_stopped; held while
 *	such a command is posted, so that it is not destroyed meanwhile
 * @rdma_wait_stopped: the connection is closing: nothing more is posted
 * @rdma_retry_work: posts what waits on @rdma_wait, one tick after it was
 *	queued, until it is empty
 * @rx_held: receive buffers WRITEs hold for their immediate data, used in
 *	place (&struct ist_cmd @rx_held)
 * @imm_in_place: WRITEs whose immediate data LIO used in place, since the
 *	connection started
 * @send_list: the commands whose response Send (or Data-In with it) is
 *	posted and not yet known complete, in the order posted (under
 *	@send_lock; see ist_post_send())
 * @send_lock: protects @send_list, @unsignaled_run and @sends_quiesced; held
 *	across the post, so that @send_list is in send queue order; taken in
 *	process context only
 * @scsi_waiting: SCSI commands LIO accepted whose response is not posted
 *	yet (&struct ist_cmd @scsi_waiting; see ist_post_send())
 * @itt_lock: protects @itt_hash and the commands' @scsi_waiting; taken
 *	with interrupts off, not with bottom halves off: enabling them again
 *	runs the softirqs pending, and a software device's (soft-RoCE on
 *	6.1) would then run in the middle of the receive and post paths
 *	instead of gathered in ksoftirqd (ist_post_send())
 * @itt_hash: the same commands by ITT (ist_itt_waiting())
 * @data_in_listed: Data-In Sends on @send_list (under @send_lock)
 * @unsignaled_run: unsignaled Sends posted since the last signaled one
 * @sends_quiesced: the connection is closing: every Send is signaled
 * @unsignaled_sends: Sends posted unsignaled, since the connection started
 */
struct ist_conn {
	struct isdm_conn	base;
	enum ist_cm_kind	cm_kind;
	struct ist_np		*isnp;
	struct iscsit_conn	*conn;
	enum ist_conn_state	state;
	struct mutex		lock;		/* state */
	struct kref		ref;
	struct list_head	np_entry;
	bool			established;
	u8			ord;
	u8			ack_timeout;
	u8			retry_cnt;
	struct isdm_credits	rdma;
	struct sockaddr_storage	src;
	unsigned long		listed_at;

	struct isdm_login_buf	login;
	u32			login_len;
	struct isdm_tx		login_tx;
	u8			login_hdr[ISDM_TX_HDR_MAX];
	struct completion	login_req_comp;
	bool			login_rsp_pending;
	bool			login_done;
	bool			login_waiting;
	bool			login_closed;
	bool			login_queued;
	struct completion	login_tx_done;

	struct isdm_rx_ring	rx_ring;
	struct isdm_tx_ring	tx_ring;
	u32			rx_max_data;

	struct delayed_work	prelogin_work;
	struct work_struct	release_work;
	struct work_struct	free_work;
	bool			logout_posted;
	bool			dev_removed;
	const char		*unbound_fail;
	struct isdm_tx		hello_tx;
	struct isdm_hello_reply	hello_reply;
	struct ist_conn_view	view;
	bool			ffp_seen;
	bool			hello_refused;
	atomic_t		ctrl_cnt;
	struct list_head	rdma_wait;
	spinlock_t		rdma_wait_lock;	/* @rdma_wait, @rdma_wait_stopped */
	bool			rdma_wait_stopped;
	struct delayed_work	rdma_retry_work;
	atomic_t		rx_held;
	atomic_long_t		imm_in_place;
	struct list_head	send_list;
	spinlock_t		send_lock;	/* @send_list, @unsignaled_run */
	atomic_t		scsi_waiting;
	spinlock_t		itt_lock;	/* @itt_hash, cmd @scsi_waiting */
	struct hlist_head	itt_hash[1 << IST_ITT_HASH_BITS];
	u32			data_in_listed;
	u32			unsignaled_run;
	bool			sends_quiesced;
	atomic_long_t		unsignaled_sends;
};

/**
 * struct ist_cmd - our part of an LIO command (LIO's priv_size area)
 * @conn: the connection
 * @cmd: LIO's command
 * @stags: STags and addresses its SCSI Command advertised
 * @tx: the response Send; its headers are the ring slot of the tag
 * @pdu_dma: DMA address of a data segment too long to go inline, 0 if
 *	none
 * @pdu_len: its length
 * @rw: RDMA Read/Write context
 * @rw_init: @rw was initialised
 * @rdma_need: work requests @rw takes when posted
 * @rdma_held: work requests of @ic->rdma it holds while posted; given
 *	back by the completion of its last WR
 * @rdma_waiting: on the connection's @rdma_wait list
 * @rdma_failed: its RDMA Reads can never be posted; the connection is
 *	failing and its teardown drops the command
 * @wait_entry: on the connection's @rdma_wait list
 * @tmf_acked: the acknowledgment reference of a TMF that LIO answered
 *	itself was dropped (once)
 * @abort_completed: an aborted WRITE that waited for its data was
 *	completed by ist_complete_aborted_writes() (once)
 * @comp_work: runs LIO's post handlers after a control response
 * @abort_ta_work: watches an aborted command until LIO let go of it, to
 *	learn whether LIO's core did its task-attribute bookkeeping
 *	(ist_abort_task_attr(), while that is not known yet)
 * @abort_ta_until: when the watch gives up
 * @abort_ta_watched: @abort_ta_work was queued (once per command)
 * @rx_held: the receive buffer that holds the command's data (a WRITE whose
 *	data all came as immediate data, used in place), given back by
 *	ist_rx_give_back() once, when its status is sent or it ends without
 * @imm_sg: LIO's data scatterlist of such a WRITE: the data segment in
 *	@rx_held
 * @text_cont: a continuation Text Request that arrived before the Send of
 *	the part it continues completed; taken up by ist_send_done()
 *	(CQ context only)
 * @text_cont_len: its length in bytes
 * @send_entry: on the connection's @send_list while its Send is posted
 * @send_listed: @send_entry is on the list (under @send_lock; a command
 *	LIO allocated itself starts zeroed, so this is the test, not the
 *	list head)
 * @send_unsignaled: its Send was posted unsignaled: no completion of its own
 *	comes unless it fails, and the completion of a later Send on the
 *	connection completes it (ist_send_reap())
 * @scsi_waiting: a SCSI command counted in the connection's
 *	@scsi_waiting and hashed in its @itt_hash: received, its response
 *	not posted yet (under the connection's @itt_lock)
 * @itt_node: in the connection's @itt_hash while @scsi_waiting
 * @send_data_in: its Send went behind the RDMA Writes of Data-In (counted
 *	in the connection's @data_in_listed while listed)
 * @pi_wire: a protected command's data and tuples in the wire layout,
 *	which its rdma_rw context reads or writes (pi.c); @pi_wire.sgl is
 *	NULL for any other command
 */
struct ist_cmd {
	struct ist_conn		*conn;
	struct iscsit_cmd	*cmd;
	struct isdm_stags	stags;
	struct isdm_tx		tx;
	u64			pdu_dma;
	u32			pdu_len;
	struct rdma_rw_ctx	rw;
	bool			rw_init;
	u32			rdma_need;
	u32			rdma_held;
	bool			rdma_waiting;
	bool			rdma_failed;
	struct list_head	wait_entry;
	bool			tmf_acked;
	bool			abort_completed;
	struct work_struct	comp_work;
	struct delayed_work	abort_ta_work;
	unsigned long		abort_ta_until;
	bool			abort_ta_watched;
	struct isdm_rx_desc	*rx_held;
	struct scatterlist	imm_sg;
	struct isdm_rx_desc	*text_cont;
	u32			text_cont_len;
	struct list_head	send_entry;
	bool			send_listed;
	bool			send_unsignaled;
	bool			scsi_waiting;
	struct hlist_node	itt_node;
	bool			send_data_in;
	struct sg_table		pi_wire;
};

/* main.c */
extern struct workqueue_struct *ist_wq;
extern struct workqueue_struct *ist_comp_wq;
extern struct iscsit_transport ist_transport;

/* conn.c */
extern const struct isdm_conn_ops ist_conn_ops;
void ist_np_put(struct ist_np *isnp);
void ist_conn_get(struct ist_conn *ic);
void ist_conn_put(struct ist_conn *ic);
void ist_conn_free_unaccepted(struct ist_conn *ic);
void ist_conn_destroy_work(struct work_struct *work);
void ist_release_work(struct work_struct *work);
void ist_prelogin_arm(struct ist_conn *ic);
void ist_prelogin_cancel(struct ist_conn *ic);
void ist_prelogin_timeout(struct work_struct *work);
void ist_conn_terminate(struct ist_conn *ic);
bool ist_conn_unlink(struct ist_np *isnp, struct ist_conn *ic);
void ist_conn_drop_unlinked(struct ist_conn *ic, const char *why);
void ist_np_make_room(struct ist_np *isnp,
		      const struct sockaddr_storage *src);
void ist_login_wake(struct ist_conn *ic);
void ist_conn_fail(struct ist_conn *ic, const char *why, int err);
void ist_wc_failed(struct ist_conn *ic, const struct ib_wc *wc,
		   const char *what);

/* pi.c */
enum target_prot_op ist_get_sup_prot_ops(struct iscsit_conn *conn);
bool ist_pi_cmd(const struct se_cmd *se_cmd);
int ist_pi_check_cmd(struct ist_conn *ic, struct iscsit_cmd *cmd, u32 edtl);
int ist_pi_wire_get(struct ist_cmd *icmd, enum dma_data_direction dir);
int ist_pi_split(struct ist_cmd *icmd);
void ist_pi_wire_put(struct ist_cmd *icmd);

/* rw.c */
int ist_rw_read_done(struct ist_cmd *icmd);
int ist_rw_init(struct ist_cmd *icmd, u32 offset, u64 remote, u32 rkey,
		enum dma_data_direction dir);
void ist_rw_destroy(struct ist_cmd *icmd);
bool ist_rdma_reserve(struct ist_cmd *icmd);
void ist_rdma_unreserve(struct ist_cmd *icmd);

/* cmd.c */
struct ist_cmd *ist_cmd_of(struct ib_cqe *cqe);
struct ist_cmd *ist_cmd_bind(struct iscsit_conn *conn,
			     struct iscsit_cmd *cmd);
struct iscsit_cmd *ist_alloc_cmd(struct ist_conn *ic);
bool ist_itt_waiting(struct ist_conn *ic, itt_t itt);
void ist_scsi_wait(struct ist_cmd *icmd);
void ist_rx_give_back(struct ist_cmd *icmd);
bool ist_scsi_answered(struct ist_cmd *icmd);
void ist_unlink_cmd(struct iscsit_conn *conn, struct iscsit_cmd *cmd);
bool ist_text_continues(struct ist_cmd *icmd);
void ist_put_cmd(struct ist_cmd *icmd, bool comp_err);

/* rx.c */
void ist_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void ist_rx_process(struct ist_conn *ic, struct isdm_rx_desc *rx, u32 len);

/* tx.c */
void *ist_send_bhs(struct ist_cmd *icmd);
int ist_build_send(struct ist_cmd *icmd, const void *bhs,
		   const struct isdm_stags *adv, void *data, u32 len);
int ist_post_send(struct ist_cmd *icmd, bool data_in);
void ist_unmap_pdu(struct ist_cmd *icmd);
int ist_send(struct ist_cmd *icmd, const void *bhs,
	     const struct isdm_stags *adv, void *data, u32 len);
void ist_sends_quiesce(struct ist_conn *ic);
void ist_sends_reap_unsignaled(struct ist_conn *ic);
u32 ist_sends_unsignaled_held(struct ist_conn *ic);

/* rdma.c */
void ist_rdma_retry_work(struct work_struct *work);
void ist_rdma_wait_stop(struct ist_conn *ic);
int ist_get_dataout(struct iscsit_conn *conn, struct iscsit_cmd *cmd,
		    bool recovery);
int ist_queue_data_in(struct iscsit_conn *conn, struct iscsit_cmd *cmd);

/* lio_quirks.c */

/**
 * enum ist_abort_ta - whether LIO's core does the task-attribute
 *	bookkeeping of an aborted command itself, as the first aborted
 *	command that held a place in its LUN's task order showed
 * @IST_ABORT_TA_UNKNOWN: no such command was seen yet
 * @IST_ABORT_TA_LIO_SKIPS: it does not (6.1, 6.12): ist_abort_task_attr()
 *	does it
 * @IST_ABORT_TA_LIO_DOES: it does: ist_abort_task_attr() leaves it alone
 */
enum ist_abort_ta {
	IST_ABORT_TA_UNKNOWN,
	IST_ABORT_TA_LIO_SKIPS,
	IST_ABORT_TA_LIO_DOES,
};

extern atomic_t ist_abort_ta_mode;
void ist_abort_task_attr(struct se_cmd *se_cmd);
void ist_put_unsol_pending_cmds(struct iscsit_conn *conn);
void ist_complete_aborted_writes(struct iscsit_conn *conn);
void ist_put_parked_cmds(struct iscsit_conn *conn);
void ist_put_orphan_rejects(struct iscsit_conn *conn);
void ist_log_waiting_cmds(struct ist_conn *ic);

/* lio.c */
int ist_queue_status(struct iscsit_conn *conn, struct iscsit_cmd *cmd);
int ist_immediate_queue(struct iscsit_conn *conn, struct iscsit_cmd *cmd,
			int state);
int ist_response_queue(struct iscsit_conn *conn, struct iscsit_cmd *cmd,
		       int state);
void ist_aborted_task(struct iscsit_conn *conn, struct iscsit_cmd *cmd);
void ist_unmap_cmd(struct iscsit_conn *conn, struct iscsit_cmd *cmd);

/* login.c */
void ist_conn_ready(struct ist_conn *ic);
void ist_login_recv_done(struct ib_cq *cq, struct ib_wc *wc);
int ist_get_login_rx(struct iscsit_conn *conn, struct iscsi_login *login);
int ist_put_login_tx(struct iscsit_conn *conn, struct iscsi_login *login,
		     u32 length);
void ist_get_rx_pdu(struct iscsit_conn *conn);

/* cm.c */
int ist_setup_np(struct iscsi_np *np, struct sockaddr_storage *ksockaddr);
int ist_accept_np(struct iscsi_np *np, struct iscsit_conn *conn);
void ist_free_np(struct iscsi_np *np);

/* teardown.c */
extern atomic_t ist_erl0_closes;
extern atomic_t ist_t2r_skipped;
void ist_wait_conn(struct iscsit_conn *conn);
void ist_lio_free_conn(struct iscsit_conn *conn);

/* debugfs.c */
void ist_debugfs_init(void);
void ist_debugfs_exit(void);

#endif /* IST_H */
