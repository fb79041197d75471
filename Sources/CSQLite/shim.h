#ifndef GATEHOUSE_CSQLITE_SHIM_H
#define GATEHOUSE_CSQLITE_SHIM_H

#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast macro that Swift does not import; binding with it makes
 * SQLite copy the bytes, so Swift buffers need to live only for the call. */
static inline int gh_sqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

static inline int gh_sqlite_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}

#endif
