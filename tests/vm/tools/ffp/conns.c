// SPDX-License-Identifier: GPL-2.0
/*
 * iser_ffp: second connections to a logged-in session. A login dropped
 * midway that reinstates the session (dropmid), and a connection added
 * to it and then a reinstatement (addconn).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ffp.h"

/*
 * -m dropmid: a second connection starts a login of the same initiator
 * and ISID, which LIO answers by reinstating the first connection's
 * session, and disconnects at once; the first is gone after that.
 */
void drop_mid_login(const char *addr, const char *port)
{
	struct itool first = conn;

	memset(&conn, 0, sizeof(conn));
	if (!connect_target(addr, port)) {
		login_send_only = 1;
		login();
		login_send_only = 0;
		rdma_disconnect(conn.id);
		itool_cm_wait(&conn, RDMA_CM_EVENT_DISCONNECTED, 2);
	}
	ffp_hangup();		/* the second connection */
	conn = first;
	/* let LIO finish the reinstatement and the dropped login */
	sleep(3);
}

/*
 * -m addconn: a second connection tries to add itself to the session
 * (refused: MaxConnections is 1), a third reinstates the session; back on
 * the first, whose ping must then find it closed.
 */
void add_conn(const char *addr, const char *port, char *out, size_t size)
{
	uint32_t sn = cmd_sn, stat_sn = exp_stat_sn;
	struct itool first = conn;
	int added = 0, reinstated = 0;

	memset(&conn, 0, sizeof(conn));
	if (!connect_target(addr, port)) {
		login_tsih = session_tsih;
		login_cid = 1;
		exp_stat_sn = 0;
		added = !login();
		login_tsih = 0;
		login_cid = 0;
	}
	ffp_hangup();		/* the second connection */
	/* the target's teardown of the refused login runs meanwhile */
	sleep(1);
	exp_stat_sn = 0;
	if (!connect_target(addr, port))
		reinstated = !login();
	/* the third stays up: its session is not the one under test */
	conn = first;
	cmd_sn = sn;
	exp_stat_sn = stat_sn;
	snprintf(out, size, " added=%s reinstated=%s",
		 added ? "accepted" : "refused", reinstated ? "ok" : "failed");
	/* let LIO close the first connection (the reinstatement waits) */
	sleep(2);
}
