/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db.c: the cart database, a real SQLite file in the data dir, with
 * Porthole's helper attached to the connection.  The planted bug:
 * db_cart_total_on_main_thread() runs a query from the main loop.
 */
#include "sample.h"
#include "porthole.h"

#include <sqlite3.h>
#include <stdio.h>

static sqlite3 *db;

int db_open(const char *dir)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/cart.db", dir);
	if (sqlite3_open_v2(path, &db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				    SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK)
		return -1;
	/* Another process of the app may hold the file (a sync, a backup):
	 * wait for it rather than fail.  On the main thread, that wait is a
	 * stall. */
	sqlite3_busy_timeout(db, 30000);
	porthole_sqlite_attach(db);
	/* Plain sqlite3_exec: the helper sees this too. */
	sqlite3_exec(db,
		     "CREATE TABLE IF NOT EXISTS cart_items("
		     " id INTEGER PRIMARY KEY, cart_id INTEGER, sku TEXT,"
		     " qty INTEGER, price_cents INTEGER);"
		     "CREATE TABLE IF NOT EXISTS events("
		     " id INTEGER PRIMARY KEY, kind TEXT, payload BLOB,"
		     " created_at INTEGER);"
		     "DELETE FROM cart_items;"
		     "INSERT INTO cart_items VALUES"
		     " (1, 99001, 'mug-ceramic-01', 2, 1800),"
		     " (2, 99001, 'poster-a2', 1, 2400),"
		     " (3, 99001, 'canvas-tote', 1, 1500);",
		     NULL, NULL, NULL);
	return 0;
}

struct sqlite3 *db_handle(void)
{
	return db;
}

/* The planted main-thread query: the frame waits for the disk. */
int db_cart_total_on_main_thread(int cart_id)
{
	sqlite3_stmt *st;
	int total = 0;

	if (sqlite3_prepare_v2(db,
			       "SELECT sum(qty * price_cents)\n"
			       "  FROM cart_items\n WHERE cart_id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int(st, 1, cart_id);
	if (sqlite3_step(st) == SQLITE_ROW)
		total = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return total;
}

void db_record_event(const char *kind)
{
	sqlite3_stmt *st;
	static const unsigned char payload[48] = { 1, 2, 3 };

	if (sqlite3_prepare_v2(db,
			       "INSERT INTO events(kind, payload, created_at) "
			       "VALUES (?, ?, strftime('%s','now'))",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 2, payload, sizeof(payload), SQLITE_STATIC);
	sqlite3_step(st);
	sqlite3_finalize(st);
}

/* A write that fails: the row exists (UNIQUE constraint on id). */
void db_insert_duplicate(void)
{
	sqlite3_exec(db,
		     "INSERT INTO cart_items VALUES (1, 99001, 'dup', 1, 1)",
		     NULL, NULL, NULL);
}

void db_close(void)
{
	sqlite3_close_v2(db);
	db = NULL;
}
