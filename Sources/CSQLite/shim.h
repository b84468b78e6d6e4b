#ifndef OFFERTRACK_CSQLITE_SHIM_H
#define OFFERTRACK_CSQLITE_SHIM_H
#include <sqlite3.h>
#include <stdint.h>
#include <time.h>

/// `SQLITE_TRANSIENT` is a cast macro Swift cannot import; this makes SQLite copy bound buffers.
static inline sqlite3_destructor_type offertrack_sqlite_transient(void) { return SQLITE_TRANSIENT; }

/// Turns off SQLite's memory statistics (`sqlite3_config` is variadic, which Swift cannot call). With them on,
/// every allocation and free SQLite makes takes a process-wide mutex to keep its totals; nothing here reads them
/// (`sqlite3_memory_used`, `sqlite3_status`, heap limits). Only takes effect before SQLite initializes (before
/// the first connection opens): afterwards it returns `SQLITE_MISUSE` and changes nothing.
static inline int offertrack_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

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
