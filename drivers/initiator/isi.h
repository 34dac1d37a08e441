/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_iser: iSER initiator, the open-iscsi transport "iser" on the iSER
 * datamover core. Objects shared by the files of the module.
 *
 * The files, top down, and the files each one calls. No file calls one
 * above it, so the calls between files have no cycle:
 *
 *   main.c      the module, the SCSI host template with its error
 *               handlers, sessions, the iscsi_transport
 *               -> cm, login, teardown, tx, mr, pi, debugfs, conn
 *   cm.c        rdma_cm: ep_connect, the CM event handler, ep_poll,
 *               ep_disconnect -> teardown, rx, mr, conn
 *   login.c     bind_conn, start_conn -> hello, rx, mr, debugfs
 *   teardown.c  stop_conn, the release of a connection, device removal
 *               -> rx, mr, debugfs, conn
 *   tx.c        Sends and their completions -> mr, conn
 *   rx.c        receive buffers and the PDUs received -> hello, conn
 *   mr.c        FRWR registration, bounce buffers, invalidation
 *               -> pi, conn
 *   pi.c        T10 protection information: the host's registration, the
 *               bounce buffer in the wire layout, libiscsi's check
 *   hello.c     the iSER Hello, its reply and the wait for it
 *   debugfs.c   the debugfs view
 *   conn.c      the connection list, the "fail once" path
 *
 * A CM event (cm.c) and device removal (teardown.c) end a connection the
 * same way, isi_cm_failed(), which sits in conn.c below both. The receive
 * path hands the HelloReply to hello.c and login.c waits for it there, so
 * the Hello has a file of its own below rx.c and login.c. The inline
 * helper isi_qp_conn() and the core's send queue credits (@sq) serve
 * tx.c, rx.c, mr.c and hello.c alike.
 */
#ifndef ISI_H
#define ISI_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/rdma_cm.h>
#include <scsi/libiscsi.h>
#include <scsi/scsi_transport_iscsi.h>

#include "isdm/isdm.h"

/* login and text request/response data: libiscsi's login buffer size */
#define ISI_LOGIN_DATA_MAX	ISCSI_DEF_MAX_RECV_SEG_LEN
/* tasks of a session (SCSI + management), libiscsi rounds to a power of 2 */
#define ISI_CMDS_MAX		128
/* receives beyond one per task: NOP-In pings, async events, rejects */
#define ISI_RX_EXTRA		16
/* full-feature receive data segment: at least 8 KiB, at most 256 KiB */
#define ISI_RX_DATA_MIN		ISCSI_DEF_MAX_RECV_SEG_LEN
#define ISI_RX_DATA_MAX		262144
/*
 * Full-feature receive buffer: iSER header (either form), BHS and up to
 * 436 data bytes, which takes every response but a large Text Response
 * (sense data is at most 254 bytes); the rest of a larger message goes to
 * the connection's spill buffer (isi_rx_ffp_post())
 */
#define ISI_RX_SMALL		512
/*
 * Data segments of a WRITE whose data all goes as immediate data, sent from
 * its pages without registration: the 8 KiB TargetRecvDataSegmentLength of
 * Linux targets in two pages. A buffer in more pieces (an unaligned start,
 * a larger segment) takes the registered path. Three SGEs per Send keep a
 * soft-RoCE send WQE at 256 bytes (208 + 3 x 16); a fourth would double it
 * to 512, and the send queue's memory with it.
 */
#define ISI_IMM_SGE		2
/*
 * Send queue slots for unsolicited Data-Outs, and for the LOCAL_INV of an
 * MR a reset left valid, beyond three per task (isi_route_resolved()). A
 * SCSI Command reserves the slots of all its Data-Outs with its own, so a
 * command that would need more sends none (isi_dataouts_count()).
 */
#define ISI_DATAOUT_MAX		120
/*
 * The longest CDB (the SCSI host's max_cmd_len): the 32-byte CDBs of
 * READ(32) and WRITE(32) (SBC-3 5.15, 5.36), which sd sends to a LUN with
 * protection type 2. Its last 16 bytes travel in an extended CDB AHS
 * (RFC 7143 11.2.1.2, 11.3.8) right behind the BHS: AHSLength, AHSType
 * and a reserved byte, then the bytes, a multiple of 4 in all.
 */
#define ISI_CDB_MAX		32
#define ISI_AHS_MAX		(4 + ISI_CDB_MAX - ISCSI_CDB_SIZE)
/*
 * Largest transfer of one command (module parameter max_io_kb): the
 * default, and the range accepted. A session gets at most what the
 * device's fast registration page list holds (one page of it kept for a
 * misaligned first page); the SCSI host's sg_tablesize is that many 4 KiB
 * pages and its max_sectors as many bytes.
 */
#define ISI_MAX_IO_KB_DEF	512
#define ISI_MAX_IO_KB_MIN	64
#define ISI_MAX_IO_KB_MAX	16384

enum isi_state {
	ISI_PENDING = 1,
	ISI_UP,
	ISI_TERMINATING,
	ISI_DOWN,
};

/* how long ib_iser waits for the HelloReply to its Hello (hello=on) */
#define ISI_HELLO_TIMEOUT_MS	5000

/**
 * enum isi_hello_mode - when the initiator sends an iSER Hello (module
 *	parameter hello)
 * @ISI_HELLO_AUTO: on iWARP only, to a target whose MPA reply carries no
 *	Annex A12 header (not a Linux one, which misreads a Hello); never on
 *	InfiniBand or RoCE, where Annex A12 moves IRD and ORD into the CM
 *	REQ/REP
 * @ISI_HELLO_ON: always
 * @ISI_HELLO_OFF: never
 */
enum isi_hello_mode {
	ISI_HELLO_AUTO,
	ISI_HELLO_ON,
	ISI_HELLO_OFF,
};

/**
 * enum isi_hello_state - the Hello exchange of one connection
 * @ISI_HELLO_NONE: no Hello sent
 * @ISI_HELLO_SENT: Hello posted; the next message received must be the
 *	HelloReply
 * @ISI_HELLO_DONE: the target accepted (&isi_conn.hello_res holds its
 *	answer)
 * @ISI_HELLO_FAILED: a rejecting, malformed or missing HelloReply; the
 *	connection does not start
 */
enum isi_hello_state {
	ISI_HELLO_NONE,
	ISI_HELLO_SENT,
	ISI_HELLO_DONE,
	ISI_HELLO_FAILED,
};

/**
 * struct isi_tx - one outgoing Send of a task
 * @send: the core's Send descriptor; its @hdr points at @hdr, mapped per
 *	Send (isdm_tx_build()) and unmapped by its completion
 * @hdr: iSER header (ending at offset %ISDM_HDR_LEN_EXT), BHS and the
 *	AHS of a SCSI Command, where libiscsi builds the BHS and AHS
 *	(task->hdr)
 * @nr_wr: send queue slots the Send and the WRs chained before it use
 * @task: the task the Send belongs to (a reference is held while posted)
 * @put_task: drop libiscsi's own reference too (PDU without a response)
 * @dataout: allocated for one Data-Out, freed on completion
 * @next: the next Data-Out of the command, while they wait to be posted
 */
struct isi_tx {
	struct isdm_tx		send;
	u8			hdr[ISDM_TX_HDR_MAX + ISI_AHS_MAX];
	int			nr_wr;
	struct iscsi_task	*task;
	bool			put_task;
	bool			dataout;
	struct isi_tx		*next;
};

/**
 * struct isi_fr - one fast registration descriptor
 * @entry: in the connection's free list
 * @mr: the memory region
 * @valid: the MR is registered and must be invalidated before reuse
 * @held: the bounce buffer of a task that ended while @mr still reached
 *	it (no SCSI Response: error handling ended the task); freed once
 *	@mr is invalid, and until then @mr is not handed out (@held.sgl is
 *	NULL when there is none)
 */
struct isi_fr {
	struct list_head	entry;
	struct ib_mr		*mr;
	bool			valid;
	struct sg_table		held;
};

/**
 * struct isi_task - per-task data (task->dd_data)
 * @tx: the command or management PDU's Send
 * @fr: registration of the SCSI buffer, or NULL
 * @sgl: the mapped scatterlist: the command's, or that of @bounce
 * @nents: mapped scatterlist entries, 0 if not mapped
 * @dir: DMA direction of the mapping
 * @sg_count: entries of @sgl
 * @prev_key: key byte of @fr before this registration
 * @prev_valid: @fr's valid state before this registration
 * @cmd_sent: the SCSI Command was posted
 * @rsv: the read STag was advertised
 * @wsv: the write STag was advertised
 * @rsp_seen: the SCSI Response arrived (a second one is a protocol error)
 * @rsp_good: that response was GOOD status, command completed
 * @rsp_resid: that response reported an underflow or an overflow
 * @inv_slot: a send queue slot is held for the LOCAL_INV that follows a
 *	response without remote invalidation
 * @pi: @bounce holds the data in the wire layout of protection
 *	information (pi.c)
 * @pi_split: a protected READ's data was handed to the command
 * @bounce: page-aligned copy of the data (ZBVA with a misaligned buffer),
 *	in single pages; @bounce.sgl is NULL when there is none
 * @inv_cqe: completion of that LOCAL_INV; the task reference it holds
 *	keeps the command from completing to SCSI until then
 *
 * libiscsi allocates each task of a session with kzalloc(), &struct
 * iscsi_task and this together: the fields are ordered without holes so
 * that the two fit in 512 bytes (504 on 6.1 and 6.12) and take a
 * kmalloc-512 object, not one of 1 KiB (64 KiB more per session).
 */
struct isi_task {
	struct isi_tx		tx;
	struct isi_fr		*fr;
	struct scatterlist	*sgl;
	int			nents;
	enum dma_data_direction	dir;
	int			sg_count;
	u8			prev_key;
	bool			prev_valid;
	bool			cmd_sent;
	bool			rsv;
	bool			wsv;
	bool			rsp_seen;
	bool			rsp_good;
	bool			rsp_resid;
	bool			inv_slot;
	bool			pi;
	bool			pi_split;
	struct sg_table		bounce;
	struct ib_cqe		inv_cqe;
};

/**
 * struct isi_host - per-host data (after libiscsi's &struct iscsi_host):
 *	what the host's current connection negotiated, shown in debugfs
 * @lock: every field below
 * @dbg: the host's debugfs directory
 * @up: a connection is started; the values below are its own (otherwise
 *	those of the last one)
 * @starts: connections started on this host (1 + recoveries)
 * @mode: header form, ZBVA and Send with Invalidate of the CM exchange
 * @ird: RDMA Reads the target may have outstanding against us (QP IRD)
 * @ord: RDMA Reads we may have outstanding (QP ORD; we issue none)
 * @ack_timeout: the QP's local ACK timeout exponent (4.096 us * 2^N)
 * @retry_cnt: the QP's transport retry count
 * @max_io: largest transfer of one command in bytes
 * @nr_rx: full-feature receive buffers posted
 * @rx_data_max: data segment bytes a message may carry (the spill
 *	buffer's size follows from it)
 * @rx_spilled: messages longer than one receive buffer (%ISI_RX_SMALL)
 *	received by this host's connections, live
 * @bounce_held: how many bounce buffers of tasks that ended while their
 *	MR still reached them were kept with the MR until it was invalidated
 *	(isi_fr.held); a running count, never decremented
 * @pi: the host carries T10 protection information (pi.c), set once when
 *	the session is created
 * @hello: the connection exchanged Hello and HelloReply
 * @hello_ord: the iSER-ORD of that HelloReply
 * @hello_ver: the iSER version of that HelloReply
 * @spill: the pages of the spill buffer, kept from one connection of the
 *	session to the next (isi_rx_ffp_post()), or NULL
 * @spill_bytes: their size
 * @spill_lent: a connection has @spill mapped and gives it back when it
 *	stops (isi_rx_spill_return())
 */
struct isi_host {
	struct mutex		lock;		/* every field below */
	struct dentry		*dbg;
	bool			up;
	u32			starts;
	struct isdm_mode	mode;
	u32			ird;
	u32			ord;
	u8			ack_timeout;
	u8			retry_cnt;
	u32			max_io;
	u32			nr_rx;
	u32			rx_data_max;
	atomic_t		rx_spilled;
	atomic_t		bounce_held;
	bool			pi;
	bool			hello;
	u16			hello_ord;
	u8			hello_ver;
	void			*spill;
	u32			spill_bytes;
	bool			spill_lent;
};

/**
 * struct isi_conn - one iSER connection (the endpoint's data)
 * @base: the rdma_cm id (NULL once released), the device (NULL before
 *	address resolution), CQ and QP, and the mode the CM exchange fixed
 * @ep: the iSCSI endpoint, NULL after ep_disconnect
 * @iconn: the bound libiscsi connection, or NULL
 * @lock: state, binding, resources
 * @state: &enum isi_state
 * @wq: woken when @state leaves %ISI_PENDING
 * @stop_comp: stop_conn is done with a bound connection
 * @release_work: waits for @stop_comp and releases
 * @entry: in the module's connection list
 * @offer: what our CM REQ offered (device abilities and module switches)
 * @ird: the QP's responder resources (incoming RDMA Reads)
 * @ord: the QP's initiator depth (outgoing RDMA Reads)
 * @ack_timeout: the QP's local ACK timeout exponent
 * @retry_cnt: the QP's transport retry count
 * @dst: the target's address (ep_connect's), for the log lines: those
 *	written without @lock cannot read the CM id, which device removal
 *	may free meanwhile
 * @rep_pd: the target's CM REP (MPA reply on iWARP) carried private data
 * @established: rdma_cm reported ESTABLISHED
 * @ffp: full feature phase receive buffers are posted
 * @login: the login/text response buffer (8 KiB data) and the buffer of
 *	the login/text request data (mapped once)
 * @login_posted: @login.rx is posted
 * @rx_ring: the full-feature receive buffers, packed in pages
 * @rx: their descriptors (@rx_ring.desc), %ISI_RX_SMALL bytes each
 * @nr_rx: entries of @rx
 * @rx_data_max: data segment bytes a message may carry
 * @spill: where the part of a message beyond %ISI_RX_SMALL lands, for
 *	every @rx buffer; its first %ISI_RX_SMALL bytes stay free for the
 *	head of the message (isi_rx_unspill()); whole pages, the session's
 *	(@spill_host) or, while an earlier connection of the session still
 *	has those, the connection's own; NULL when there is none
 * @spill_dma: its DMA address
 * @spill_size: its size: the largest message
 * @spill_bytes: the size of its pages
 * @spill_host: the host whose pages @spill are, or NULL for pages of the
 *	connection's own
 * @spill_sge: the receive SGE into it, second of every @rx work request
 * @frs: fast registration descriptors
 * @nr_frs: entries of @frs
 * @fr_free: free descriptors
 * @fr_lock: protects @fr_free
 * @reg_cqe: completion of unsignaled REG_MR and LOCAL_INV (errors only)
 * @sq: send queue slots, taken before each post
 * @imm_sge: data SGEs a Send may carry besides the headers (at most
 *	%ISI_IMM_SGE, fewer if the device allows fewer)
 * @hello: the iSER Hello we send (RFC 5046 9.3)
 * @hello_tx: its Send, mapped while posted
 * @hello_state: &enum isi_hello_state; written by the receive path and
 *	read by isi_conn_start() (store-release, load-acquire)
 * @hello_res: the HelloReply, valid in %ISI_HELLO_DONE
 */
struct isi_conn {
	struct isdm_conn	base;
	struct iscsi_endpoint	*ep;
	struct iscsi_conn	*iconn;
	struct mutex		lock;		/* state, binding, resources */
	int			state;
	wait_queue_head_t	wq;
	struct completion	stop_comp;
	struct work_struct	release_work;
	struct list_head	entry;
	struct isdm_caps	offer;
	u32			ird;
	u32			ord;
	u8			ack_timeout;
	u8			retry_cnt;
	struct sockaddr_storage	dst;
	bool			rep_pd;
	bool			established;
	bool			ffp;

	struct isdm_login_buf	login;
	bool			login_posted;

	struct isdm_rx_ring	rx_ring;
	struct isdm_rx_desc	*rx;
	u32			nr_rx;
	u32			rx_data_max;
	void			*spill;
	u64			spill_dma;
	u32			spill_size;
	u32			spill_bytes;
	struct isi_host		*spill_host;
	struct ib_sge		spill_sge;

	struct isi_fr		*frs;
	u32			nr_frs;
	struct list_head	fr_free;
	spinlock_t		fr_lock;	/* fr_free */

	struct ib_cqe		reg_cqe;
	struct isdm_credits	sq;
	u32			imm_sge;

	struct isdm_hello	hello;
	struct isdm_tx		hello_tx;
	int			hello_state;
	struct isdm_hello_result hello_res;
};

/* The connection of a completion's QP. */
static inline struct isi_conn *isi_qp_conn(struct ib_wc *wc)
{
	return wc->qp->qp_context;
}

/* conn.c */
extern struct list_head isi_conn_list;
extern struct mutex isi_conn_mutex;
bool isi_fail(struct isi_conn *ic, enum iscsi_err err);
bool isi_in_use(struct isi_conn *ic);
void isi_wc_error(struct isi_conn *ic, struct ib_wc *wc, const char *what);
void isi_cm_failed(struct isi_conn *ic, int err);

/* debugfs.c */
void isi_host_update(struct isi_conn *ic, struct iscsi_conn *conn, bool up);
void isi_debugfs_host_add(struct isi_host *ih, unsigned int host_no);
void isi_debugfs_init(void);
void isi_debugfs_exit(void);

/* hello.c */
void isi_hello_reply(struct isi_conn *ic, const u8 *buf, u32 len);
bool isi_hello_wanted(struct isi_conn *ic);
int isi_hello_send(struct isi_conn *ic);
int isi_hello_wait(struct isi_conn *ic);

/* pi.c */
bool isi_pi_host_setup(struct Scsi_Host *shost);
bool isi_pi_cmd(struct scsi_cmnd *sc);
int isi_pi_bounce(struct isi_task *it, struct scsi_cmnd *sc);
u8 isi_check_protection(struct iscsi_task *task, sector_t *sector);

/* mr.c */
u32 isi_io_pages(struct ib_device *ib_dev, u32 max_io_kb);
int isi_fr_pool_init(struct isi_conn *ic, u32 nr, u32 pages);
void isi_fr_pool_destroy(struct isi_conn *ic);
int isi_fr_fence(struct isi_conn *ic);
void isi_reg_done(struct ib_cq *cq, struct ib_wc *wc);
void isi_unmap_data(struct isi_conn *ic, struct isi_task *it,
		    struct scsi_cmnd *sc);
int isi_reg_data(struct isi_conn *ic, struct iscsi_task *task,
		 struct isdm_stags *st, struct ib_send_wr **first,
		 struct ib_reg_wr *reg, struct ib_send_wr *inv);
void isi_reg_undo(struct isi_task *it);
void isi_detach_tasks(struct isi_conn *ic, struct iscsi_conn *conn);

/* rx.c */
int isi_rx_init(struct isi_conn *ic);
u32 isi_rx_count(u32 cmds_max);
int isi_rx_ffp_post(struct isi_conn *ic, struct isi_host *ih, u32 nr,
		    u32 data_max);
void isi_rx_spill_return(struct isi_conn *ic);
void isi_rx_spill_free(struct isi_host *ih);
void isi_rx_destroy(struct isi_conn *ic);

/* tx.c */
int isi_xmit_task(struct iscsi_task *task);
int isi_init_task(struct iscsi_task *task);
void isi_cleanup_task(struct iscsi_task *task);
int isi_alloc_pdu(struct iscsi_task *task, u8 opcode);
int isi_tx_init(void);
void isi_tx_exit(void);

/* teardown.c */
extern struct workqueue_struct *isi_release_wq;
extern const struct isdm_conn_ops isi_conn_ops;
void isi_conn_terminate(struct isi_conn *ic);
void isi_conn_release(struct isi_conn *ic);
void isi_release_work(struct work_struct *work);
void isi_conn_stop(struct iscsi_cls_conn *cls_conn, int flag);

/* login.c */
int isi_conn_bind(struct iscsi_cls_session *cls_session,
		  struct iscsi_cls_conn *cls_conn, u64 transport_eph,
		  int is_leading);
int isi_conn_start(struct iscsi_cls_conn *cls_conn);

/* cm.c */
struct iscsi_endpoint *isi_ep_connect(struct Scsi_Host *shost,
				      struct sockaddr *dst,
				      int non_blocking);
int isi_ep_poll(struct iscsi_endpoint *ep, int timeout_ms);
void isi_ep_disconnect(struct iscsi_endpoint *ep);
int isi_get_ep_param(struct iscsi_endpoint *ep, enum iscsi_param param,
		     char *buf);

#endif /* ISI_H */
