// SPDX-License-Identifier: GPL-2.0
/*
 * iser_ffp: an iSER initiator in userspace that logs in properly and then
 * sends, in full feature phase, what an iSER target must refuse.
 *
 * It connects over rdma_cm with Annex A12 private data (no ZBVA, so the
 * target uses the 28-byte expanded header) and logs in with one step
 * (operational stage straight to full feature phase, no authentication;
 * more Login Requests follow only if the target does not transit at
 * once): to a discovery session, or with -n TARGET to a normal session
 * with that TargetName (-i names the initiator, which needs an ACL),
 * offering InitialR2T=No, ImmediateData=Yes and FirstBurstLength=65536.
 * Then, per mode:
 *
 *   nop      a NOP-Out ping; the target must answer with a NOP-In
 *   hello    an iSER Hello as the first full-feature message; the target
 *            must answer with a HelloReply (RFC 5046 5.1.3), then a ping
 *   hellover a Hello offering only iSER version 2: the target must answer
 *            with a rejecting HelloReply and close (10.1.3.2)
 *   hellobad a Hello with MinVer 2 above MaxVer 1: malformed, the target
 *            must close without a HelloReply
 *   hellolen a Hello of 16 bytes (10.1.3.3: a format error): must close
 *            without a HelloReply
 *   hello2   a Hello answered, then a second Hello (not the first message
 *            any more): must close
 *   snack    a SNACK, which iSER forbids (RFC 5046 7.3.1); then a ping
 *   login    a Login Request in full feature phase; then a ping
 *   scsi     a SCSI Command in a discovery session; then a ping
 *   baddlen  a Text Request whose DataSegmentLength claims more than the
 *            Send carries: the target must close the connection
 *   bigsend  a NOP-Out carrying 64 KiB, more than the 8 KiB the target's
 *            receive buffers hold: the target must close the connection
 *   textbad  a Text Request of 3000 bytes that is not SendTargets=, which
 *            LIO refuses with a Reject (it may close the connection)
 *   textcont (discovery) SendTargets=All; while the Text Response has the
 *            C bit, an empty continuation Text Request with its TTT (RFC
 *            3720 10.10.4); the exchange must end in a final response
 *
 * and, before any login:
 *
 *   shortlogin  for each length from 1 to 75, one connection whose first
 *            message is a Login Request cut to that length, short of the
 *            28-byte iSER header and 48-byte BHS it needs: the target must
 *            close each without an answer. Prints only
 *            "shortlogin lengths=1-75 closed=N answered=A unsent=U
 *            no_connection=C slowest=S slow=L:S,...|none open=L,...|none
 *            rejected=R" (connections closed by the target within 10 s of
 *            the Send, with a DREQ or, when the target let go of the
 *            connection before its CM saw our RTU, a REJ (counted in R);
 *            answered with any message; whose Send failed, not
 *            established; the longest time to the close; the lengths
 *            whose close took a second or more, with the seconds; those
 *            still open after 10 s)
 *   loginrace (discovery) no receive buffer posted at first: a Login
 *            Request for the security stage (AuthMethod=None, T to the
 *            operational stage), 1 s later the one for the operational
 *            stage (T to full feature phase) while the target's first
 *            Login Response still waits in RNR retry, 1 s later the
 *            receive buffers. Prints only "loginrace first=C>N/S
 *            second=C>N/S closed=yes|no", the CSG, transit bit, NSG and
 *            status class of each Login Response received (or none): a
 *            target that builds the second response into the buffer of
 *            the first before its Send completed delivers the second
 *            twice (first=1>3/0)
 *   loginstall a Login Request for the security stage (of a discovery
 *            session, or with -n of a normal one), its Login Response,
 *            then silence for up to -W seconds (default 30): the target
 *            must close the connection. Prints only
 *            "loginstall first=C>N/S closed=yes|no after=S", S the
 *            seconds from the response to the close (or to the end)
 *   loginrnr (discovery) no receive buffer posted: a Login Request for
 *            the security stage, whose Login Response then waits in RNR
 *            retry; -W seconds (default 30) later the tool disconnects.
 *            Prints only "loginrnr closed_by_target=yes|no" (whether the
 *            target closed the connection before the tool did)
 *
 * and, in a normal session (-n), SCSI Commands (non-immediate, CmdSN in
 * order, LUN 0, no STags unless said) followed by a ping:
 *
 *   ahs0     TEST UNIT READY with an extended-CDB AHS whose AHSLength is 0
 *            (TotalAHSLength 1): must be refused
 *   ahsover  an extended-CDB AHS with AHSLength 5 in TotalAHSLength 1 (the
 *            segment overruns the AHS): must be refused
 *   ahstype  an AHS of the reserved type 3: must be refused
 *   ahsnop   a NOP-Out ping carrying an extended-CDB AHS: must be refused
 *   ahsshort a 32-byte variable-length CDB whose extended-CDB AHS carries
 *            only 17 bytes of it: must be refused
 *   cdblong  the same CDB with no AHS at all: must be refused
 *   ecdb     the same CDB complete in a well-formed extended-CDB AHS
 *            (AHSLength 17): LIO answers with a SCSI Response (CHECK
 *            CONDITION: the service action is not supported)
 *   bidi     a bidirectional command (R and W, fake STags for both) with a
 *            well-formed Expected Bidirectional Read-Data Length AHS: LIO
 *            rejects bidirectional commands with a Reject
 *   immf1    a WRITE(10) of 8 KiB carrying 4 KiB of immediate data with
 *            F=1 and no Write STag under InitialR2T=No: nothing may follow
 *            unsolicited and the target cannot fetch the rest; must be
 *            refused at once
 *   cmdsngap TEST UNIT READY with CmdSN one past the expected one (LIO
 *            defers it until the gap is filled, which never happens); a
 *            ping, then the tool disconnects and logs in again: the
 *            deferred command must not keep the old connection's teardown
 *            (and so the new login, a session reinstatement) waiting
 *   afterfail a PDU of a reserved opcode (must close the connection) and,
 *            right behind it, a command to LUN 5, which does not exist and
 *            gets CHECK CONDITION from LIO if it is still read; then a new
 *            login, which must work
 *   overrun  a WRITE(10) of 4 KiB with F=0 (unsolicited Data-Out to
 *            follow, under InitialR2T=No), no immediate data and a CmdSN
 *            far beyond MaxCmdSN, which LIO drops through its transmit
 *            thread; right behind it a reserved opcode, which closes the
 *            connection (often before that thread ran); then a new login,
 *            which must work
 *   dobig    a WRITE(10) of 512 bytes to an LBA beyond the LUN, with F=0
 *            (unsolicited Data-Out to follow, under InitialR2T=No), then
 *            a Data-Out for it of 1024 bytes at offset 0, beyond the
 *            command's EDTL: must close the connection (LIO's own check
 *            rejects it and drops a reference of the command it still
 *            uses); then a new login, which must work
 *   dosense  a WRITE(10) of 8 blocks with an EDTL of 2048 bytes and F=0
 *            (unsolicited Data-Out to follow, under InitialR2T=No), which
 *            LIO fails at once (CHECK CONDITION: a WRITE whose EDTL is
 *            not its CDB's length), then the 2048 bytes of Data-Out the
 *            initiator had already sent: the data must be discarded, the
 *            CHECK CONDITION come, and the connection stay up
 *   dogap    a WRITE(10) of 512 bytes with F=0 and a CmdSN one past the
 *            expected one (LIO defers it; its data buffer does not exist
 *            yet), then its Data-Out: must close the connection; then a
 *            new login, which must work
 *   nopttt   an immediate NOP-Out with both an ITT (a ping) and a TTT (an
 *            answer to a NOP-In), which RFC 3720 10.18 does not allow:
 *            must be refused with a Reject (LIO queues it as a ping in no
 *            state a transport knows); then a ping
 *   tmfseq   a TARGET WARM RESET, not immediate, in CmdSN order, which LIO
 *            refuses (not authorized) without the target core; a ping,
 *            then a new login, which must work
 *   dropmid  with the session logged in, a second connection sends the
 *            first Login Request of the same initiator and ISID (LIO
 *            reinstates the session, which takes a while) and
 *            disconnects at once, without waiting for the answer; then
 *            a new login, which must work (LIO may finish the dropped
 *            login after the disconnect: the connection must still go);
 *            with -R no new login follows (to watch how the target
 *            releases the reinstated session on its own)
 *   logoutbad a Logout Request (close the session, immediate) and right
 *            behind it a reserved opcode: the target closes the
 *            connection, likely before its Logout Response went out;
 *            the session must still go (the scenario reads LIO's ACL)
 *   logoutconn the same with a Logout Request that closes only the
 *            connection (reason 1, CID 0): LIO then keeps the session for
 *            DefaultTime2Retain and, before the fix, closed it from its
 *            Time2Retain timer in softirq context
 *   addconn  with the session logged in, a second connection sends a Login
 *            Request with the session's TSIH and CID 1, adding a
 *            connection, which LIO refuses (MaxConnections 1); then a
 *            third connection logs in with the same ISID and TSIH 0,
 *            which reinstates the session: the first connection must be
 *            closed then (the ping on it gets no NOP-In). A target that
 *            treats the refused login's teardown as the session's own
 *            leaves the session out of the reinstatement, and two
 *            sessions of one ISID run side by side. Appends
 *            " added=refused|accepted reinstated=ok|failed"
 *   gapreset a WRITE(10) of 8 KiB with 512 bytes of immediate data, F=1,
 *            a Write STag and a CmdSN one past the expected one (LIO sets
 *            it up, waiting for its data, and defers it), then a LOGICAL
 *            UNIT RESET (immediate), which aborts it and waits for it to
 *            go; a ping, then the tool disconnects and logs in again: the
 *            aborted WRITE must not keep the old connection's teardown
 *            (and so the new login) waiting (LIO completes such commands
 *            only after the transport's wait for all of them)
 *   doshort  a WRITE(10) of 51 blocks (26112 bytes) with F=0 and no
 *            immediate data under InitialR2T=No, then one Data-Out of
 *            640 bytes at offset 0 with F=1: short of FirstBurstLength
 *            and of the command's length, which LIO answers with CHECK
 *            CONDITION while the command still waits for its data; a
 *            ping, then the tool disconnects and logs in again, which
 *            must work (the command's last reference must go)
 *   readimm  a READ(10) of 8 blocks carrying 512 bytes of data (W=0,
 *            F=1), with a Read STag on a registered buffer and a CmdSN
 *            one past the expected one; no PDU fills the gap, so a
 *            target that honours CmdSN order never executes it. LIO
 *            takes the data as immediate data and executes such a READ
 *            at once (found by -m random, seed 1, PDU 4589): the target
 *            must refuse it before LIO sees it (closed=yes, no status,
 *            read_data=untouched: nothing was written into the buffer);
 *            then a new login, which must work
 *   badttt   a WRITE(10) of 16 KiB with F=0 and 4 KiB of immediate data,
 *            then the other 12 KiB as three unsolicited Data-Outs whose
 *            Target Transfer Tag is 0x1234 instead of 0xffffffff (RFC 7143
 *            11.7.4; iSER has no R2T, RFC 5046 7.3.3, so every Data-Out
 *            carries the reserved tag): the target must refuse them before
 *            LIO sees them (closed=yes, no GOOD status)
 *   dupitt   two READ(10)s of 8 blocks of LUN 0 with one Initiator Task
 *            Tag (RFC 7143 11.2.1.8: an ITT is unique in the session):
 *            the first one CmdSN ahead, so that LIO defers it and it is
 *            still outstanding, the second with the CmdSN due, which
 *            would let both run; the target must refuse the second before
 *            LIO sees it and close the connection (closed=yes); appends
 *            " dup_answers=N dup_good=M", the SCSI Responses with that ITT
 *            and how many of them were GOOD
 *   dupittw  the same with two WRITE(10)s of 4 KiB: the first with F=0
 *            and no data (it waits for unsolicited Data-Out), the second
 *            with all its data immediate
 *   norepost (discovery) immediate NOP-Out pings, 200 or -N COUNT, while
 *            the tool never reposts a receive buffer: once its buffers are
 *            full the target's NOP-Ins wait in RNR retry for ever, each
 *            holding one of the session's command tags; then the tool
 *            holds the connection -W SECS (30) or until the target closes
 *            it, and disconnects. The target must refuse the flood by
 *            closing the connection, not by sleeping in its completion
 *            handler for a tag (a CQ it shares with other connections).
 *            Appends " pings_sent=N held=S", the pings whose Send
 *            completed and the seconds the connection stayed up
 *   ordabort on LUN 1, a LUN whose every I/O the backend delays (the
 *            scenario makes it, e.g. 2 s): a SIMPLE READ(10), an ORDERED
 *            READ(10) behind it (LIO holds it on the LUN's delayed list
 *            while the SIMPLE one runs), an ABORT TASK for the ORDERED
 *            one, then a second ORDERED READ(10): each READ of 8 blocks
 *            with a Read STag. LIO runs the aborted ORDERED READ once the
 *            SIMPLE one is done and completes it without its task
 *            attribute bookkeeping, which left the LUN's ordered flag set:
 *            the second ORDERED READ then waited for ever. Appends
 *            " first=0xSS abort=0xRR second=0xSS" (SCSI status, TMF
 *            response, or none when nothing came within 20 s)
 *   bigio    not hostile, only large: READ CAPACITY, then a WRITE(10) of
 *            as many blocks as fit in 32 MiB (at most 65535) from LBA 0,
 *            all of it fetched by the target with RDMA Reads (no
 *            immediate data, F=1, a Write STag on a 32 MiB buffer of a
 *            pattern), then a READ(10) of the same blocks into the zeroed
 *            buffer; each must end with GOOD within 60 s and the data
 *            must read back. Appends to its line
 *            "bigio bytes=N write=0xSS|none read=0xSS|none verify=ok|bad"
 *   bigq     24 WRITE(10)s of 16 MiB at once, each with 4 KiB of
 *            immediate data and F=1 (LIO then ignores what the
 *            transport's get_dataout returns), the rest fetched with RDMA
 *            Reads: more work requests than the target's send queue
 *            holds, and with ORD 1 they wait there. Each must end with
 *            GOOD within 60 s, then the first 16 MiB read back. Appends
 *            "bigq cmds=24 bytes=16777216 good=G bad=B(0xSS|none)
 *            read=0xSS|none verify=ok|bad"
 *   shortw   a WRITE(10) of 1 MiB, F=1, no immediate data, whose Write
 *            STag names an MR of only its first 64 KiB: the target's
 *            RDMA Read beyond it fails on the wire (remote access
 *            error), and the target must close the connection; no status
 *            may come. Appends "short status=0xSS|none"
 *   shortr   the same with a READ(10) and a Read STag: the target's RDMA
 *            Write beyond the MR fails; the same outcome
 *
 * and, with -n, the randomized mode:
 *
 *   random   COUNT (-N, default 10000) well-framed PDUs of the sequence
 *            SEED (-s, default 0) gives, from PDU FIRST (-F, default 0)
 *            on. PDU i is drawn from its own PRNG state (xorshift64*
 *            seeded by splitmix64 of SEED and i), so a sequence replays
 *            from any PDU. Each is a valid iSER header (control type,
 *            sometimes reserved bits, STags the PDU does not need, or a
 *            wrong iSER opcode) and a 48-byte BHS whose DataSegmentLength
 *            is what the Send carries (padded to 4 bytes), with optional
 *            AHS, consistent with TotalAHSLength mostly and sometimes
 *            not: SCSI Commands (READ/WRITE(10) with LBA and length in
 *            and out of range, INQUIRY and other commands that return
 *            data, random CDBs but for those that would outlive the run:
 *            RESERVE, PERSISTENT RESERVE OUT, SET TARGET PORT GROUPS,
 *            EXTENDED COPY; random flags, attributes, EDTL, immediate
 *            data, extended-CDB and bidirectional AHS, Read/Write STags
 *            mostly naming a registered 1 MiB buffer and sometimes random
 *            or missing), Data-Out (mostly for a recent write, at its next
 *            offset), NOP-Out, Task Management (every function, a
 *            reserved one now and then), Text, Logout, SNACK, Login,
 *            reserved and target opcodes, an iSER Hello, and Sends larger
 *            than the target's receive buffers. ITT, TTT, LUN, CmdSN and
 *            ExpStatSN are mostly the expected ones and sometimes near or
 *            far from them. After every 8 PDUs an immediate NOP-Out ping
 *            must be answered (so the target's receive buffers are never
 *            what stops it; the tool has 32 of its own); when the target
 *            closes the connection, the tool logs in again (a new
 *            connection, the same ISID, so the session is reinstated) and
 *            goes on with the next PDU; a PDU whose Send failed is sent
 *            again. Its CM REQ declines Send with Invalidate (the buffer
 *            the STags name is a plain MR, which cannot be invalidated).
 *            The first line names the seed and how to replay it,
 *            the last one is
 *
 *   random seed=S sent=N connections=C good_status_on_bad=K closed=M
 *          stalled=P login_failed=L bad_cmds=B bad_answered=A
 *          underfed_good=U responses=R rejects=J hello_replies=H
 *
 *            (one line). closed counts connections that went down under
 *            it, stalled those that stayed up without answering a ping
 *            within 10 s, login_failed the logins refused (the tool tries
 *            ten times in a row before it gives up, so sent < COUNT).
 *            A command is malformed (bad_cmds) only where SBC-3 requires
 *            a status other than GOOD: a READ(10) or WRITE(10) to LUN 0
 *            with a TRANSFER LENGTH of at least 1 whose last block lies
 *            beyond the capacity (READ CAPACITY after the first login),
 *            "LOGICAL BLOCK ADDRESS OUT OF RANGE" (SBC-3 4.5); its ITT is
 *            its own (PDU index based, never reused). good_status_on_bad
 *            counts SCSI Responses with response 0 and status GOOD to
 *            such a command and must be 0; bad_answered counts their other
 *            answers. A WRITE(10) that offers the target fewer bytes than
 *            its blocks (no W bit, or EDTL short of them) is not counted
 *            as malformed: RFC 3720 10.4.1 lets a target end a command
 *            with GOOD and residual overflow, and LIO does so when EDTL is
 *            0 (it clears W and R then); underfed_good only reports how
 *            often it happened.
 *
 * Except in random mode, it prints one line, for the scenario to judge:
 *
 *   login=ok|failed hello_reply=ok|rejected|none reject=0xRR|none
 *   nop_in=yes|no closed=yes|no status=0xSS|none text=N/final|N/none|none
 *
 * status is the SCSI Response's status; text counts the Text Responses of
 * textcont and says whether the last was final. initial_r2t=no is
 * appended in a normal session when InitialR2T=No was negotiated, and
 * relogin=ok|failed after cmdsngap, afterfail, overrun, dobig, dogap,
 * tmfseq, gapreset, doshort, readimm, badttt, dupitt, dupittw and dropmid
 * (not with -R).
 *
 * usage: iser_ffp [-m MODE] [-n TARGET] [-i INITIATOR] [-s SEED] [-N COUNT]
 * [-F FIRST] [-v] [-R] [-T SECS] [-W SECS] ADDR PORT (-v: random mode
 * prints each PDU; -T: the DefaultTime2Retain a normal session offers, 0
 * by default as open-iscsi's: LIO keeps a failed session that long, and
 * removing its ACL or disabling its TPG meanwhile hangs, see
 * Documentation/target.md; -W: how long bigio and bigq wait for each
 * response, 60 s by default, longer on a slow debug kernel).  Exit
 * status 0 when it ran, 1 on a local error (bad arguments, no RDMA
 * device, connection refused).
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iser_tool.h"

#define NR_RX		8
#define RX_SIZE		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + 8192)
#define TX_SIZE		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + 65536)
#define WAIT_SEC	10
#define SHORT_WAIT	10	/* shortlogin: for the close */
#define HDR		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN)

enum mode {
	NOP, HELLO, SNACK, LOGIN, SCSI, BADDLEN, BIGSEND, TEXTCONT,
	AHS0, AHSOVER, AHSTYPE, AHSNOP, AHSSHORT, CDBLONG, ECDB, BIDI, IMMF1,
	GAP, AFTERFAIL, OVERRUN, DOBIG, DOSENSE, DOGAP, NOPTTT, TMFSEQ, DROPMID,
	BIGIO, BIGQ, SHORTW, SHORTR, RANDOM, HELLOVER, HELLOBAD, HELLOLEN,
	HELLO2, LOGOUTBAD, GAPRESET, DOSHORT, READIMM, ORDABORT, TEXTBAD,
	LOGOUTCONN, ADDCONN, BADTTT, DUPITT, DUPITTW, NOREPOST, SHORTLOGIN,
	LOGINRACE, LOGINSTALL, LOGINRNR,
};

static const char *const mode_names[] = {
	"nop", "hello", "snack", "login", "scsi", "baddlen", "bigsend",
	"textcont", "ahs0", "ahsover", "ahstype", "ahsnop", "ahsshort",
	"cdblong", "ecdb", "bidi", "immf1", "cmdsngap", "afterfail", "overrun",
	"dobig", "dosense", "dogap", "nopttt", "tmfseq", "dropmid",
	"bigio", "bigq", "shortw", "shortr", "random", "hellover", "hellobad",
	"hellolen", "hello2", "logoutbad", "gapreset", "doshort", "readimm",
	"ordabort", "textbad", "logoutconn", "addconn", "badttt", "dupitt",
	"dupittw", "norepost", "shortlogin", "loginrace", "loginstall",
	"loginrnr",
};

static struct itool t;
static uint32_t cmd_sn, exp_stat_sn;
static const char *target_name;
static const char *initiator_name = "iqn.2004-10.org.debian:iser-vm-ffp";
static int initial_r2t_no;
static int nr_rx = NR_RX;
static unsigned char rbuf[4096];	/* readimm's Read STag names it */
static int rbuf_written;

static int connect_target(const char *addr, const char *port)
{
	struct addrinfo *ai, hints = { .ai_socktype = SOCK_STREAM };
	struct rdma_conn_param cp = {};
	struct isdm_cm_req req = { .flags = ISDM_CM_ZBVA_EXC };

	/* its data buffer is a plain MR, which Send with Invalidate fails */
	if (nr_rx == ITOOL_MAX_RX)
		req.flags |= ISDM_CM_SIE_EXC;

	if (getaddrinfo(addr, port, &hints, &ai))
		return -1;
	t.ch = rdma_create_event_channel();
	if (!t.ch || rdma_create_id(t.ch, &t.id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(t.id, NULL, ai->ai_addr, 2000) ||
	    itool_cm_wait(&t, RDMA_CM_EVENT_ADDR_RESOLVED, 5) ||
	    rdma_resolve_route(t.id, 2000) ||
	    itool_cm_wait(&t, RDMA_CM_EVENT_ROUTE_RESOLVED, 5))
		return -1;
	freeaddrinfo(ai);
	if (itool_verbs_init(&t, nr_rx, RX_SIZE, TX_SIZE))
		return -1;
	cp.initiator_depth = 1;
	cp.responder_resources = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	cp.private_data = &req;
	cp.private_data_len = sizeof(req);
	if (rdma_connect(t.id, &cp))
		return -1;
	return itool_cm_wait(&t, RDMA_CM_EVENT_ESTABLISHED, 10);
}

static unsigned char *pdu_start(unsigned char op, unsigned char flags,
				uint32_t dlen)
{
	return itool_pdu_start(&t, op, flags, dlen);
}

static int send_buf(uint32_t len)
{
	return itool_send(&t, len);
}

static int recv_msg(unsigned char **msg)
{
	return itool_recv(&t, msg, WAIT_SEC);
}

/* "key=value\0" into @buf at @len; the new length */
static size_t add_key(char *buf, size_t len, const char *key,
		      const char *val)
{
	return len + sprintf(buf + len, "%s=%s", key, val) + 1;
}

/* does the text data @d (@dlen bytes) hold the pair @kv? */
static int has_pair(const unsigned char *d, uint32_t dlen, const char *kv)
{
	size_t n = strlen(kv) + 1;
	uint32_t i;

	for (i = 0; i + n <= dlen; i++)
		if ((i == 0 || d[i - 1] == 0) && !memcmp(d + i, kv, n))
			return 1;
	return 0;
}

/* keys the tool offers itself; any other key in a response is a proposal */
static int offered(const char *kv)
{
	static const char *const ours[] = {
		"InitiatorName=", "SessionType=", "TargetName=", "InitialR2T=",
		"ImmediateData=", "FirstBurstLength=", "MaxBurstLength=",
		"ErrorRecoveryLevel=", "DefaultTime2Wait=",
		"DefaultTime2Retain=", "MaxOutstandingR2T=", "HeaderDigest=",
		"DataDigest=", "RDMAExtensions=",
		"InitiatorRecvDataSegmentLength=",
		"TargetRecvDataSegmentLength=", "MaxOutstandingUnexpectedPDUs=",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ours); i++)
		if (!strncmp(kv, ours[i], strlen(ours[i])))
			return 1;
	return 0;
}

/*
 * The pairs of a Login Response the tool did not offer, copied into @buf
 * (@size bytes) as its answer: the target's value is accepted.
 */
static uint32_t echo_proposals(char *buf, size_t size, const unsigned char *d,
			       uint32_t dlen)
{
	uint32_t i = 0, n = 0, l;

	while (i < dlen) {
		l = strnlen((const char *)d + i, dlen - i);
		if (l && memchr(d + i, '=', l) && !offered((const char *)d + i) &&
		    strncmp((const char *)d + i, "TargetPortalGroupTag=", 21) &&
		    strncmp((const char *)d + i, "TargetAlias=", 12) &&
		    n + l + 1 <= size) {
			memcpy(buf + n, d + i, l);
			buf[n + l] = 0;
			n += l + 1;
		}
		i += l + 1;
	}
	return n;
}

static int login_send_only;	/* dropmid: send the first request, return */
/* -T: as open-iscsi, 0 unless asked (LIO keeps a failed session that long) */
static const char *time2retain = "0";
/* the ISID's qualifier (its last two bytes): random mode's own per session */
static uint16_t isid_qualifier = 0x2a;
static int no_relogin;		/* -R: dropmid without the new login */
/* addconn: the TSIH the target gave; the TSIH and CID a login sends */
static uint16_t session_tsih, login_tsih, login_cid;

static int login(void)
{
	static char keys[1024];
	unsigned char *bhs, *msg, *rsp;
	uint32_t dlen = 0, rlen;
	int len, round;

	dlen = add_key(keys, dlen, "InitiatorName", initiator_name);
	if (target_name) {
		dlen = add_key(keys, dlen, "SessionType", "Normal");
		dlen = add_key(keys, dlen, "TargetName", target_name);
		dlen = add_key(keys, dlen, "InitialR2T", "No");
		dlen = add_key(keys, dlen, "ImmediateData", "Yes");
		dlen = add_key(keys, dlen, "FirstBurstLength", "65536");
		dlen = add_key(keys, dlen, "MaxBurstLength", "262144");
		dlen = add_key(keys, dlen, "ErrorRecoveryLevel", "0");
		dlen = add_key(keys, dlen, "DefaultTime2Wait", "2");
		dlen = add_key(keys, dlen, "DefaultTime2Retain", time2retain);
		dlen = add_key(keys, dlen, "MaxOutstandingR2T", "1");
	} else {
		dlen = add_key(keys, dlen, "SessionType", "Discovery");
	}
	dlen = add_key(keys, dlen, "HeaderDigest", "None");
	dlen = add_key(keys, dlen, "DataDigest", "None");
	dlen = add_key(keys, dlen, "RDMAExtensions", "Yes");
	dlen = add_key(keys, dlen, "InitiatorRecvDataSegmentLength", "8192");
	dlen = add_key(keys, dlen, "TargetRecvDataSegmentLength", "8192");
	dlen = add_key(keys, dlen, "MaxOutstandingUnexpectedPDUs", "0");

	for (round = 0; round < 4; round++) {
		/* Transit, CSG operational (1), NSG full feature (3) */
		bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, 0x87,
				dlen);
		bhs[8] = 0x80;		/* ISID: random type */
		bhs[12] = isid_qualifier >> 8;
		bhs[13] = isid_qualifier & 0xff;
		bhs[14] = login_tsih >> 8;
		bhs[15] = login_tsih & 0xff;
		itool_put_be32(bhs + 16, 0x1000);	/* ITT */
		bhs[20] = login_cid >> 8;
		bhs[21] = login_cid & 0xff;
		itool_put_be32(bhs + 28, exp_stat_sn);
		memcpy(bhs + ISDM_BHS_LEN, keys, dlen);
		if (send_buf(HDR + ((dlen + 3) & ~3u)))
			return -1;
		if (login_send_only)
			return 0;
		len = recv_msg(&msg);
		if (len < HDR)
			return -1;
		rsp = msg + ISDM_HDR_LEN_EXT;
		if ((rsp[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_LOGIN_RSP ||
		    rsp[36] != 0) {
			fprintf(stderr,
				"iser_ffp: bad Login Response: op 0x%02x flags 0x%02x status %u/%u\n",
				rsp[0], rsp[1], rsp[36], rsp[37]);
			return -1;
		}
		rlen = itool_get_be24(rsp + 5);
		if (rlen > (uint32_t)len - HDR)
			rlen = len - HDR;
		if (has_pair(rsp + ISDM_BHS_LEN, rlen, "InitialR2T=No"))
			initial_r2t_no = 1;
		exp_stat_sn = itool_get_be32(rsp + 24) + 1;
		cmd_sn = itool_get_be32(rsp + 28);	/* ExpCmdSN */
		if ((rsp[1] & 0x83) == 0x83) {
			session_tsih = rsp[14] << 8 | rsp[15];
			return 0;
		}
		/* accept what the target proposed: echo its keys back */
		dlen = echo_proposals(keys, sizeof(keys), rsp + ISDM_BHS_LEN,
				      rlen);
	}
	fprintf(stderr, "iser_ffp: the target did not transit to full feature phase\n");
	return -1;
}

/* A NOP-Out ping; 0 when the matching NOP-In came back. */
static int ping(uint32_t itt)
{
	unsigned char *bhs, *msg;
	int len;

	bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE, ISDM_BHS_FINAL, 0);
	itool_put_be32(bhs + 16, itt);
	itool_put_be32(bhs + 20, 0xffffffff);		/* TTT */
	itool_put_be32(bhs + 24, cmd_sn);
	itool_put_be32(bhs + 28, exp_stat_sn);
	if (send_buf(HDR))
		return -1;
	for (;;) {
		len = recv_msg(&msg);
		if (len < HDR)
			return -1;
		bhs = msg + ISDM_HDR_LEN_EXT;
		if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_NOP_IN &&
		    itool_get_be32(bhs + 16) == itt)
			return 0;
	}
}

/*
 * What came back for a PDU: the first Reject, SCSI Response or Text
 * Response (its BHS), or NULL when nothing did within WAIT_SEC or the
 * connection went down.
 */
static unsigned char *answer(void)
{
	unsigned char *msg, *bhs;
	int len;

	for (;;) {
		len = recv_msg(&msg);
		if (len < HDR)
			return NULL;
		bhs = msg + ISDM_HDR_LEN_EXT;
		switch (bhs[0] & ISDM_BHS_OPCODE_MASK) {
		case ISDM_OP_REJECT:
		case ISDM_OP_SCSI_RSP:
		case ISDM_OP_TEXT_RSP:
			exp_stat_sn = itool_get_be32(bhs + 24) + 1;
			return bhs;
		default:
			break;	/* e.g. a NOP-In ping of the target */
		}
	}
}

/* a variable-length CDB of 32 bytes (SPC-4 4.2.3) for an unsupported
 * service action
 */
static void varlen_cdb(unsigned char *cdb)
{
	memset(cdb, 0, 32);
	cdb[0] = 0x7f;			/* VARIABLE LENGTH */
	cdb[7] = 32 - 8;		/* ADDITIONAL CDB LENGTH */
	cdb[8] = 0xff;			/* SERVICE ACTION 0xfff0 */
	cdb[9] = 0xf0;
}

static int reject_reason = -1, scsi_status = -1;
static int text_parts, text_final;

static void note_answer(const unsigned char *bhs)
{
	if (!bhs)
		return;
	if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_REJECT)
		reject_reason = bhs[2];
	else if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_SCSI_RSP)
		scsi_status = bhs[3];
}

/* RFC 3720 10.10: SendTargets=All, then empty continuations */
static void text_exchange(void)
{
	static const char st[] = "SendTargets=All";
	unsigned char *bhs;
	uint32_t ttt = 0xffffffff, dlen = sizeof(st);

	for (text_parts = 0; text_parts < 16; ) {
		bhs = pdu_start(ISDM_OP_TEXT_REQ, ISDM_BHS_FINAL, dlen);
		itool_put_be32(bhs + 16, 0x6000);
		itool_put_be32(bhs + 20, ttt);
		itool_put_be32(bhs + 24, cmd_sn++);
		itool_put_be32(bhs + 28, exp_stat_sn);
		if (dlen)
			memcpy(bhs + ISDM_BHS_LEN, st, dlen);
		if (send_buf(HDR + ((dlen + 3) & ~3u)))
			return;
		bhs = answer();
		if (!bhs || (bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_TEXT_RSP) {
			note_answer(bhs);
			return;
		}
		text_parts++;
		if (bhs[1] & ISDM_BHS_FINAL) {
			text_final = 1;
			return;
		}
		if (!(bhs[1] & 0x40))	/* neither F nor C */
			return;
		ttt = itool_get_be32(bhs + 20);
		dlen = 0;	/* the empty continuation */
	}
}

/* A SCSI Command PDU for @mode, with its AHS; the bytes to send. */
static uint32_t scsi_pdu(enum mode mode)
{
	unsigned char *bhs, *ahs, cdb[32];
	unsigned char flags = ISDM_BHS_FINAL;
	uint32_t edtl = 0, dlen = 0, words = 0;

	varlen_cdb(cdb);
	if (mode == BIDI) {
		flags |= ISDM_BHS_CMD_READ | ISDM_BHS_CMD_WRITE;
		edtl = 4096;
	} else if (mode == IMMF1) {
		flags |= ISDM_BHS_CMD_WRITE;
		edtl = 8192;
		dlen = 4096;
	}
	bhs = pdu_start(ISDM_OP_SCSI_CMD, flags, dlen);
	ahs = bhs + ISDM_BHS_LEN;
	/* the buffer still holds the login keys there */
	memset(ahs, 0, 64);
	itool_put_be32(bhs + 16, 0x7000 + mode);
	itool_put_be32(bhs + 20, edtl);
	itool_put_be32(bhs + 24, cmd_sn++);
	itool_put_be32(bhs + 28, exp_stat_sn);
	/* TEST UNIT READY unless said otherwise */
	switch (mode) {
	case AHS0:	/* AHSLength 0, type 1 (extended CDB) */
		words = 1;
		ahs[2] = 1;
		break;
	case AHSOVER:	/* AHSLength 5: 8 bytes, in 4 */
		words = 1;
		ahs[1] = 5;
		ahs[2] = 1;
		break;
	case AHSTYPE:	/* reserved type 3 */
		words = 2;
		ahs[1] = 5;
		ahs[2] = 3;
		break;
	case AHSSHORT:	/* 17 of the 32 CDB bytes: AHSLength 2 */
		memcpy(bhs + 32, cdb, 16);
		words = 2;
		ahs[1] = 2;
		ahs[2] = 1;
		ahs[4] = cdb[16];
		break;
	case CDBLONG:
		memcpy(bhs + 32, cdb, 16);
		break;
	case ECDB:	/* RFC 3720 10.2.2.3: AHSLength = 32 - 15 */
		memcpy(bhs + 32, cdb, 16);
		words = 5;
		ahs[1] = 17;
		ahs[2] = 1;
		memcpy(ahs + 4, cdb + 16, 16);
		break;
	case BIDI:	/* RFC 3720 10.2.2.4: AHSLength 5, type 2 */
		bhs[32] = 0x53;		/* XDWRITEREAD(10) */
		bhs[40] = 8;		/* 8 blocks */
		words = 2;
		ahs[1] = 5;
		ahs[2] = 2;
		itool_put_be32(ahs + 4, 4096);
		/* fake STags: LIO refuses the command before any transfer */
		t.tx_buf[0] |= ISDM_CTRL_WSV | ISDM_CTRL_RSV;
		itool_put_be32(t.tx_buf + 4, 0x1234);
		itool_put_be32(t.tx_buf + 16, 0x5678);
		break;
	case IMMF1:	/* WRITE(10), LBA 0, 16 blocks of 512 */
		bhs[32] = 0x2a;
		bhs[40] = 16;
		memset(ahs, 0x5a, dlen);
		break;
	default:
		break;
	}
	bhs[4] = words;
	return HDR + words * 4 + dlen;
}

/* Send the PDU of @mode and note what came back. */
static unsigned char obuf[3 * 4096];	/* ordabort's Read STags name it */
static struct ibv_mr *obuf_mr;
static int ord_first = -1, ord_abort = -1, ord_second = -1;

/* a READ(10) of 8 blocks of LUN 1 into obuf + @off, task attribute @attr */
static int ord_read(uint32_t itt, unsigned char attr, uint32_t off)
{
	uint64_t va = (uintptr_t)obuf + off;
	unsigned char *bhs;

	bhs = pdu_start(ISDM_OP_SCSI_CMD,
			ISDM_BHS_FINAL | ISDM_BHS_CMD_READ | attr, 0);
	t.tx_buf[0] |= ISDM_CTRL_RSV;
	itool_put_be32(t.tx_buf + 16, obuf_mr->rkey);
	itool_put_be32(t.tx_buf + 20, va >> 32);
	itool_put_be32(t.tx_buf + 24, va);
	bhs[9] = 1;				/* LUN 1 */
	itool_put_be32(bhs + 16, itt);
	itool_put_be32(bhs + 20, 4096);
	itool_put_be32(bhs + 24, cmd_sn++);
	itool_put_be32(bhs + 28, exp_stat_sn);
	bhs[32] = 0x28;
	itool_put_be32(bhs + 32 + 2, 8 * (itt & 0xff));
	bhs[32 + 8] = 8;
	return send_buf(HDR);
}

/*
 * Wait up to @sec seconds until each of @want (ITTs, 0 = done) has its
 * answer: a SCSI Response's status or a TMF Response's response into the
 * matching slot of @res.
 */
static void ord_wait(const uint32_t *want, int *const *res, int n, int sec)
{
	double end = itool_now() + sec;
	unsigned char *msg, *bhs;
	int len, i, left = n;

	while (left && itool_now() < end) {
		len = itool_recv(&t, &msg, end - itool_now());
		if (len < HDR)
			return;
		bhs = msg + ISDM_HDR_LEN_EXT;
		if ((bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_SCSI_RSP &&
		    (bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_TMF_RSP)
			continue;
		exp_stat_sn = itool_get_be32(bhs + 24) + 1;
		for (i = 0; i < n; i++) {
			if (*res[i] >= 0 || itool_get_be32(bhs + 16) != want[i])
				continue;
			*res[i] = (bhs[0] & ISDM_BHS_OPCODE_MASK) ==
				  ISDM_OP_SCSI_RSP ? bhs[3] : bhs[2];
			left--;
		}
	}
}

static void ordabort(void)
{
	static const uint32_t w1[] = { 0x5d00, 0x5d02 }, w2[] = { 0x5d03 };
	int *const r1[] = { &ord_first, &ord_abort }, *const r2[] = {
		&ord_second };
	uint32_t ref_sn;
	unsigned char *bhs;

	obuf_mr = ibv_reg_mr(t.pd, obuf, sizeof(obuf),
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!obuf_mr)
		return;
	/* SIMPLE (attribute 1), then ORDERED (2) behind it */
	if (ord_read(0x5d00, 1, 0))
		return;
	usleep(200000);
	ref_sn = cmd_sn;
	if (ord_read(0x5d01, 2, 4096))
		return;
	usleep(200000);
	/* ABORT TASK for the ORDERED READ, immediate */
	bhs = pdu_start(ISDM_OP_TMF_REQ | ISDM_BHS_IMMEDIATE,
			ISDM_BHS_FINAL | 1, 0);
	bhs[9] = 1;
	itool_put_be32(bhs + 16, 0x5d02);
	itool_put_be32(bhs + 20, 0x5d01);
	itool_put_be32(bhs + 24, cmd_sn);
	itool_put_be32(bhs + 28, exp_stat_sn);
	itool_put_be32(bhs + 32, ref_sn);
	if (send_buf(HDR))
		return;
	ord_wait(w1, r1, 2, 20);
	/* a second ORDERED READ: it must run */
	if (ord_read(0x5d03, 2, 8192))
		return;
	ord_wait(w2, r2, 1, 20);
}

/* badttt: a WRITE with F=0 and immediate data, its Data-Outs misnamed */
static void bad_ttt(void)
{
	unsigned char *bhs;
	uint32_t off;

	bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_CMD_WRITE, 4096);
	itool_put_be32(bhs + 16, 0x5e00);
	itool_put_be32(bhs + 20, 16384);
	itool_put_be32(bhs + 24, cmd_sn++);
	itool_put_be32(bhs + 28, exp_stat_sn);
	bhs[32] = 0x2a;				/* WRITE(10), LBA 0 */
	bhs[32 + 8] = 16384 / 512;
	memset(bhs + ISDM_BHS_LEN, 0x5a, 4096);
	if (send_buf(HDR + 4096))
		return;
	for (off = 4096; off < 16384; off += 4096) {
		bhs = pdu_start(ISDM_OP_DATA_OUT,
				off + 4096 == 16384 ? ISDM_BHS_FINAL : 0, 4096);
		itool_put_be32(bhs + 16, 0x5e00);
		itool_put_be32(bhs + 20, 0x1234);	/* not 0xffffffff */
		itool_put_be32(bhs + 28, exp_stat_sn);
		itool_put_be32(bhs + 36, off / 4096 - 1);	/* DataSN */
		itool_put_be32(bhs + 40, off);		/* Buffer Offset */
		memset(bhs + ISDM_BHS_LEN, 0x5a, 4096);
		if (send_buf(HDR + 4096))
			return;
	}
	note_answer(answer());
}

static unsigned int norepost_sent;
static double norepost_held;

/* norepost: immediate pings while our receive buffers fill, unposted */
static void no_repost(unsigned long n, int hold)
{
	unsigned char *bhs;
	double start;
	unsigned long i;

	start = itool_now();
	for (i = 0; i < n && !t.closed; i++) {
		bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x6100 + i);
		itool_put_be32(bhs + 20, 0xffffffff);	/* TTT */
		itool_put_be32(bhs + 24, cmd_sn);
		itool_put_be32(bhs + 28, exp_stat_sn);
		if (send_buf(HDR))
			break;
		norepost_sent++;
	}
	while (!t.closed && itool_now() < start + hold)
		itool_cm_wait(&t, RDMA_CM_EVENT_DISCONNECTED, 1);
	norepost_held = itool_now() - start;
}

static int dup_answers, dup_good;

/* dupitt, dupittw: two commands with one ITT, then what came back */
static void dup_itt(enum mode mode)
{
	unsigned char *bhs, *msg;
	uint64_t va = (uintptr_t)obuf;
	double end;
	int i, len;

	if (mode == DUPITT) {
		obuf_mr = ibv_reg_mr(t.pd, obuf, sizeof(obuf),
				     IBV_ACCESS_LOCAL_WRITE |
				     IBV_ACCESS_REMOTE_WRITE);
		if (!obuf_mr)
			return;
	}
	/* the first stays outstanding: deferred (READ), or waiting for data */
	for (i = 0; i < 2; i++) {
		if (mode == DUPITT) {
			bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_FINAL |
					ISDM_BHS_CMD_READ | 1, 0);
			t.tx_buf[0] |= ISDM_CTRL_RSV;
			itool_put_be32(t.tx_buf + 16, obuf_mr->rkey);
			itool_put_be32(t.tx_buf + 20, (va + i * 4096) >> 32);
			itool_put_be32(t.tx_buf + 24, va + i * 4096);
			bhs[32] = 0x28;			/* READ(10) */
			itool_put_be32(bhs + 24, cmd_sn + 1 - i);
		} else {
			bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_CMD_WRITE |
					(i ? ISDM_BHS_FINAL : 0) | 1,
					i ? 4096 : 0);
			memset(bhs + ISDM_BHS_LEN, 0x5a, i ? 4096 : 0);
			bhs[32] = 0x2a;			/* WRITE(10) */
			itool_put_be32(bhs + 24, cmd_sn + i);
		}
		itool_put_be32(bhs + 16, 0x5f00);
		itool_put_be32(bhs + 20, 4096);
		itool_put_be32(bhs + 28, exp_stat_sn);
		itool_put_be32(bhs + 32 + 2, 8 * i);	/* LBA */
		bhs[32 + 8] = 8;
		if (send_buf(HDR + (mode == DUPITTW && i ? 4096 : 0)))
			return;
	}
	cmd_sn += 2;
	/* every SCSI Response with that ITT within 5 s, or the close */
	end = itool_now() + 5;
	while (itool_now() < end) {
		len = itool_recv(&t, &msg, end - itool_now());
		if (len < HDR)
			break;
		bhs = msg + ISDM_HDR_LEN_EXT;
		if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_REJECT) {
			note_answer(bhs);
			continue;
		}
		if ((bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_SCSI_RSP ||
		    itool_get_be32(bhs + 16) != 0x5f00)
			continue;
		exp_stat_sn = itool_get_be32(bhs + 24) + 1;
		note_answer(bhs);
		dup_answers++;
		dup_good += bhs[3] == 0;
	}
}

static void ord_status(char *buf, size_t size, int v)
{
	if (v < 0)
		snprintf(buf, size, "none");
	else
		snprintf(buf, size, "0x%02x", v);
}

static void offend(enum mode mode)
{
	unsigned char *bhs, *msg;
	uint32_t len;
	int n;

	switch (mode) {
	case SNACK:
		bhs = pdu_start(ISDM_OP_SNACK, ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0xffffffff);
		break;
	case NOPTTT:
		/* a ping (an ITT) that also answers a NOP-In (a TTT) */
		bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x5700);
		itool_put_be32(bhs + 20, 0x12345678);
		break;
	case LOGIN:
		bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, 0x87, 0);
		itool_put_be32(bhs + 16, 0x2000);
		break;
	case SCSI:
		/* TEST UNIT READY, immediate, no data */
		bhs = pdu_start(ISDM_OP_SCSI_CMD | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x3000);
		break;
	case BADDLEN:
		bhs = pdu_start(ISDM_OP_TEXT_REQ | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 4096);
		itool_put_be32(bhs + 16, 0x4000);
		break;
	case TEXTBAD:
		/* 3000 bytes: LIO's copy of it is a 4 KiB kmalloc object */
		bhs = pdu_start(ISDM_OP_TEXT_REQ | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 3000);
		itool_put_be32(bhs + 16, 0x4100);
		itool_put_be32(bhs + 20, 0xffffffff);
		msg = bhs + ISDM_BHS_LEN;
		n = snprintf((char *)msg, 3000, "HeaderDigest=None");
		memset(msg + n + 1, 0, 3000 - n - 1);
		memcpy(msg + n + 1, "X-org.debian.pad=", 17);
		memset(msg + n + 1 + 17, 'a', 3000 - n - 1 - 17 - 1);
		itool_put_be32(bhs + 24, cmd_sn);
		itool_put_be32(bhs + 28, exp_stat_sn);
		if (send_buf(HDR + 3000))
			return;
		note_answer(answer());
		return;
	case BIGSEND:
		bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 65536);
		itool_put_be32(bhs + 16, 0x5000);
		itool_put_be32(bhs + 20, 0xffffffff);
		memset(bhs + ISDM_BHS_LEN, 0x5a, 65536);
		send_buf(TX_SIZE);
		return;
	case TEXTCONT:
		text_exchange();
		return;
	case GAP:
		/* TEST UNIT READY one CmdSN ahead: LIO defers it for ever */
		bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x5200);
		itool_put_be32(bhs + 24, cmd_sn + 1);
		itool_put_be32(bhs + 28, exp_stat_sn);
		send_buf(HDR);
		return;
	case TMFSEQ:
		/* a TARGET WARM RESET in CmdSN order: LIO refuses it itself */
		bhs = pdu_start(ISDM_OP_TMF_REQ, ISDM_BHS_FINAL | 6, 0);
		itool_put_be32(bhs + 16, 0x5400);
		itool_put_be32(bhs + 20, 0xffffffff);
		itool_put_be32(bhs + 24, cmd_sn++);
		itool_put_be32(bhs + 28, exp_stat_sn);
		send_buf(HDR);	/* the ping after it reads the answer */
		return;
	case OVERRUN:
		/* F=0, W, nothing sent yet, CmdSN out of the window */
		bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_CMD_WRITE, 0);
		itool_put_be32(bhs + 16, 0x5500);
		itool_put_be32(bhs + 20, 4096);
		itool_put_be32(bhs + 24, cmd_sn + 0x10000000);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[32] = 0x2a;
		bhs[32 + 8] = 4096 / 512;
		if (send_buf(HDR))
			return;
		bhs = pdu_start(0x0f, ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x5501);
		send_buf(HDR);
		return;
	case DOBIG:
		/*
		 * 512 bytes announced, F=0: Data-Out follows; to an LBA
		 * beyond the LUN, so LIO has dropped one reference already
		 */
		bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_CMD_WRITE, 0);
		itool_put_be32(bhs + 16, 0x5600);
		itool_put_be32(bhs + 20, 512);
		itool_put_be32(bhs + 24, cmd_sn++);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[32] = 0x2a;
		itool_put_be32(bhs + 32 + 2, 0xfffffff0);
		bhs[32 + 8] = 1;
		if (send_buf(HDR))
			return;
		/* ... and 1024 bytes of it at offset 0, F=1 */
		bhs = pdu_start(ISDM_OP_DATA_OUT, ISDM_BHS_FINAL, 1024);
		itool_put_be32(bhs + 16, 0x5600);
		itool_put_be32(bhs + 20, 0xffffffff);
		itool_put_be32(bhs + 28, exp_stat_sn);
		memset(bhs + ISDM_BHS_LEN, 0x5a, 1024);
		send_buf(HDR + 1024);
		return;
	case DOSENSE:
	case DOGAP:
		/*
		 * F=0: Data-Out follows. dosense: 8 blocks but an EDTL of
		 * 2048, refused by LIO before its data; dogap: one block, one
		 * CmdSN ahead, deferred by LIO
		 */
		len = mode == DOSENSE ? 2048 : 512;
		bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_CMD_WRITE, 0);
		itool_put_be32(bhs + 16, 0x5800);
		itool_put_be32(bhs + 20, len);
		itool_put_be32(bhs + 24, mode == DOSENSE ? cmd_sn++ : cmd_sn + 1);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[32] = 0x2a;
		bhs[32 + 8] = mode == DOSENSE ? 8 : 1;
		if (send_buf(HDR))
			return;
		bhs = pdu_start(ISDM_OP_DATA_OUT, ISDM_BHS_FINAL, len);
		itool_put_be32(bhs + 16, 0x5800);
		itool_put_be32(bhs + 20, 0xffffffff);
		itool_put_be32(bhs + 28, exp_stat_sn);
		memset(bhs + ISDM_BHS_LEN, 0x5a, len);
		if (send_buf(HDR + len))
			return;
		if (mode == DOSENSE)
			note_answer(answer());
		return;
	case LOGOUTBAD:
	case LOGOUTCONN:
		/*
		 * a Logout Request (close the session, or only this
		 * connection, CID 0), immediate, and right behind it a
		 * reserved opcode, which closes the connection, most likely
		 * before the Logout Response has gone out
		 */
		bhs = pdu_start(ISDM_OP_LOGOUT_REQ | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL | (mode == LOGOUTCONN), 0);
		itool_put_be32(bhs + 16, 0x5900);
		itool_put_be32(bhs + 24, cmd_sn);
		itool_put_be32(bhs + 28, exp_stat_sn);
		if (send_buf(HDR))
			return;
		bhs = pdu_start(0x0f, ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x5901);
		send_buf(HDR);
		return;
	case DOSHORT:
		bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_CMD_WRITE, 0);
		itool_put_be32(bhs + 16, 0x5b00);
		itool_put_be32(bhs + 20, 51 * 512);
		itool_put_be32(bhs + 24, cmd_sn++);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[32] = 0x2a;
		bhs[32 + 8] = 51;
		if (send_buf(HDR))
			return;
		bhs = pdu_start(ISDM_OP_DATA_OUT, ISDM_BHS_FINAL, 640);
		itool_put_be32(bhs + 16, 0x5b00);
		itool_put_be32(bhs + 20, 0xffffffff);
		itool_put_be32(bhs + 28, exp_stat_sn);
		memset(bhs + ISDM_BHS_LEN, 0x5a, 640);
		if (send_buf(HDR + 640))
			return;
		note_answer(answer());
		return;
	case GAPRESET:
		/* WRITE(10), 16 blocks, 512 bytes immediate, F=1, one ahead */
		bhs = pdu_start(ISDM_OP_SCSI_CMD,
				ISDM_BHS_FINAL | ISDM_BHS_CMD_WRITE, 512);
		/* a Write STag that is never read: the command is aborted */
		t.tx_buf[0] |= ISDM_CTRL_WSV;
		itool_put_be32(t.tx_buf + 4, 0x1234);
		itool_put_be32(bhs + 16, 0x5a00);
		itool_put_be32(bhs + 20, 8192);
		itool_put_be32(bhs + 24, cmd_sn + 1);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[32] = 0x2a;
		bhs[32 + 8] = 16;
		memset(bhs + ISDM_BHS_LEN, 0x5a, 512);
		if (send_buf(HDR + 512))
			return;
		/* LOGICAL UNIT RESET of LUN 0, immediate */
		bhs = pdu_start(ISDM_OP_TMF_REQ | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL | 5, 0);
		itool_put_be32(bhs + 16, 0x5a01);
		itool_put_be32(bhs + 20, 0xffffffff);
		itool_put_be32(bhs + 24, cmd_sn);
		itool_put_be32(bhs + 28, exp_stat_sn);
		if (send_buf(HDR))
			return;
		/* LIO's TMR work aborts the WRITE meanwhile */
		sleep(1);
		return;
	case READIMM: {
		struct ibv_mr *mr;
		uint64_t va = (uintptr_t)rbuf;
		unsigned int i;

		/* a target that executes the READ overwrites this */
		memset(rbuf, 0xa5, sizeof(rbuf));
		mr = ibv_reg_mr(t.pd, rbuf, sizeof(rbuf),
				IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE);
		if (!mr)
			return;
		bhs = pdu_start(ISDM_OP_SCSI_CMD,
				ISDM_BHS_FINAL | ISDM_BHS_CMD_READ, 512);
		t.tx_buf[0] |= ISDM_CTRL_RSV;
		itool_put_be32(t.tx_buf + 16, mr->rkey);
		itool_put_be32(t.tx_buf + 20, va >> 32);
		itool_put_be32(t.tx_buf + 24, va);
		itool_put_be32(bhs + 16, 0x5c00);
		itool_put_be32(bhs + 20, sizeof(rbuf));
		itool_put_be32(bhs + 24, cmd_sn + 1);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[32] = 0x28;
		bhs[32 + 8] = 8;
		memset(bhs + ISDM_BHS_LEN, 0x5a, 512);
		if (!send_buf(HDR + 512))
			note_answer(answer());
		/* the MR stays: the target may still write into it */
		for (i = 0; i < sizeof(rbuf); i++)
			if (rbuf[i] != 0xa5)
				rbuf_written = 1;
		return;
	}
	case ORDABORT:
		ordabort();
		return;
	case AFTERFAIL:
		/* a reserved opcode, and right behind it a command to LUN 5 */
		bhs = pdu_start(0x0f, ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x5300);
		if (send_buf(HDR))
			return;
		bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_FINAL, 0);
		bhs[9] = 5;
		itool_put_be32(bhs + 16, 0x5301);
		itool_put_be32(bhs + 24, cmd_sn);
		itool_put_be32(bhs + 28, exp_stat_sn);
		send_buf(HDR);
		return;
	case AHSNOP:
		/* a ping with a well-formed extended-CDB AHS of 4 + 4 bytes */
		bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x5100);
		itool_put_be32(bhs + 20, 0xffffffff);
		itool_put_be32(bhs + 24, cmd_sn);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[4] = 2;
		memset(bhs + ISDM_BHS_LEN, 0, 8);
		bhs[ISDM_BHS_LEN + 1] = 5;
		bhs[ISDM_BHS_LEN + 2] = 1;
		if (send_buf(HDR + 8))
			return;
		for (;;) {
			n = recv_msg(&msg);
			if (n < HDR)
				return;
			bhs = msg + ISDM_HDR_LEN_EXT;
			if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_NOP_IN) {
				scsi_status = -2;	/* answered */
				return;
			}
		}
	case AHS0:
	case AHSOVER:
	case AHSTYPE:
	case AHSSHORT:
	case CDBLONG:
	case ECDB:
	case BIDI:
	case IMMF1:
		len = scsi_pdu(mode);
		if (send_buf(len))
			return;
		note_answer(answer());
		return;
	default:
		return;
	}
	itool_put_be32(bhs + 24, cmd_sn);
	itool_put_be32(bhs + 28, exp_stat_sn);
	if (send_buf(HDR))
		return;
	if (mode == BADDLEN)
		return;
	note_answer(answer());
}

/*
 * Send a Hello of @len bytes with MaxVer/MinVer @ver; the HelloReply's
 * verdict: ok, rejected, or none (no HelloReply of 12 bytes came).
 */
static const char *hello_send(unsigned char ver, uint32_t len)
{
	struct isdm_hello h = {
		.flags = ISDM_OP_HELLO,
		.max_min_ver = ver,
		.ird = htons(1),
	};
	unsigned char *msg;

	memset(t.tx_buf, 0, len);
	memcpy(t.tx_buf, &h, sizeof(h));
	if (send_buf(len))
		return "none";
	len = recv_msg(&msg);
	if (len != ISDM_HELLO_LEN ||
	    (msg[0] & ISDM_OP_MASK) != ISDM_OP_HELLO_REPLY)
		return "none";
	return msg[0] & ISDM_HELLO_REPLY_REJ ? "rejected" : "ok";
}

static const char *hello(enum mode mode)
{
	const unsigned char v1 = ISDM_ISER_VERSION << 4 | ISDM_ISER_VERSION;
	const char *res;

	switch (mode) {
	case HELLOVER:
		return hello_send(0x22, ISDM_HELLO_LEN);
	case HELLOBAD:
		return hello_send(0x12, ISDM_HELLO_LEN);
	case HELLOLEN:
		return hello_send(v1, ISDM_HELLO_LEN + 4);
	case HELLO2:
		res = hello_send(v1, ISDM_HELLO_LEN);
		/* the second one: no answer expected, the target closes */
		hello_send(v1, ISDM_HELLO_LEN);
		return res;
	default:
		return hello_send(v1, ISDM_HELLO_LEN);
	}
}

#define BIG_DATA	(32u << 20)
#define BIG_WAIT	60

static unsigned char *big_buf;
static struct ibv_mr *big_mr;
static struct ibv_mr *stag_mr;		/* the MR big_send()'s STags name */
static int big_wait_sec = BIG_WAIT;

static void big_status(char *buf, size_t size, int st);

/*
 * Send one command of -m bigio or bigq: CDB @op (READ CAPACITY(10): 8
 * bytes in), @blocks blocks of @blen from @lba, the first @imm bytes of
 * big_buf as immediate data, its Read or Write STag on big_buf (an
 * absolute address: the first byte not sent as immediate data).
 */
static int big_send(unsigned char op, uint32_t itt, uint32_t lba,
		    uint32_t blocks, uint32_t blen, uint32_t imm)
{
	int write = op == 0x2a;
	uint32_t edtl = op == 0x25 ? 8 : blocks * blen;
	uint64_t va = (uintptr_t)big_buf + imm;
	unsigned char *bhs, *h = t.tx_buf;

	bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_FINAL |
			(write ? ISDM_BHS_CMD_WRITE : ISDM_BHS_CMD_READ), imm);
	itool_put_be32(bhs + 16, itt);
	itool_put_be32(bhs + 20, edtl);
	itool_put_be32(bhs + 24, cmd_sn++);
	itool_put_be32(bhs + 28, exp_stat_sn);
	memset(bhs + 32, 0, 16);
	bhs[32] = op;
	if (op != 0x25) {
		itool_put_be32(bhs + 32 + 2, lba);
		bhs[32 + 7] = blocks >> 8;
		bhs[32 + 8] = blocks;
	}
	memcpy(bhs + ISDM_BHS_LEN, big_buf, imm);
	h[0] |= write ? ISDM_CTRL_WSV : ISDM_CTRL_RSV;
	itool_put_be32(h + (write ? 4 : 16), stag_mr->rkey);
	itool_put_be32(h + (write ? 8 : 20), va >> 32);
	itool_put_be32(h + (write ? 12 : 24), va);
	return send_buf(HDR + imm);
}

/*
 * The status of the next SCSI Response to an ITT in [@itt, @itt + @n): the
 * SCSI status, 0x100 | the iSCSI response where that is not 0, or -1 when
 * none came within big_wait_sec seconds.
 */
static int big_wait(uint32_t itt, uint32_t n)
{
	double end = itool_now() + big_wait_sec;
	unsigned char *bhs, *msg;
	int len;

	while (itool_now() < end) {
		len = itool_recv(&t, &msg, end - itool_now());
		if (len < HDR)
			return -1;
		bhs = msg + ISDM_HDR_LEN_EXT;
		if ((bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_SCSI_RSP ||
		    itool_get_be32(bhs + 16) - itt >= n)
			continue;	/* e.g. a NOP-In ping of the target */
		exp_stat_sn = itool_get_be32(bhs + 24) + 1;
		return bhs[2] ? 0x100 | bhs[2] : bhs[3];
	}
	return -1;
}

static int big_cmd(unsigned char op, uint32_t blocks, uint32_t blen)
{
	if (big_send(op, 0x6000 + op, 0, blocks, blen, 0))
		return -1;
	return big_wait(0x6000 + op, 1);
}

static uint32_t big_pattern(uint32_t i)
{
	return i * 2654435761u ^ 0x1badcafe;
}

static void big_fill(uint32_t bytes)
{
	uint32_t i;

	for (i = 0; i < bytes; i += 4)
		itool_put_be32(big_buf + i, big_pattern(i));
}

/* read @blocks from LBA 0 back into the zeroed buffer: "ok" or "bad" */
static const char *big_verify(uint32_t blocks, uint32_t blen, char *st,
			      size_t size)
{
	uint32_t i, bytes = blocks * blen;
	int ret;

	memset(big_buf, 0, bytes);
	ret = big_cmd(0x28, blocks, blen);
	big_status(st, size, ret);
	if (ret)
		return "bad";
	for (i = 0; i < bytes; i += 4)
		if (itool_get_be32(big_buf + i) != big_pattern(i))
			return "bad";
	return "ok";
}

/* register big_buf and read the capacity: blocks, or 0 */
static uint64_t big_setup(uint32_t *blen)
{
	int st, tries = 0;

	/*
	 * One page more than the data: 6.1's soft-RoCE reads one pointer past
	 * its page map when an RDMA access ends exactly at the end of an MR
	 * whose pages are a multiple of 256 (rxe_mr_copy() steps to the next
	 * map before it checks that nothing is left; KASAN reports it); the
	 * accesses of these cases end at BIG_DATA at most.
	 */
	big_buf = aligned_alloc(4096, BIG_DATA + 4096);
	if (!big_buf)
		return 0;
	memset(big_buf, 0, BIG_DATA + 4096);
	big_mr = ibv_reg_mr(t.pd, big_buf, BIG_DATA + 4096,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_WRITE);
	stag_mr = big_mr;
	if (!big_mr)
		return 0;
	/*
	 * A CHECK CONDITION here is a unit attention that an earlier case
	 * left for this initiator (gapreset's LOGICAL UNIT RESET): reported
	 * once per I_T nexus and cleared by reporting it, as initiators
	 * retry it
	 */
	do
		st = big_cmd(0x25, 0, 0);
	while (st == 0x02 && ++tries < 3);
	if (st)
		return 0;
	*blen = itool_get_be32(big_buf + 4);
	if (!*blen || *blen > BIG_DATA)
		return 0;
	return (uint64_t)itool_get_be32(big_buf) + 1;
}

static void big_status(char *buf, size_t size, int st)
{
	if (st < 0)
		snprintf(buf, size, "none");
	else
		snprintf(buf, size, "0x%02x", st);
}

/* -m bigio: the line it appends to the summary */
static void big_io(char *out, size_t size)
{
	uint32_t blocks = 0, blen = 0, bytes = 0;
	char ws[16] = "none", rs_[16] = "none";
	const char *verify = "bad";
	uint64_t cap;
	int st;

	cap = big_setup(&blen);
	if (!cap)
		goto out;
	blocks = BIG_DATA / blen;
	if (blocks > 0xffff)
		blocks = 0xffff;
	if (blocks > cap)
		blocks = cap;
	bytes = blocks * blen;
	big_fill(bytes);
	st = big_cmd(0x2a, blocks, blen);
	big_status(ws, sizeof(ws), st);
	if (!st)
		verify = big_verify(blocks, blen, rs_, sizeof(rs_));
out:
	snprintf(out, size, " bigio bytes=%u write=%s read=%s verify=%s",
		 bytes, ws, rs_, verify);
}

/*
 * -m bigq: BIGQ_CMDS WRITE(10)s of BIGQ_BYTES each at once, each with 4 KiB
 * of immediate data and F=1, the rest fetched by RDMA Reads: together
 * more RDMA Read work requests than the target's send queue holds. Each
 * must end with GOOD; then the first region reads back.
 */
#define BIGQ_CMDS	24
#define BIGQ_BYTES	(16u << 20)
#define BIGQ_IMM	4096

static void big_queue(char *out, size_t size)
{
	uint32_t blocks = 0, blen = 0, regions, i, good = 0, bad = 0;
	char rs_[16] = "none", first_bad[16] = "none";
	const char *verify = "bad";
	uint64_t cap;
	int st;

	cap = big_setup(&blen);
	if (!cap || BIGQ_BYTES % blen || BIGQ_BYTES / blen > 0xffff)
		goto out;
	blocks = BIGQ_BYTES / blen;
	regions = cap / blocks;
	if (!regions)
		goto out;
	big_fill(BIGQ_BYTES);
	for (i = 0; i < BIGQ_CMDS; i++)
		if (big_send(0x2a, 0x6100 + i, (i % regions) * blocks, blocks,
			     blen, BIGQ_IMM))
			goto out;
	for (i = 0; i < BIGQ_CMDS; i++) {
		st = big_wait(0x6100, BIGQ_CMDS);
		if (st < 0)
			break;
		if (st) {
			if (!bad++)
				big_status(first_bad, sizeof(first_bad), st);
			continue;
		}
		good++;
	}
	if (good == BIGQ_CMDS)
		verify = big_verify(blocks, blen, rs_, sizeof(rs_));
out:
	snprintf(out, size, " bigq cmds=%u bytes=%u good=%u bad=%u(%s) read=%s verify=%s",
		 BIGQ_CMDS, BIGQ_BYTES, good, bad, first_bad, rs_, verify);
}

/*
 * -m shortw, shortr: a WRITE(10) or READ(10) of SHORT_IO bytes whose STag
 * names an MR of only the first SHORT_MR bytes of the buffer. The RDMA
 * Read or Write that goes beyond it fails with a remote access error: a
 * work request the target does not ask to see complete (only the last of
 * a chain is signaled), after which its queue pair flushes the rest.
 */
#define SHORT_MR	(64u << 10)
#define SHORT_IO	(1024u * 1024)
#define SHORT_WAIT	10

static void short_stag(enum mode mode, char *out, size_t size)
{
	char st[16] = "none";
	uint32_t blen = 0;
	uint64_t cap;

	cap = big_setup(&blen);
	if (!cap || SHORT_IO % blen || SHORT_IO / blen > cap)
		goto out;
	stag_mr = ibv_reg_mr(t.pd, big_buf, SHORT_MR,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_REMOTE_WRITE);
	if (!stag_mr)
		goto out;
	big_fill(SHORT_IO);
	big_wait_sec = SHORT_WAIT;
	if (!big_send(mode == SHORTW ? 0x2a : 0x28, 0x6200, 0, SHORT_IO / blen,
		      blen, 0))
		big_status(st, sizeof(st), big_wait(0x6200, 1));
out:
	snprintf(out, size, " short status=%s", st);
}

/* modes after which the target must have closed the connection */
static int closes(enum mode mode)
{
	switch (mode) {
	case BADDLEN:
	case BIGSEND:
	case AHS0 ... CDBLONG:
	case IMMF1:
	case AFTERFAIL:
	case OVERRUN:
	case DOBIG:
	case DOGAP:
	case SHORTW:
	case SHORTR:
	case HELLOVER ... HELLO2:
	case LOGOUTBAD:
	case LOGOUTCONN:
	case READIMM:
	case ADDCONN:
		return 1;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------------ */
/* -m random                                                          */
/* ------------------------------------------------------------------ */

#define RND_WINDOW	8		/* PDUs between two pings */
#define RND_ITT_CMD	0x10000000u	/* + PDU index: SCSI Commands */
#define RND_ITT_PING	0x20000000u	/* + n: the tool's pings */
#define RND_ITT_CAP	0x30000000u	/* READ CAPACITY after login */
#define RND_DATA	(1024 * 1024)	/* the buffer the STags name */
#define RND_MAX_DATA	8192		/* the target's RecvDataSegmentLength */
#define RND_RING	8		/* recent writes Data-Out may follow */

enum { V_NONE, V_BAD, V_UNDERFED };

static unsigned long long seed;
static unsigned long count = 10000, first_pdu;
static int verbose;
static unsigned char *data_buf, *verdict;
static struct ibv_mr *data_mr;
static uint64_t cap_blocks;
static uint32_t blk_len, last_ok_itt = RND_ITT_CMD, ping_itt;
static int ping_seen, cap_done, cap_status = -1;

static struct {
	uint32_t itt, edtl, next, datasn;
} ring[RND_RING];
static unsigned int ring_n;

static struct {
	unsigned long sent, connections, closed, stalled, login_failed;
	unsigned long good_bad, bad, bad_answered, underfed_good;
	unsigned long responses, rejects, hello_replies;
} rs;

static int sn_gt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/* an ITT for a PDU other than a SCSI Command: never one of the tool's */
static uint32_t rnd_itt(void)
{
	uint32_t itt = (uint32_t)rnd64();

	if (pct(10))
		return 0xffffffff;
	if ((itt >> 28) >= 1 && (itt >> 28) <= 3)
		itt |= 0x40000000;
	return itt;
}

/* CmdSN: mostly the expected one; *@exact says whether it is */
static uint32_t rnd_cmdsn(int *exact)
{
	uint32_t r = rnd(100);

	*exact = r < 80;
	if (r < 80)
		return cmd_sn;
	if (r < 88)
		return cmd_sn + 1 + rnd(6);
	if (r < 93)
		return cmd_sn - 1 - rnd(6);
	return (uint32_t)rnd64();
}

static uint32_t rnd_expstatsn(void)
{
	uint32_t r = rnd(100);

	if (r < 85)
		return exp_stat_sn;
	if (r < 93)
		return exp_stat_sn + rnd(11) - 5;
	return (uint32_t)rnd64();
}

/* LUN field (bytes 8-15): mostly LUN 0 */
static void rnd_lun(unsigned char *bhs)
{
	unsigned int i;

	if (pct(92))
		return;
	if (pct(50)) {
		bhs[9] = rnd(256);
		return;
	}
	for (i = 8; i < 16; i++)
		bhs[i] = rnd(256);
}

static int lun0(const unsigned char *bhs)
{
	static const unsigned char zero[8];

	return !memcmp(bhs + 8, zero, 8);
}

/* random bytes of a data segment, its padding zero */
static void rnd_fill(unsigned char *p, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = rnd(256);
	memset(p + len, 0, ((len + 3) & ~3u) - len);
}

/*
 * A Read or a Write STag (and VA) for @len bytes in the iSER header: mostly
 * inside the registered data buffer, sometimes random (the target's RDMA to
 * it must fail and the connection with it).
 */
static void rnd_stag(int write, uint32_t len)
{
	unsigned char *h = t.tx_buf;
	uint64_t va = (uintptr_t)data_buf;
	uint32_t stag = data_mr->rkey;

	if (len < RND_DATA)
		va += (uint64_t)rnd((RND_DATA - len) / 512 + 1) * 512;
	if (pct(4)) {
		stag = (uint32_t)rnd64();
		va = rnd64();
	}
	h[0] |= write ? ISDM_CTRL_WSV : ISDM_CTRL_RSV;
	itool_put_be32(h + (write ? 4 : 16), stag);
	itool_put_be32(h + (write ? 8 : 20), va >> 32);
	itool_put_be32(h + (write ? 12 : 24), va);
}

/* SCSI opcodes a random CDB avoids: they would outlive the run */
static int rnd_cdb_ok(unsigned char op)
{
	switch (op) {
	case 0x16: case 0x56:	/* RESERVE */
	case 0x5f:		/* PERSISTENT RESERVE OUT */
	case 0xa4:		/* MAINTENANCE OUT (SET TARGET PORT GROUPS) */
	case 0x83:		/* EXTENDED COPY */
		return 0;
	default:
		return 1;
	}
}

/* the CDB of a READ or WRITE(10) of PDU @idx: 1 when it is out of range */
static int rnd_rw10(unsigned char *cdb, int write, uint32_t *n)
{
	uint64_t lba;
	uint32_t r = rnd(100);

	*n = r < 5 ? 0 : r < 92 ? 1 + rnd(64) : rnd(65536);
	r = rnd(100);
	if (r < 70 && cap_blocks >= *n)
		lba = rnd64() % (cap_blocks - *n + 1);
	else if (r < 90)	/* just past the end */
		lba = cap_blocks + rnd(8) - (*n < cap_blocks ? *n : 0);
	else
		lba = (uint32_t)rnd64();
	lba &= 0xffffffff;
	memset(cdb, 0, 16);
	cdb[0] = write ? 0x2a : 0x28;
	if (pct(5))
		cdb[1] = rnd(256);
	itool_put_be32(cdb + 2, lba);
	cdb[7] = *n >> 8;
	cdb[8] = *n;
	return *n && lba + *n > cap_blocks;
}

/* a SCSI Command with its AHS and immediate data; the bytes of the Send */
static uint32_t rnd_scsi(unsigned long idx, unsigned char *bhs, int *exact)
{
	static const unsigned char rd_ops[] = { 0x00, 0x12, 0x25, 0x1a, 0xa0, 0x03 };
	unsigned char *cdb = bhs + 32, *ahs = bhs + ISDM_BHS_LEN;
	uint32_t edtl = 0, dlen = 0, words = 0, n = 0, unsol, itt, i;
	unsigned int kind = rnd(100), ak = rnd(100);
	int oor = 0, rw = 0, write = 0, reuse = pct(3);
	unsigned char flags;

	memset(t.tx_buf, 0, HDR);
	t.tx_buf[0] = ISDM_OP_CTRL;
	if (kind < 70) {	/* READ(10), WRITE(10) */
		write = kind >= 35;
		oor = rnd_rw10(cdb, write, &n);
		edtl = n * blk_len;
		if (pct(20))
			edtl = pct(30) ? 0 : pct(50) ? rnd(edtl + 1) : rnd(1 << 20);
		rw = write ? ISDM_BHS_CMD_WRITE : ISDM_BHS_CMD_READ;
	} else if (kind < 85) {	/* commands that return data */
		cdb[0] = rd_ops[rnd(ARRAY_SIZE(rd_ops))];
		edtl = cdb[0] ? 1 + rnd(255) : 0;
		if (cdb[0] == 0xa0)
			itool_put_be32(cdb + 6, edtl);
		else if (cdb[0] == 0x25)
			edtl = 8;
		else if (cdb[0])
			cdb[4] = edtl;
		if (cdb[0] == 0x12 && pct(30)) {
			cdb[1] = 1;		/* EVPD */
			cdb[2] = pct(70) ? rnd(4) * 0x80 + (pct(50) ? 0x03 : 0) : rnd(256);
		}
		rw = edtl ? ISDM_BHS_CMD_READ : 0;
	} else {		/* anything */
		do
			cdb[0] = rnd(256);
		while (!rnd_cdb_ok(cdb[0]));
		for (i = 1; i < 16; i++)
			cdb[i] = pct(50) ? 0 : rnd(256);
		rw = pct(40) ? ISDM_BHS_CMD_READ : pct(50) ? ISDM_BHS_CMD_WRITE : 0;
		edtl = rw ? rnd(65537) : 0;
	}
	if (pct(8))		/* directions that need not match */
		rw = rnd(4) << 5;
	if (!(rw & ISDM_BHS_CMD_WRITE))
		write = 0;
	flags = rw | rnd(8);	/* ATTR */
	if (pct(92))
		flags |= ISDM_BHS_FINAL;
	if ((rw & ISDM_BHS_CMD_WRITE) && edtl && pct(50))
		dlen = 1 + rnd(edtl < RND_MAX_DATA ? edtl : RND_MAX_DATA);
	else if (pct(2))
		dlen = rnd(RND_MAX_DATA + 1);	/* data on a command without W */

	/* AHS: mostly none, sometimes well-formed, sometimes not */
	memset(ahs, 0, 64);
	if (ak < 4) {		/* 32-byte variable-length CDB, AHSLength 17 */
		cdb[0] = 0x7f;
		cdb[7] = 24;
		words = 5;
		ahs[1] = 17;
		ahs[2] = 1;
		for (i = 4; i < 20; i++)
			ahs[i] = rnd(256);
	} else if (ak < 6) {	/* bidirectional read length, R and W */
		rw = ISDM_BHS_CMD_READ | ISDM_BHS_CMD_WRITE;
		flags |= rw;
		words = 2;
		ahs[1] = 5;
		ahs[2] = 2;
		itool_put_be32(ahs + 4, rnd(65537));
	} else if (ak < 8) {	/* anything */
		words = 1 + rnd(4);
		for (i = 0; i < words * 4; i++)
			ahs[i] = pct(50) ? 0 : rnd(256);
	}
	if (dlen > RND_MAX_DATA - words * 4)
		dlen = RND_MAX_DATA - words * 4;

	/* the stored login keys are still in the buffer: header again */
	bhs[0] = ISDM_OP_SCSI_CMD | (pct(10) ? ISDM_BHS_IMMEDIATE : 0);
	bhs[1] = flags;
	bhs[4] = words;
	bhs[5] = dlen >> 16;
	bhs[6] = dlen >> 8;
	bhs[7] = dlen;
	rnd_lun(bhs);
	itt = reuse ? last_ok_itt : RND_ITT_CMD + (uint32_t)idx;
	itool_put_be32(bhs + 16, itt);
	itool_put_be32(bhs + 20, edtl);
	itool_put_be32(bhs + 24, rnd_cmdsn(exact));
	itool_put_be32(bhs + 28, rnd_expstatsn());
	rnd_fill(ahs + words * 4, dlen);

	/* STags: what the command needs, mostly; sometimes too much or little */
	unsol = dlen;
	if (initial_r2t_no && !(flags & ISDM_BHS_FINAL))
		unsol = edtl < 65536 ? edtl : 65536;
	if ((rw & ISDM_BHS_CMD_READ) && (edtl || pct(5)) && pct(97))
		rnd_stag(0, edtl);
	if ((rw & ISDM_BHS_CMD_WRITE) && (edtl > unsol || pct(5)) && pct(97))
		rnd_stag(1, edtl);
	if (pct(2))
		rnd_stag(pct(50), edtl);

	if (write && !reuse) {
		i = ring_n++ % RND_RING;
		ring[i].itt = itt;
		ring[i].edtl = edtl;
		ring[i].next = dlen;
		ring[i].datasn = 0;
	}
	/* what must not get GOOD: see the header comment */
	if (!reuse && lun0(bhs) && (cdb[0] == 0x28 || cdb[0] == 0x2a)) {
		if (oor)
			verdict[idx] = V_BAD;
		else if (cdb[0] == 0x2a && n && (!write || edtl < n * blk_len))
			verdict[idx] = V_UNDERFED;
	}
	if (verdict[idx] != V_BAD)
		last_ok_itt = itt;
	return HDR + words * 4 + ((dlen + 3) & ~3u);
}

/* Data-Out: mostly for a recent write, at the offset it is at */
static uint32_t rnd_data_out(unsigned long idx)
{
	unsigned char *bhs;
	uint32_t dlen, off, sn, itt, ttt = 0xffffffff;
	unsigned int i;

	if (ring_n && pct(75)) {
		i = rnd(ring_n < RND_RING ? ring_n : RND_RING);
		itt = ring[i].itt;
		off = pct(85) ? ring[i].next : rnd(ring[i].edtl + 8192);
		dlen = ring[i].edtl > off ? ring[i].edtl - off : 0;
		if (dlen > RND_MAX_DATA || pct(10))
			dlen = 1 + rnd(RND_MAX_DATA);
		sn = pct(90) ? ring[i].datasn : rnd(8);
		ring[i].next = off + dlen;
		ring[i].datasn++;
	} else {
		itt = pct(30) ? rnd_itt() : RND_ITT_CMD + rnd(idx + 1);
		off = rnd(1 << 20);
		dlen = rnd(RND_MAX_DATA + 1);
		sn = rnd(8);
	}
	if (pct(8))
		ttt = (uint32_t)rnd64();
	bhs = pdu_start(ISDM_OP_DATA_OUT, pct(70) ? ISDM_BHS_FINAL : 0, dlen);
	rnd_lun(bhs);
	itool_put_be32(bhs + 16, itt);
	itool_put_be32(bhs + 20, ttt);
	itool_put_be32(bhs + 28, rnd_expstatsn());
	itool_put_be32(bhs + 36, sn);
	itool_put_be32(bhs + 40, off);
	rnd_fill(bhs + ISDM_BHS_LEN, dlen);
	return HDR + ((dlen + 3) & ~3u);
}

static const char *const rnd_texts[] = {
	"SendTargets=All", "SendTargets=", "MaxRecvDataSegmentLength=4096",
	"X-org.example.key=1", "HeaderDigest=CRC32C", "TargetAlias=x",
	"=", "NoSuchKey",
};

/*
 * PDU @idx of the sequence in t.tx_buf: the bytes of its Send. *@hello is
 * set for an iSER Hello.
 */
static uint32_t rnd_pdu(unsigned long idx, int *hello)
{
	unsigned char *bhs = t.tx_buf + ISDM_HDR_LEN_EXT, op;
	uint32_t dlen = 0, len, r, i, words = 0;
	int exact = 0, consumes = 0;
	const char *s;

	itool_rng = itool_rnd_mix(seed ^ itool_rnd_mix(idx));
	*hello = 0;
	r = rnd(1000);
	if (r < 545) {
		len = rnd_scsi(idx, bhs, &exact);
		consumes = 1;
	} else if (r < 695) {
		len = rnd_data_out(idx);
	} else if (r < 835) {	/* NOP-Out */
		dlen = pct(75) ? 0 : rnd(pct(80) ? 1025 : RND_MAX_DATA + 1);
		bhs = pdu_start(ISDM_OP_NOP_OUT | (pct(70) ? ISDM_BHS_IMMEDIATE : 0),
				pct(95) ? ISDM_BHS_FINAL : rnd(256), dlen);
		rnd_lun(bhs);
		itool_put_be32(bhs + 16, rnd_itt());
		itool_put_be32(bhs + 20, pct(90) ? 0xffffffff : (uint32_t)rnd64());
		rnd_fill(bhs + ISDM_BHS_LEN, dlen);
		consumes = 1;
	} else if (r < 895) {	/* Task Management */
		bhs = pdu_start(ISDM_OP_TMF_REQ | (pct(80) ? ISDM_BHS_IMMEDIATE : 0),
				ISDM_BHS_FINAL | (pct(95) ? 1 + rnd(8) : rnd(128)), 0);
		rnd_lun(bhs);
		itool_put_be32(bhs + 16, rnd_itt());
		itool_put_be32(bhs + 20, pct(60) ? RND_ITT_CMD + (uint32_t)idx - rnd(24) :
			       (uint32_t)rnd64());
		itool_put_be32(bhs + 32, cmd_sn - rnd(10));
		itool_put_be32(bhs + 36, rnd(4));
		consumes = 1;
	} else if (r < 955) {	/* Text */
		if (pct(60)) {
			s = rnd_texts[rnd(ARRAY_SIZE(rnd_texts))];
			dlen = strlen(s) + (pct(90) ? 1 : 0);
		} else {
			dlen = pct(20) ? 0 : rnd(512);
			s = NULL;
		}
		bhs = pdu_start(ISDM_OP_TEXT_REQ | (pct(30) ? ISDM_BHS_IMMEDIATE : 0),
				(pct(85) ? ISDM_BHS_FINAL : 0) | (pct(5) ? 0x40 : 0),
				dlen);
		itool_put_be32(bhs + 16, rnd_itt());
		itool_put_be32(bhs + 20, pct(92) ? 0xffffffff : (uint32_t)rnd64());
		if (s)
			memcpy(bhs + ISDM_BHS_LEN, s, dlen);
		else
			rnd_fill(bhs + ISDM_BHS_LEN, dlen);
		consumes = 1;
	} else if (r < 963) {	/* Logout */
		bhs = pdu_start(ISDM_OP_LOGOUT_REQ | (pct(80) ? ISDM_BHS_IMMEDIATE : 0),
				ISDM_BHS_FINAL | (pct(90) ? rnd(3) : rnd(128)), 0);
		itool_put_be32(bhs + 16, rnd_itt());
		if (pct(10))
			itool_put_be32(bhs + 20, rnd(65536) << 16);	/* CID */
		consumes = 1;
	} else if (r < 973) {	/* SNACK, forbidden with iSER */
		bhs = pdu_start(ISDM_OP_SNACK, ISDM_BHS_FINAL | rnd(4), 0);
		itool_put_be32(bhs + 16, rnd_itt());
		itool_put_be32(bhs + 20, (uint32_t)rnd64());
		itool_put_be32(bhs + 40, rnd(16));
		itool_put_be32(bhs + 44, rnd(16));
	} else if (r < 983) {	/* Login, in full feature phase */
		dlen = pct(50) ? 0 : rnd(256);
		bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, rnd(256),
				dlen);
		itool_put_be32(bhs + 16, rnd_itt());
		rnd_fill(bhs + ISDM_BHS_LEN, dlen);
	} else if (r < 991) {	/* reserved, vendor or target opcodes */
		do
			op = rnd(64);
		while (op <= ISDM_OP_LOGOUT_REQ || op == ISDM_OP_SNACK);
		dlen = pct(50) ? 0 : rnd(256);
		bhs = pdu_start(op, rnd(256), dlen);
		itool_put_be32(bhs + 16, rnd_itt());
		rnd_fill(bhs + ISDM_BHS_LEN, dlen);
	} else if (r < 997) {	/* iSER Hello: first message only */
		memset(t.tx_buf, 0, ISDM_HELLO_LEN);
		t.tx_buf[0] = ISDM_OP_HELLO;
		t.tx_buf[1] = pct(85) ? ISDM_ISER_VERSION << 4 | ISDM_ISER_VERSION :
			      rnd(256);
		t.tx_buf[3] = rnd(256);
		*hello = 1;
		return ISDM_HELLO_LEN;
	}
	if (r >= 997) {		/* more data than the target receives */
		dlen = RND_MAX_DATA + 1 + rnd(4096);
		bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, dlen);
		itool_put_be32(bhs + 16, rnd_itt());
		itool_put_be32(bhs + 20, 0xffffffff);
		rnd_fill(bhs + ISDM_BHS_LEN, dlen);
	}
	if (r >= 695) {
		if (consumes || pct(50)) {
			itool_put_be32(bhs + 24, rnd_cmdsn(&exact));
			itool_put_be32(bhs + 28, rnd_expstatsn());
		}
		if (pct(1)) {	/* an AHS on a PDU that has none */
			words = 1 + rnd(2);
			memmove(bhs + ISDM_BHS_LEN + words * 4,
				bhs + ISDM_BHS_LEN, (dlen + 3) & ~3u);
			for (i = 0; i < words * 4; i++)
				bhs[ISDM_BHS_LEN + i] = rnd(256);
			bhs[4] = words;
		}
		len = HDR + words * 4 + ((dlen + 3) & ~3u);
	}
	/* reserved bits of the iSER header, STags no one asked for */
	if (pct(3))
		t.tx_buf[0] |= rnd(4);
	if (pct(2))
		t.tx_buf[1 + rnd(3)] = rnd(256);
	if (r >= 545 && pct(2))
		rnd_stag(pct(50), 4096);
	if (pct(1))		/* not a control-type iSER message */
		t.tx_buf[0] = (t.tx_buf[0] & 0x0f) | (rnd(16) << 4);
	if (consumes && exact && !(bhs[0] & ISDM_BHS_IMMEDIATE))
		cmd_sn++;
	return len;
}

/* -v: one line for each PDU sent */
static void rnd_show(unsigned long idx, uint32_t len)
{
	const unsigned char *h = t.tx_buf, *bhs = h + ISDM_HDR_LEN_EXT;

	if (len < HDR) {
		printf("pdu %lu: iSER 0x%02x, %u bytes\n", idx, h[0], len);
		return;
	}
	printf("pdu %lu: iSER 0x%02x op 0x%02x flags 0x%02x ahs %u dlen %u ",
	       idx, h[0], bhs[0], bhs[1], bhs[4], itool_get_be24(bhs + 5));
	printf("itt 0x%08x f20 0x%08x sn 0x%08x/0x%08x cdb0 0x%02x lun %02x%02x\n",
	       itool_get_be32(bhs + 16), itool_get_be32(bhs + 20),
	       itool_get_be32(bhs + 24), itool_get_be32(bhs + 28), bhs[32],
	       bhs[8], bhs[9]);
}

/* what came back: sequence numbers, responses to malformed commands */
static void rnd_note(const unsigned char *msg, int len)
{
	const unsigned char *bhs = msg + ISDM_HDR_LEN_EXT;
	uint32_t itt, idx, exp;
	unsigned char op;

	if (len >= 1 && (msg[0] & ISDM_OP_MASK) == ISDM_OP_HELLO_REPLY) {
		rs.hello_replies++;
		return;
	}
	if (len < HDR)
		return;
	rs.responses++;
	op = bhs[0] & ISDM_BHS_OPCODE_MASK;
	itt = itool_get_be32(bhs + 16);
	exp = itool_get_be32(bhs + 28);
	if (op != ISDM_OP_NOP_IN || itt != 0xffffffff)
		if (sn_gt(itool_get_be32(bhs + 24) + 1, exp_stat_sn))
			exp_stat_sn = itool_get_be32(bhs + 24) + 1;
	if (sn_gt(exp, cmd_sn))
		cmd_sn = exp;
	switch (op) {
	case ISDM_OP_NOP_IN:
		if (itt == ping_itt) {
			ping_seen = 1;
			cmd_sn = exp;	/* everything before the ping is done */
		}
		break;
	case ISDM_OP_REJECT:
		rs.rejects++;
		break;
	case ISDM_OP_SCSI_RSP:
		if (itt == RND_ITT_CAP) {
			cap_status = bhs[2] ? 0x100 : bhs[3];
			cap_done = 1;
			break;
		}
		idx = itt - RND_ITT_CMD;
		if (itt < RND_ITT_CMD || idx >= first_pdu + count)
			break;
		if (verdict[idx] == V_BAD && !bhs[2] && !bhs[3]) {
			rs.good_bad++;
			fprintf(stderr, "iser_ffp: PDU %u (ITT 0x%08x): %s\n",
				idx, itt, "malformed, got status GOOD");
		} else if (verdict[idx] == V_BAD) {
			rs.bad_answered++;
		} else if (verdict[idx] == V_UNDERFED && !bhs[2] && !bhs[3]) {
			rs.underfed_good++;
		}
		break;
	default:
		break;
	}
}

/* what came in during the last Send */
static void rnd_drain(void)
{
	unsigned char *msg;
	int len;

	while (t.nr_stashed) {
		len = itool_recv(&t, &msg, 0.001);
		if (len >= 0)
			rnd_note(msg, len);
	}
}

/* wait until @done is set by rnd_note(); 0 when it was */
static int rnd_wait(const int *done, double secs)
{
	double end = itool_now() + secs;
	unsigned char *msg;
	int len;

	while (!*done && itool_now() < end) {
		len = itool_recv(&t, &msg, end - itool_now());
		if (len < 0)
			break;
		rnd_note(msg, len);
	}
	return *done ? 0 : -1;
}

/* an immediate ping; 0 when the NOP-In came, so all before it was read */
static int rnd_ping(void)
{
	static uint32_t seq;
	unsigned char *bhs;

	ping_itt = RND_ITT_PING + (seq++ & 0x0fffffff);
	ping_seen = 0;
	bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE, ISDM_BHS_FINAL, 0);
	itool_put_be32(bhs + 16, ping_itt);
	itool_put_be32(bhs + 20, 0xffffffff);
	itool_put_be32(bhs + 24, cmd_sn);
	itool_put_be32(bhs + 28, exp_stat_sn);
	if (send_buf(HDR))
		return -1;
	rnd_drain();
	return rnd_wait(&ping_seen, WAIT_SEC);
}

/* READ CAPACITY (10) into the data buffer: the LUN's size */
static int rnd_capacity(void)
{
	unsigned char *bhs;

	cap_status = -1;
	cap_done = 0;
	bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_FINAL | ISDM_BHS_CMD_READ, 0);
	itool_put_be32(bhs + 16, RND_ITT_CAP);
	itool_put_be32(bhs + 20, 8);
	itool_put_be32(bhs + 24, cmd_sn++);
	itool_put_be32(bhs + 28, exp_stat_sn);
	memset(bhs + 32, 0, 16);
	bhs[32] = 0x25;
	t.tx_buf[0] |= ISDM_CTRL_RSV;
	itool_put_be32(t.tx_buf + 16, data_mr->rkey);
	itool_put_be32(t.tx_buf + 20, (uint64_t)(uintptr_t)data_buf >> 32);
	itool_put_be32(t.tx_buf + 24, (uintptr_t)data_buf);
	memset(data_buf, 0, 8);
	if (send_buf(HDR))
		return -1;
	rnd_drain();
	if (rnd_wait(&cap_done, WAIT_SEC) || cap_status)
		return -1;
	cap_blocks = (uint64_t)itool_get_be32(data_buf) + 1;
	blk_len = itool_get_be32(data_buf + 4);
	return blk_len ? 0 : -1;
}

/*
 * Did the target's QP refuse the Send just made (a NAK: a Send larger
 * than its receive buffer, say)? Then the PDU reached the target, which
 * closes the connection for it: it counts as sent. Sent again on the next
 * connection it would close that one too, for ever.
 */
static int rnd_refused(void)
{
	switch (t.send_status) {
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_OP_ERR:
		return 1;
	default:
		return 0;
	}
}

static void rnd_hangup(void)
{
	if (t.id && !t.closed) {
		rdma_disconnect(t.id);
		itool_cm_wait(&t, RDMA_CM_EVENT_DISCONNECTED, 2);
	}
	if (data_mr)
		ibv_dereg_mr(data_mr);
	data_mr = NULL;
	itool_verbs_destroy(&t);
	if (t.ch)
		rdma_destroy_event_channel(t.ch);
	memset(&t, 0, sizeof(t));
}

/* a new connection and session; 0 when it is in full feature phase */
static int rnd_session(const char *addr, const char *port)
{
	static uint16_t sessions;

	/*
	 * A new ISID for each session: a login with the ISID of a session
	 * whose connection LIO is still closing reinstates it, and with
	 * DefaultTime2Retain 0 LIO then may close the old session from its
	 * Time2Retain timer, whose handler takes a mutex in softirq context
	 * (iscsit_close_session() -> transport_deregister_session(); 6.1
	 * and 6.12, with any transport: the debug kernel reports "sleeping
	 * function called from invalid context"). Reinstatement during a
	 * teardown is the business of the other modes (cmdsngap, afterfail,
	 * gapreset, dropmid).
	 */
	isid_qualifier = 0x100 + (sessions++ & 0x7fff);
	cmd_sn = 0;
	exp_stat_sn = 0;
	if (connect_target(addr, port) || login())
		return -1;
	/* a page more than the STags name: see big_setup() (6.1's rxe) */
	data_mr = ibv_reg_mr(t.pd, data_buf, RND_DATA + 4096,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_REMOTE_WRITE);
	if (!data_mr)
		return -1;
	if (!cap_blocks && rnd_capacity()) {
		fprintf(stderr, "iser_ffp: READ CAPACITY failed (status 0x%x)\n",
			cap_status);
		return -1;
	}
	return 0;
}

/*
 * -m random: COUNT PDUs of the sequence SEED over as many connections as
 * it takes. 0 when it ran (the summary line judges), 1 on a local error.
 */
static int random_run(const char *addr, const char *port)
{
	unsigned long idx = first_pdu, end = first_pdu + count;
	unsigned int in_flight, fails = 0;
	uint32_t saved_cmd_sn;
	int hello, down, lost;
	uint32_t len;

	data_buf = aligned_alloc(4096, RND_DATA + 4096);
	verdict = calloc(end + 1, 1);
	if (!data_buf || !verdict || end >= 0x0fffffff)
		return 1;
	nr_rx = ITOOL_MAX_RX;
	printf("random seed=%llu first=%lu count=%lu ", seed, first_pdu, count);
	printf("(replay: iser_ffp -m random -s %llu -F %lu -N %lu)\n",
	       seed, first_pdu, count);
	fflush(stdout);
	while (idx < end) {
		if (rnd_session(addr, port)) {
			rs.login_failed++;
			rnd_hangup();
			if (!cap_blocks && rs.connections == 0 && fails > 2)
				return 1;
			if (++fails >= 10)
				break;
			sleep(1);
			continue;
		}
		fails = 0;
		rs.connections++;
		in_flight = 0;
		down = 0;
		lost = 0;
		while (idx < end && !down) {
			saved_cmd_sn = cmd_sn;
			len = rnd_pdu(idx, &hello);
			if (send_buf(len) && !rnd_refused()) {
				/* the connection went: this PDU again, next one */
				cmd_sn = saved_cmd_sn;
				down = 1;
				lost = 1;
				break;
			}
			if (verbose)
				rnd_show(idx, len);
			rs.sent++;
			rs.bad += verdict[idx++] == V_BAD;
			rnd_drain();
			if (++in_flight < RND_WINDOW && idx < end && !t.closed)
				continue;
			in_flight = 0;
			down = rnd_ping() != 0;
		}
		if (down && !t.closed)
			itool_cm_wait(&t, RDMA_CM_EVENT_DISCONNECTED, 2);
		if (down && !t.closed && !lost) {
			/* up, but no answer to a ping within WAIT_SEC */
			rs.stalled++;
			fprintf(stderr, "iser_ffp: no answer to a ping after PDU %lu\n",
				idx - 1);
		} else if (down) {
			rs.closed++;
		}
		rnd_hangup();
	}
	printf("random seed=%llu sent=%lu connections=%lu good_status_on_bad=%lu ",
	       seed, rs.sent, rs.connections, rs.good_bad);
	printf("closed=%lu stalled=%lu login_failed=%lu bad_cmds=%lu ",
	       rs.closed, rs.stalled, rs.login_failed, rs.bad);
	printf("bad_answered=%lu underfed_good=%lu responses=%lu rejects=%lu ",
	       rs.bad_answered, rs.underfed_good, rs.responses, rs.rejects);
	printf("hello_replies=%lu\n", rs.hello_replies);
	fflush(stdout);
	return 0;
}

/*
 * -m dropmid: a second connection starts a login of the same initiator
 * and ISID, which LIO answers by reinstating the first connection's
 * session, and disconnects at once; the first is gone after that.
 */
static void drop_mid_login(const char *addr, const char *port)
{
	struct itool first = t;

	memset(&t, 0, sizeof(t));
	if (!connect_target(addr, port)) {
		login_send_only = 1;
		login();
		login_send_only = 0;
		rdma_disconnect(t.id);
		itool_cm_wait(&t, RDMA_CM_EVENT_DISCONNECTED, 2);
	}
	rnd_hangup();		/* the second connection */
	t = first;
	/* let LIO finish the reinstatement and the dropped login */
	sleep(3);
}

/*
 * -m addconn: a second connection tries to add itself to the session
 * (refused: MaxConnections is 1), a third reinstates the session; back on
 * the first, whose ping must then find it closed.
 */
static void add_conn(const char *addr, const char *port, char *out,
		     size_t size)
{
	uint32_t sn = cmd_sn, stat_sn = exp_stat_sn;
	struct itool first = t;
	int added = 0, reinstated = 0;

	memset(&t, 0, sizeof(t));
	if (!connect_target(addr, port)) {
		login_tsih = session_tsih;
		login_cid = 1;
		exp_stat_sn = 0;
		added = !login();
		login_tsih = 0;
		login_cid = 0;
	}
	rnd_hangup();		/* the second connection */
	/* the target's teardown of the refused login runs meanwhile */
	sleep(1);
	exp_stat_sn = 0;
	if (!connect_target(addr, port))
		reinstated = !login();
	/* the third stays up: its session is not the one under test */
	t = first;
	cmd_sn = sn;
	exp_stat_sn = stat_sn;
	snprintf(out, size, " added=%s reinstated=%s",
		 added ? "accepted" : "refused", reinstated ? "ok" : "failed");
	/* let LIO close the first connection (the reinstatement waits) */
	sleep(2);
}

/*
 * -m shortlogin: per length 1..75, a connection whose first message is the
 * start of a Login Request (iSER header and BHS, 76 bytes) cut to that
 * length; the target must close it without an answer.
 */
static void short_login(const char *addr, const char *port)
{
	unsigned int len, closed = 0, answered = 0, no_conn = 0, unsent = 0;
	unsigned int rejected = 0;
	char open_lens[400] = "", slow[400] = "";
	size_t on = 0, sn = 0;
	unsigned char *bhs, *msg;
	double start, took, slowest = 0;

	for (len = 1; len < HDR; len++) {
		memset(&t, 0, sizeof(t));
		if (connect_target(addr, port)) {
			no_conn++;
			rnd_hangup();
			continue;
		}
		/* Transit, CSG operational (1), NSG full feature (3) */
		bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, 0x87, 0);
		bhs[8] = 0x80;
		bhs[13] = 0x2b;
		itool_put_be32(bhs + 16, 0x1000 + len);	/* ITT */
		start = itool_now();
		if (send_buf(len))
			unsent++;
		if (itool_recv(&t, &msg, SHORT_WAIT) >= 0)
			answered++;
		took = itool_now() - start;
		if (!t.closed && took < SHORT_WAIT)
			itool_cm_wait(&t, RDMA_CM_EVENT_DISCONNECTED,
				      SHORT_WAIT - took);
		took = itool_now() - start;
		if (t.closed) {
			closed++;
			rejected += t.rejected;
			if (took > slowest)
				slowest = took;
			if (took >= 1 && sn < sizeof(slow) - 16)
				sn += snprintf(slow + sn, sizeof(slow) - sn,
					       "%s%u:%u.%u", sn ? "," : "", len,
					       (unsigned int)took % 100,
					       (unsigned int)(took * 10) % 10);
		} else if (on < sizeof(open_lens) - 8) {
			on += snprintf(open_lens + on, sizeof(open_lens) - on,
				       "%s%u", on ? "," : "", len);
		}
		rnd_hangup();
	}
	printf("shortlogin lengths=1-%u closed=%u answered=%u unsent=%u",
	       (unsigned int)HDR - 1, closed, answered, unsent);
	printf(" no_connection=%u slowest=%.1f slow=%s open=%s rejected=%u\n",
	       no_conn, slowest, sn ? slow : "none", on ? open_lens : "none",
	       rejected);
}

/* the stage bits of a Login Response in @msg (@len bytes), or "none" */
static const char *login_stages(const unsigned char *msg, int len)
{
	static char buf[2][32];
	static int n;
	const unsigned char *bhs;
	char *b = buf[n++ & 1];

	if (len < HDR)
		return "none";
	bhs = msg + ISDM_HDR_LEN_EXT;
	if ((bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_LOGIN_RSP)
		return "none";
	snprintf(b, sizeof(buf[0]), "%u%s%u/%u", (bhs[1] >> 2) & 3,
		 bhs[1] & 0x80 ? ">" : "-", bhs[1] & 3, bhs[36]);
	return b;
}

/*
 * The first Login Request of a connection, for the security stage
 * (AuthMethod=None, T to the operational stage): of a normal session with
 * @target, or of a discovery session when @target is NULL. 0 once sent.
 */
static int send_security_login(const char *target)
{
	static char keys[512];
	unsigned char *bhs;
	uint32_t dlen = 0;

	dlen = add_key(keys, dlen, "InitiatorName", initiator_name);
	if (target) {
		dlen = add_key(keys, dlen, "SessionType", "Normal");
		dlen = add_key(keys, dlen, "TargetName", target);
	} else {
		dlen = add_key(keys, dlen, "SessionType", "Discovery");
	}
	dlen = add_key(keys, dlen, "AuthMethod", "None");
	/* Transit, CSG security (0), NSG operational (1) */
	bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, 0x81, dlen);
	bhs[8] = 0x80;
	bhs[13] = 0x2c;
	itool_put_be32(bhs + 16, 0x1000);
	memcpy(bhs + ISDM_BHS_LEN, keys, dlen);
	return send_buf(HDR + ((dlen + 3) & ~3u));
}

/*
 * -m loginrace (discovery): a Login Request for the security stage, then,
 * while its Login Response still waits in RNR retry (no receive buffer is
 * posted yet), the Login Request for the operational stage; then the
 * receive buffers. Each response must arrive as it was sent: the first
 * with CSG 0 (security) and NSG 1, the second CSG 1 and NSG 3.
 */
static void login_race(const char *addr, const char *port)
{
	static char keys[512];
	const char *first = "none", *second = "none";
	unsigned char *bhs, *msg = NULL;
	uint32_t dlen = 0;
	int i, len;

	memset(&t, 0, sizeof(t));
	t.rx_later = 1;
	if (connect_target(addr, port)) {
		printf("loginrace connected=no\n");
		return;
	}
	if (send_security_login(NULL))
		goto out;
	/* the target answers it: that Send waits for a receive buffer */
	sleep(1);
	dlen = add_key(keys, dlen, "HeaderDigest", "None");
	dlen = add_key(keys, dlen, "DataDigest", "None");
	dlen = add_key(keys, dlen, "RDMAExtensions", "Yes");
	dlen = add_key(keys, dlen, "InitiatorRecvDataSegmentLength", "8192");
	dlen = add_key(keys, dlen, "TargetRecvDataSegmentLength", "8192");
	dlen = add_key(keys, dlen, "MaxOutstandingUnexpectedPDUs", "0");
	/* Transit, CSG operational (1), NSG full feature (3) */
	bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, 0x87, dlen);
	bhs[8] = 0x80;
	bhs[13] = 0x2c;
	itool_put_be32(bhs + 16, 0x1000);
	itool_put_be32(bhs + 28, 1);		/* ExpStatSN */
	memcpy(bhs + ISDM_BHS_LEN, keys, dlen);
	if (send_buf(HDR + ((dlen + 3) & ~3u)))
		goto out;
	sleep(1);
	for (i = 0; i < t.nr_rx; i++)
		if (itool_post_rx(&t, i))
			goto out;
	len = recv_msg(&msg);
	first = login_stages(msg, len);
	if (len >= HDR) {
		len = recv_msg(&msg);
		second = login_stages(msg, len);
	}
out:
	printf("loginrace first=%s second=%s closed=%s\n", first, second,
	       itool_yes_no(t.closed, "yes"));
	rnd_hangup();
}

/*
 * -m loginstall: the Login Request for the security stage, its Login
 * Response, then nothing more. A target that waits for the next
 * Login Request for ever keeps an unauthenticated connection, and LIO's
 * half-done login with it, as long as the peer likes.
 */
static void login_stall(const char *addr, const char *port, int hold,
			int rnr)
{
	const char *first = "none";
	unsigned char *msg = NULL;
	double start = itool_now();
	int len;

	memset(&t, 0, sizeof(t));
	t.rx_later = rnr;
	if (connect_target(addr, port)) {
		printf("%s connected=no\n", rnr ? "loginrnr" : "loginstall");
		return;
	}
	if (send_security_login(target_name))
		goto out;
	if (!rnr) {
		len = recv_msg(&msg);
		first = login_stages(msg, len);
	}
	start = itool_now();
	while (!t.closed && itool_now() < start + hold)
		itool_cm_wait(&t, RDMA_CM_EVENT_DISCONNECTED, 1);
out:
	if (rnr)
		printf("loginrnr closed_by_target=%s\n",
		       itool_yes_no(t.closed, "yes"));
	else
		printf("loginstall first=%s closed=%s after=%.0f\n", first,
		       itool_yes_no(t.closed, "yes"), itool_now() - start);
	rnd_hangup();
}

int main(int argc, char **argv)
{
	const char *hello_reply = "none";
	char big[128] = "";
	char reject[16] = "none", status[16] = "none", text[32] = "none";
	enum mode mode = NOP;
	int opt, nop_in = 0, count_given = 0, wait_given = 0;
	unsigned int i;

	while ((opt = getopt(argc, argv, "m:n:i:s:N:F:vRT:W:")) != -1) {
		switch (opt) {
		case 'v':
			verbose = 1;
			continue;
		case 'R':
			no_relogin = 1;
			continue;
		case 'T':
			time2retain = optarg;
			continue;
		case 'W':
			big_wait_sec = atoi(optarg);
			wait_given = 1;
			if (big_wait_sec < 1)
				big_wait_sec = BIG_WAIT;
			continue;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			continue;
		case 'N':
			count = strtoul(optarg, NULL, 0);
			count_given = 1;
			continue;
		case 'F':
			first_pdu = strtoul(optarg, NULL, 0);
			continue;
		case 'n':
			target_name = optarg;
			continue;
		case 'i':
			initiator_name = optarg;
			continue;
		case 'm':
			break;
		default:
			return 1;
		}
		for (i = 0; i < ARRAY_SIZE(mode_names); i++)
			if (!strcmp(optarg, mode_names[i]))
				break;
		if (i == ARRAY_SIZE(mode_names)) {
			fprintf(stderr, "iser_ffp: unknown mode %s\n", optarg);
			return 1;
		}
		mode = i;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: iser_ffp [-m MODE] [-n TARGET] [-i INITIATOR] %s\n",
			"[-s SEED] [-N COUNT] [-F FIRST] [-v] [-R] [-T SECS] [-W SECS] ADDR PORT");
		return 1;
	}
	if ((mode == BIGIO || mode == BIGQ || mode == SHORTW ||
	     mode == SHORTR || mode == BADTTT || mode == DUPITT ||
	     mode == DUPITTW) && !target_name) {
		fprintf(stderr, "iser_ffp: -m %s needs -n TARGET\n",
			mode_names[mode]);
		return 1;
	}
	/* its buffer is a plain MR: decline Send with Invalidate */
	if (mode == BIGIO || mode == BIGQ || mode == SHORTW ||
	    mode == SHORTR || mode == READIMM || mode == ORDABORT ||
	    mode == DUPITT)
		nr_rx = ITOOL_MAX_RX;
	if (mode == SHORTLOGIN) {
		short_login(argv[optind], argv[optind + 1]);
		return 0;
	}
	if (mode == LOGINRACE) {
		login_race(argv[optind], argv[optind + 1]);
		return 0;
	}
	if (mode == LOGINSTALL || mode == LOGINRNR) {
		login_stall(argv[optind], argv[optind + 1],
			    wait_given ? big_wait_sec : 30, mode == LOGINRNR);
		return 0;
	}
	if (mode == RANDOM) {
		if (!target_name) {
			fprintf(stderr, "iser_ffp: -m random needs -n TARGET\n");
			return 1;
		}
		return random_run(argv[optind], argv[optind + 1]);
	}
	if (connect_target(argv[optind], argv[optind + 1])) {
		fprintf(stderr, "iser_ffp: cannot connect to %s:%s (%s)\n",
			argv[optind], argv[optind + 1], strerror(errno));
		return 1;
	}
	if (login()) {
		printf("login=failed hello_reply=none reject=none nop_in=no closed=%s%s\n",
		       itool_yes_no(t.closed, "yes"), " status=none text=none");
		return 0;
	}
	if (mode == HELLO || (mode >= HELLOVER && mode <= HELLO2))
		hello_reply = hello(mode);
	else if (mode == BIGIO)
		big_io(big, sizeof(big));
	else if (mode == BIGQ)
		big_queue(big, sizeof(big));
	else if (mode == SHORTW || mode == SHORTR)
		short_stag(mode, big, sizeof(big));
	else if (mode == DROPMID)
		drop_mid_login(argv[optind], argv[optind + 1]);
	else if (mode == ADDCONN)
		add_conn(argv[optind], argv[optind + 1], big, sizeof(big));
	else if (mode == BADTTT)
		bad_ttt();
	else if (mode == NOREPOST)
		no_repost(count_given ? count : 200,
			  wait_given ? big_wait_sec : 30);
	else if (mode == DUPITT || mode == DUPITTW)
		dup_itt(mode);
	else if (mode != NOP)
		offend(mode);
	if (mode != BADDLEN && mode != BIGSEND && mode != DROPMID &&
	    mode != NOREPOST)
		nop_in = ping(0x100) == 0;
	itool_cm_wait(&t, RDMA_CM_EVENT_DISCONNECTED, closes(mode) ? 5 : 1);
	if (reject_reason >= 0)
		snprintf(reject, sizeof(reject), "0x%02x", reject_reason);
	if (scsi_status >= 0)
		snprintf(status, sizeof(status), "0x%02x", scsi_status);
	else if (scsi_status == -2)
		snprintf(status, sizeof(status), "nop_in");
	if (mode == TEXTCONT)
		snprintf(text, sizeof(text), "%d/%s", text_parts,
			 text_final ? "final" : "none");
	printf("login=ok hello_reply=%s reject=%s nop_in=%s closed=%s status=%s text=%s%s",
	       hello_reply, reject, nop_in ? "yes" : "no",
	       t.closed ? "yes" : "no", status, text,
	       target_name ? (initial_r2t_no ? " initial_r2t=no" :
			      " initial_r2t=yes") : "");
	printf("%s", big);
	if (mode == READIMM)
		printf(" read_data=%s", rbuf_written ? "written" : "untouched");
	if (mode == DUPITT || mode == DUPITTW)
		printf(" dup_answers=%d dup_good=%d", dup_answers, dup_good);
	if (mode == NOREPOST)
		printf(" pings_sent=%u held=%.0f", norepost_sent,
		       norepost_held);
	if (mode == ORDABORT) {
		char a[16], b[16], c[16];

		ord_status(a, sizeof(a), ord_first);
		ord_status(b, sizeof(b), ord_abort);
		ord_status(c, sizeof(c), ord_second);
		printf(" first=%s abort=%s second=%s", a, b, c);
	}
	if (mode == GAP || mode == AFTERFAIL || mode == OVERRUN ||
	    mode == DOBIG || mode == DOGAP || mode == TMFSEQ ||
	    mode == GAPRESET || mode == DOSHORT || mode == READIMM ||
	    mode == BADTTT || mode == DUPITT || mode == DUPITTW ||
	    (mode == DROPMID && !no_relogin)) {
		/* the old connection must go away in full: log in again */
		rnd_hangup();
		printf(" relogin=%s", connect_target(argv[optind], argv[optind + 1]) ||
		       login() ? "failed" : "ok");
	}
	printf("\n");
	fflush(stdout);
	return 0;
}
