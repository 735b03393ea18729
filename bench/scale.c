// SPDX-License-Identifier: GPL-2.0-or-later
/* scale.c - a small driver of Debian's static SQLite: N inserts and a sum, for bench/scale. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	sqlite3 *db;
	char *err = 0;
	sqlite3_open(":memory:", &db);
	sqlite3_exec(db, "create table t(a integer, b text)", 0, 0, &err);
	sqlite3_stmt *st;
	sqlite3_prepare_v2(db, "insert into t values(?, ?)", -1, &st, 0);
	for (int i = 0; i < n; i++) {
		sqlite3_bind_int(st, 1, i);
		sqlite3_bind_text(st, 2, "x", -1, SQLITE_STATIC);
		sqlite3_step(st);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	sqlite3_prepare_v2(db, "select sum(a) from t", -1, &st, 0);
	sqlite3_step(st);
	printf("sum %lld\n", sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return 0;
}
