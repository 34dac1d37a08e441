/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iser_ffp's private header: the connection and session state its files
 * share, the modes, and the functions each file gives the others.
 *
 *   main.c        options, the table of modes, the summary line
 *   session.c     connecting, logging in, pings, reading answers
 *   offend.c      single PDUs a target must refuse, and the Hellos
 *   tasks.c       commands in flight: ordering, abort, duplicate ITTs,
 *                 misnamed Data-Out, pings never answered
 *   bigdata.c     large transfers and STags that name too little
 *   conns.c       second connections to a logged-in session
 *   prelogin.c    connections that never finish their login
 *   pi.c          protected commands with the tool's own PI tuples
 *   random.c      -m random: sessions, pings, the summary
 *   random_pdu.c  -m random: drawing each PDU
 *
 * The tool is single-threaded and drives one connection at a time, the
 * global @conn; a mode that needs a second one saves and restores it.
 */
#ifndef FFP_H
#define FFP_H

#include "iser_tool.h"

#define NR_RX		8
#define RX_SIZE		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + 8192)
#define TX_SIZE		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + 65536)
#define WAIT_SEC	10
#define HDR		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN)
#define BIG_WAIT	60

enum mode {
	NOP, HELLO, SNACK, LOGIN, SCSI, BADDLEN, BIGSEND, TEXTCONT,
	AHS0, AHSOVER, AHSTYPE, AHSNOP, AHSSHORT, CDBLONG, ECDB, BIDI, IMMF1,
	GAP, AFTERFAIL, OVERRUN, DOBIG, DOSENSE, DOGAP, NOPTTT, TMFSEQ, DROPMID,
	BIGIO, BIGQ, SHORTW, SHORTR, RANDOM, HELLOVER, HELLOBAD, HELLOLEN,
	HELLO2, LOGOUTBAD, GAPRESET, DOSHORT, READIMM, ORDABORT, TEXTBAD,
	LOGOUTCONN, ADDCONN, BADTTT, DUPITT, DUPITTW, NOREPOST, SHORTLOGIN,
	LOGINRACE, LOGINSTALL, LOGINRNR, PIGUARD,
};

/* session.c: the connection and the session on it */
extern struct itool conn;
extern uint32_t cmd_sn, exp_stat_sn;
extern const char *target_name;
extern const char *initiator_name;
extern int initial_r2t_no;	/* the target agreed to InitialR2T=No */
extern int nr_rx;		/* receive buffers of the next connection */
extern int login_send_only;	/* login() sends its first request only */
extern const char *time2retain;	/* -T */
extern uint16_t isid_qualifier;	/* the ISID's last two bytes */
/* the TSIH the target gave; the TSIH and CID the next login sends */
extern uint16_t session_tsih, login_tsih, login_cid;
/* what note_answer() saw: a Reject's reason, a SCSI status (-1: none) */
extern int reject_reason, scsi_status;

static inline unsigned char *pdu_start(unsigned char op, unsigned char flags,
				       uint32_t dlen)
{
	return itool_pdu_start(&conn, op, flags, dlen);
}

static inline int send_buf(uint32_t len)
{
	return itool_send(&conn, len);
}

static inline int recv_msg(unsigned char **msg)
{
	return itool_recv(&conn, msg, WAIT_SEC);
}

int connect_target(const char *addr, const char *port);
size_t add_key(char *buf, size_t len, const char *key, const char *val);
size_t add_iser_keys(char *buf, size_t len);
int login(void);
int ping(uint32_t itt);
unsigned char *answer(void);
void note_answer(const unsigned char *bhs);
void ffp_disconnect(void);
void ffp_release(void);
void ffp_hangup(void);
void status_str(char *buf, size_t size, int v);

/* offend.c */
extern int text_parts, text_final;	/* textcont's Text Responses */
extern int rbuf_written;		/* readimm: the target wrote data */
void offend(enum mode mode);
const char *hello(enum mode mode);

/* tasks.c */
extern int ord_first, ord_abort, ord_second;
extern unsigned int norepost_sent;
extern double norepost_held;
extern int dup_answers, dup_good;
void ordabort(void);
void bad_ttt(void);
void no_repost(unsigned long n, int hold);
void dup_itt(enum mode mode);

/* bigdata.c */
extern int big_wait_sec;	/* -W */
void big_io(char *out, size_t size);
void big_queue(char *out, size_t size);
void short_stag(enum mode mode, char *out, size_t size);

/* conns.c */
void drop_mid_login(const char *addr, const char *port);
void add_conn(const char *addr, const char *port, char *out, size_t size);

/* prelogin.c */
void short_login(const char *addr, const char *port);
void login_race(const char *addr, const char *port);
void login_stall(const char *addr, const char *port, int hold, int rnr);

/* pi.c */
void pi_guard(char *out, size_t size);

/* random.c */
extern unsigned long long seed;		/* -s */
extern unsigned long count, first_pdu;	/* -N, -F */
extern int verbose;			/* -v */
int random_run(const char *addr, const char *port);

#endif /* FFP_H */
