#ifndef OFFERTRACK_CSQLITE_SHIM_H
#define OFFERTRACK_CSQLITE_SHIM_H
#include <sqlite3.h>

/// `SQLITE_TRANSIENT` is a cast macro Swift cannot import; this makes SQLite copy bound buffers.
static inline sqlite3_destructor_type offertrack_sqlite_transient(void) { return SQLITE_TRANSIENT; }
#endif
