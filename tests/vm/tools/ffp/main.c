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
 *   piguard  on a LUN with T10 PI type 1 and 512-byte blocks, protected
 *            WRITE(10)s whose tuples the tool makes: good ones, a wrong
 *            guard, a wrong reference tag, none at all; then a protected
 *            READ(10) of the good data (pi.c). Appends "pi good=S
 *            guard=S ref=S notuple=S read=S readback=ok|bad", each S the
 *            status and, for a CHECK CONDITION, the sense key, ASC and
 *            ASCQ ("0x02/0b/10/01")
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffp.h"

/* what a mode needs, and what the summary then checks */
enum {
	F_TARGET	= 1 << 0,	/* needs -n: a normal session */
	/* 32 receive buffers, no Send with Invalidate: plain MRs */
	F_PLAIN_MR	= 1 << 1,
	F_CLOSES	= 1 << 2,	/* the target must close the connection */
	F_NO_PING	= 1 << 3,	/* no ping after it */
	F_RELOGIN	= 1 << 4,	/* a new login must work after it */
	F_HELLO		= 1 << 5,	/* an iSER Hello exchange */
	F_STANDALONE	= 1 << 6,	/* its own connections and summary */
};

static const struct {
	const char *name;
	unsigned int flags;
} modes[] = {
	[NOP]		= { "nop", 0 },
	[HELLO]		= { "hello", F_HELLO },
	[SNACK]		= { "snack", 0 },
	[LOGIN]		= { "login", 0 },
	[SCSI]		= { "scsi", 0 },
	[BADDLEN]	= { "baddlen", F_CLOSES | F_NO_PING },
	[BIGSEND]	= { "bigsend", F_CLOSES | F_NO_PING },
	[TEXTCONT]	= { "textcont", 0 },
	[AHS0]		= { "ahs0", F_CLOSES },
	[AHSOVER]	= { "ahsover", F_CLOSES },
	[AHSTYPE]	= { "ahstype", F_CLOSES },
	[AHSNOP]	= { "ahsnop", F_CLOSES },
	[AHSSHORT]	= { "ahsshort", F_CLOSES },
	[CDBLONG]	= { "cdblong", F_CLOSES },
	[ECDB]		= { "ecdb", 0 },
	[BIDI]		= { "bidi", 0 },
	[IMMF1]		= { "immf1", F_CLOSES },
	[GAP]		= { "cmdsngap", F_RELOGIN },
	[AFTERFAIL]	= { "afterfail", F_CLOSES | F_RELOGIN },
	[OVERRUN]	= { "overrun", F_CLOSES | F_RELOGIN },
	[DOBIG]		= { "dobig", F_CLOSES | F_RELOGIN },
	[DOSENSE]	= { "dosense", 0 },
	[DOGAP]		= { "dogap", F_CLOSES | F_RELOGIN },
	[NOPTTT]	= { "nopttt", 0 },
	[TMFSEQ]	= { "tmfseq", F_RELOGIN },
	[DROPMID]	= { "dropmid", F_NO_PING | F_RELOGIN },
	[BIGIO]		= { "bigio", F_TARGET | F_PLAIN_MR },
	[BIGQ]		= { "bigq", F_TARGET | F_PLAIN_MR },
	[SHORTW]	= { "shortw", F_TARGET | F_PLAIN_MR | F_CLOSES },
	[SHORTR]	= { "shortr", F_TARGET | F_PLAIN_MR | F_CLOSES },
	[RANDOM]	= { "random", F_TARGET | F_STANDALONE },
	[HELLOVER]	= { "hellover", F_HELLO | F_CLOSES },
	[HELLOBAD]	= { "hellobad", F_HELLO | F_CLOSES },
	[HELLOLEN]	= { "hellolen", F_HELLO | F_CLOSES },
	[HELLO2]	= { "hello2", F_HELLO | F_CLOSES },
	[LOGOUTBAD]	= { "logoutbad", F_CLOSES },
	[GAPRESET]	= { "gapreset", F_RELOGIN },
	[DOSHORT]	= { "doshort", F_RELOGIN },
	[READIMM]	= { "readimm", F_PLAIN_MR | F_CLOSES | F_RELOGIN },
	[ORDABORT]	= { "ordabort", F_PLAIN_MR },
	[TEXTBAD]	= { "textbad", 0 },
	[LOGOUTCONN]	= { "logoutconn", F_CLOSES },
	[ADDCONN]	= { "addconn", F_CLOSES },
	[BADTTT]	= { "badttt", F_TARGET | F_RELOGIN },
	[DUPITT]	= { "dupitt", F_TARGET | F_PLAIN_MR | F_RELOGIN },
	[DUPITTW]	= { "dupittw", F_TARGET | F_RELOGIN },
	[NOREPOST]	= { "norepost", F_NO_PING },
	[SHORTLOGIN]	= { "shortlogin", F_STANDALONE },
	[LOGINRACE]	= { "loginrace", F_STANDALONE },
	[LOGINSTALL]	= { "loginstall", F_STANDALONE },
	[LOGINRNR]	= { "loginrnr", F_STANDALONE },
	[PIGUARD]	= { "piguard", F_TARGET | F_PLAIN_MR },
};

static int no_relogin;		/* -R: dropmid without the new login */

/* the modes with their own connections and summary line: exit status */
static int run_standalone(enum mode mode, const char *addr, const char *port,
			  int hold)
{
	switch (mode) {
	case SHORTLOGIN:
		short_login(addr, port);
		return 0;
	case LOGINRACE:
		login_race(addr, port);
		return 0;
	case LOGINSTALL:
	case LOGINRNR:
		login_stall(addr, port, hold, mode == LOGINRNR);
		return 0;
	default:
		return random_run(addr, port);
	}
}

/*
 * What @mode does once logged in; the HelloReply's verdict of a Hello
 * mode, "none" for the others. A mode with more to report writes it to
 * @out (@size bytes).
 */
static const char *run_ffp(enum mode mode, const char *addr, const char *port,
			   char *out, size_t size, unsigned long pings,
			   int hold)
{
	switch (mode) {
	case BIGIO:
		big_io(out, size);
		break;
	case BIGQ:
		big_queue(out, size);
		break;
	case SHORTW:
	case SHORTR:
		short_stag(mode, out, size);
		break;
	case DROPMID:
		drop_mid_login(addr, port);
		break;
	case ADDCONN:
		add_conn(addr, port, out, size);
		break;
	case BADTTT:
		bad_ttt();
		break;
	case NOREPOST:
		no_repost(pings, hold);
		break;
	case DUPITT:
	case DUPITTW:
		dup_itt(mode);
		break;
	case PIGUARD:
		pi_guard(out, size);
		break;
	case NOP:
		break;
	default:
		if (modes[mode].flags & F_HELLO)
			return hello(mode);
		offend(mode);
		break;
	}
	return "none";
}

/* the words a mode appends to the summary line */
static void print_extra(enum mode mode)
{
	char a[16], b[16], c[16];

	switch (mode) {
	case READIMM:
		printf(" read_data=%s", rbuf_written ? "written" : "untouched");
		break;
	case DUPITT:
	case DUPITTW:
		printf(" dup_answers=%d dup_good=%d", dup_answers, dup_good);
		break;
	case NOREPOST:
		printf(" pings_sent=%u held=%.0f", norepost_sent,
		       norepost_held);
		break;
	case ORDABORT:
		status_str(a, sizeof(a), ord_first);
		status_str(b, sizeof(b), ord_abort);
		status_str(c, sizeof(c), ord_second);
		printf(" first=%s abort=%s second=%s", a, b, c);
		break;
	default:
		break;
	}
}

int main(int argc, char **argv)
{
	const char *hello_reply, *addr, *port;
	char big[128] = "";
	char reject[16] = "none", status[16] = "none", text[32] = "none";
	enum mode mode = NOP;
	int opt, nop_in = 0, hold = 30;
	unsigned long pings = 200;
	unsigned int i, flags;

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
			if (big_wait_sec < 1)
				big_wait_sec = BIG_WAIT;
			hold = big_wait_sec;
			continue;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			continue;
		case 'N':
			count = strtoul(optarg, NULL, 0);
			pings = count;
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
		for (i = 0; i < ARRAY_SIZE(modes); i++)
			if (!strcmp(optarg, modes[i].name))
				break;
		if (i == ARRAY_SIZE(modes)) {
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
	addr = argv[optind];
	port = argv[optind + 1];
	flags = modes[mode].flags;
	if ((flags & F_TARGET) && !target_name) {
		fprintf(stderr, "iser_ffp: -m %s needs -n TARGET\n",
			modes[mode].name);
		return 1;
	}
	if (flags & F_PLAIN_MR)
		nr_rx = ITOOL_MAX_RX;
	if (flags & F_STANDALONE)
		return run_standalone(mode, addr, port, hold);
	if (connect_target(addr, port)) {
		fprintf(stderr, "iser_ffp: cannot connect to %s:%s (%s)\n",
			addr, port, strerror(errno));
		return 1;
	}
	if (login()) {
		printf("login=failed hello_reply=none reject=none nop_in=no closed=%s%s\n",
		       itool_yes_no(conn.closed, "yes"), " status=none text=none");
		return 0;
	}
	hello_reply = run_ffp(mode, addr, port, big, sizeof(big), pings, hold);
	if (!(flags & F_NO_PING))
		nop_in = ping(0x100) == 0;
	itool_cm_wait(&conn, RDMA_CM_EVENT_DISCONNECTED,
		      flags & F_CLOSES ? 5 : 1);
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
	       conn.closed ? "yes" : "no", status, text,
	       target_name ? (initial_r2t_no ? " initial_r2t=no" :
			      " initial_r2t=yes") : "");
	printf("%s", big);
	print_extra(mode);
	if ((flags & F_RELOGIN) && !(mode == DROPMID && no_relogin)) {
		/* the old connection must go away in full: log in again */
		ffp_hangup();
		printf(" relogin=%s",
		       connect_target(addr, port) || login() ? "failed" : "ok");
	}
	printf("\n");
	fflush(stdout);
	return 0;
}
