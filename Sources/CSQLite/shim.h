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

/// The main database file of `db` as SQLite opened it (`SQLITE_FCNTL_FILE_POINTER`), or NULL. Reading and writing
/// through it rather than through a descriptor of our own matters: closing another descriptor of the file would
/// release the POSIX locks SQLite holds on it for the whole process.
static inline sqlite3_file *offertrack_sqlite_main_file(sqlite3 *db) {
    sqlite3_file *file = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK) return 0;
    return (file && file->pMethods) ? file : 0;
}

/// `count` bytes at `offset` of `file` (`SQLITE_IOERR_SHORT_READ` past its end, the rest zeroed).
static inline int offertrack_sqlite_file_read(sqlite3_file *file, void *bytes, int count, sqlite3_int64 offset) {
    return file->pMethods->xRead(file, bytes, count, offset);
}

static inline int offertrack_sqlite_file_write(
    sqlite3_file *file, const void *bytes, int count, sqlite3_int64 offset) {
    return file->pMethods->xWrite(file, bytes, count, offset);
}

static inline int offertrack_sqlite_file_sync(sqlite3_file *file) {
    return file->pMethods->xSync(file, SQLITE_SYNC_NORMAL);
}

static inline int offertrack_sqlite_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    return file->pMethods->xFileSize(file, size);
}
#endif
