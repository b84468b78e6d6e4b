#ifndef OFFERTRACK_CSQLITE_SHIM_H
#define OFFERTRACK_CSQLITE_SHIM_H
#include <sqlite3.h>
#include <stdint.h>
#include <time.h>

/// `SQLITE_TRANSIENT` is a cast macro Swift cannot import; this makes SQLite copy bound buffers.
static inline sqlite3_destructor_type offertrack_sqlite_transient(void) { return SQLITE_TRANSIENT; }

/// A busy handler that tries again every millisecond, up to `context` tries (about that many milliseconds),
/// instead of SQLite's default back-off of up to 100 ms between tries: a writer waiting behind another
/// connection's short transaction gets the lock about a millisecond after it ends.
static inline int offertrack_sqlite_busy_poll(void *context, int tries) {
    if (tries >= (int)(intptr_t)context) return 0;
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, 0);
    return 1;
}

/// Installs `offertrack_sqlite_busy_poll` for up to `milliseconds`.
static inline int offertrack_sqlite_poll_when_busy(sqlite3 *db, int milliseconds) {
    return sqlite3_busy_handler(db, offertrack_sqlite_busy_poll, (void *)(intptr_t)milliseconds);
}
#endif
