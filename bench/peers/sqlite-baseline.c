/* The journal's physical limit as a C programmer would write it: NDJSON records from a file, the fields a
 * journal indexes picked out of each line, inserted into SQLite (WAL, synchronous=FULL, a unique index on id),
 * ROWS_PER_TRANSACTION rows a transaction. Prints the rows per second of the inserts (the file is read first).
 * INDEX says which per-user index the rows also keep:
 *   id       none: only the unique index on id (the bare insert)
 *   text     records(user, ts, id), on the user's text (schema 5's per-user index)
 *   integer  users(user -> k) written once per user, and by_user(k, ts, seq) WITHOUT ROWID
 *   deferred the integer index, but kept apart from the commits: transactions insert only the rows, and after
 *            every DEFERRED_ROWS journaled rows one more transaction reads them back (seq > the last indexed) and
 *            writes their users and by_user entries; the rate counts until every row is indexed. The limit of
 *            any design that keeps a per-user index in the journal's file but off the commit path (an LSM-like
 *            indexer), with no join at all.
 * With PACED_RATE, records instead become due at that many a second and each transaction commits every row due
 * when it begins (a group commit with no time lost to sockets or parsing: the latency floor of the schema on
 * this disk); prints the p50, p99, p999 and max of due → committed, in milliseconds (ROWS_PER_TRANSACTION is then
 * ignored). CHECKPOINTS `none` turns SQLite's autocheckpoint off (the WAL grows without bound): the floor of the
 * commits alone, with no checkpoint on or beside them.
 *   sqlite-baseline RECORDS.ndjson DATABASE [ROWS_PER_TRANSACTION [INDEX [PACED_RATE [CHECKPOINTS]]]]    */
#include <sqlite3.h>
#include <time.h>

#include "ndjson-lines.h"

/* Rows journaled between two runs of the deferred indexer. */
#define DEFERRED_ROWS 16384

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* The statements of one schema variant. */
struct statements {
    sqlite3 *db;
    sqlite3_stmt *insert, *find_user, *add_user, *add_by_user;
};

/* Inserts one line's row (and with `add_by_user`, its user's key and per-user entry); 0, or an exit code. */
static int insert_line(struct statements *s, const char *line) {
    sqlite3_stmt *insert = s->insert, *find_user = s->find_user, *add_user = s->add_user;
    sqlite3_stmt *add_by_user = s->add_by_user;
    sqlite3 *db = s->db;
    int integer = add_by_user != 0;
    const char *values[4];
    int lengths[4];
    const char *keys[4] = {"\"id\":\"", "\"type\":\"", "\"ts\":\"", "\"user\":\""};
    for (int k = 0; k < 4; k++) {
        if (!string_member(line, keys[k], &values[k], &lengths[k])) { values[k] = ""; lengths[k] = 0; }
        sqlite3_bind_text(insert, k + 1, values[k], lengths[k], SQLITE_STATIC);
    }
    sqlite3_bind_text(insert, 5, line, -1, SQLITE_STATIC);
    if (sqlite3_step(insert) != SQLITE_DONE) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 70; }
    sqlite3_reset(insert);
    if (integer) {
        sqlite3_int64 seq = sqlite3_last_insert_rowid(db), k;
        sqlite3_bind_text(find_user, 1, values[3], lengths[3], SQLITE_STATIC);
        if (sqlite3_step(find_user) == SQLITE_ROW) {
            k = sqlite3_column_int64(find_user, 0);
        } else {
            sqlite3_bind_text(add_user, 1, values[3], lengths[3], SQLITE_STATIC);
            if (sqlite3_step(add_user) != SQLITE_DONE) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 70; }
            sqlite3_reset(add_user);
            k = sqlite3_last_insert_rowid(db);
        }
        sqlite3_reset(find_user);
        sqlite3_bind_int64(add_by_user, 1, k);
        sqlite3_bind_text(add_by_user, 2, values[2], lengths[2], SQLITE_STATIC);
        sqlite3_bind_int64(add_by_user, 3, seq);
        if (sqlite3_step(add_by_user) != SQLITE_DONE) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 70; }
        sqlite3_reset(add_by_user);
    }
    return 0;
}

/* The deferred indexer: lists every row after `*indexed` under its user's key in one transaction, and moves
 * `*indexed` to the last; 0, or an exit code. */
static int index_tail(struct statements *s, sqlite3_stmt *tail, sqlite3_int64 *indexed) {
    sqlite3 *db = s->db;
    sqlite3_exec(db, "BEGIN", 0, 0, 0);
    sqlite3_bind_int64(tail, 1, *indexed);
    while (sqlite3_step(tail) == SQLITE_ROW) {
        sqlite3_int64 seq = sqlite3_column_int64(tail, 0), k;
        const char *user = (const char *)sqlite3_column_text(tail, 2);
        int length = sqlite3_column_bytes(tail, 2);
        sqlite3_bind_text(s->find_user, 1, user, length, SQLITE_TRANSIENT);
        if (sqlite3_step(s->find_user) == SQLITE_ROW) {
            k = sqlite3_column_int64(s->find_user, 0);
        } else {
            sqlite3_bind_text(s->add_user, 1, user, length, SQLITE_TRANSIENT);
            if (sqlite3_step(s->add_user) != SQLITE_DONE) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 70; }
            sqlite3_reset(s->add_user);
            k = sqlite3_last_insert_rowid(db);
        }
        sqlite3_reset(s->find_user);
        sqlite3_bind_int64(s->add_by_user, 1, k);
        sqlite3_bind_text(s->add_by_user, 2, (const char *)sqlite3_column_text(tail, 1), -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(s->add_by_user, 3, seq);
        if (sqlite3_step(s->add_by_user) != SQLITE_DONE) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 70; }
        sqlite3_reset(s->add_by_user);
        *indexed = seq;
    }
    sqlite3_reset(tail);
    if (sqlite3_exec(db, "COMMIT", 0, 0, 0) != SQLITE_OK) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 74; }
    return 0;
}

/* Latency percentile (nearest rank) of `sorted` seconds, in milliseconds. */
static double percentile(const double *sorted, size_t n, double fraction) {
    size_t rank = (size_t)(fraction * n + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return sorted[rank - 1] * 1000;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: sqlite-baseline RECORDS.ndjson DATABASE [ROWS_PER_TRANSACTION [id|text|integer|deferred [PACED_RATE [none]]]]\n");
        return 64;
    }
    int batch = argc > 3 ? atoi(argv[3]) : 1000;
    const char *index = argc > 4 ? argv[4] : "id";
    int text = strcmp(index, "text") == 0, deferred = strcmp(index, "deferred") == 0;
    int integer = strcmp(index, "integer") == 0 || deferred;
    if (!text && !integer && strcmp(index, "id") != 0) { fprintf(stderr, "unknown index %s\n", index); return 64; }
    if (deferred && argc > 5) { fprintf(stderr, "deferred has no paced mode\n"); return 64; }
    size_t count;
    char **lines = read_lines(argv[1], &count);
    if (!lines) { perror(argv[1]); return 66; }
    sqlite3 *db;
    if (sqlite3_open(argv[2], &db) != SQLITE_OK) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 73; }
    if (argc > 6 && strcmp(argv[6], "none") != 0) { fprintf(stderr, "CHECKPOINTS is none or absent\n"); return 64; }
    if (argc > 6) sqlite3_exec(db, "PRAGMA wal_autocheckpoint=0;", 0, 0, 0);
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                     "CREATE TABLE records (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL,"
                     " ts TEXT NOT NULL, user TEXT NOT NULL, line TEXT NOT NULL);", 0, 0, 0);
    if (text) sqlite3_exec(db, "CREATE INDEX records_by_user ON records (user, ts, id);", 0, 0, 0);
    if (integer)
        sqlite3_exec(db, "CREATE TABLE users (k INTEGER PRIMARY KEY, user TEXT NOT NULL UNIQUE);"
                         "CREATE TABLE by_user (k INTEGER NOT NULL, ts TEXT NOT NULL, seq INTEGER NOT NULL,"
                         " PRIMARY KEY (k, ts, seq)) WITHOUT ROWID;", 0, 0, 0);
    sqlite3_stmt *insert, *find_user = 0, *add_user = 0, *add_by_user = 0;
    sqlite3_prepare_v2(db, "INSERT INTO records (id, type, ts, user, line) VALUES (?1, ?2, ?3, ?4, ?5)", -1,
                       &insert, 0);
    if (integer) {
        sqlite3_prepare_v2(db, "SELECT k FROM users WHERE user = ?1", -1, &find_user, 0);
        sqlite3_prepare_v2(db, "INSERT INTO users (user) VALUES (?1)", -1, &add_user, 0);
        sqlite3_prepare_v2(db, "INSERT INTO by_user (k, ts, seq) VALUES (?1, ?2, ?3)", -1, &add_by_user, 0);
    }
    struct statements statements = {db, insert, find_user, add_user, add_by_user};
    /* Deferred: the commits insert only the rows; the indexer reads them back. */
    struct statements rows_only = {db, insert, 0, 0, 0};
    sqlite3_stmt *tail = 0;
    if (deferred) sqlite3_prepare_v2(db, "SELECT seq, ts, user FROM records WHERE seq > ?1 ORDER BY seq", -1, &tail, 0);
    sqlite3_int64 indexed = 0;
    size_t unindexed = 0;
    if (argc > 5) {
        double rate = atof(argv[5]);
        if (rate < 1 || count == 0) { fprintf(stderr, "PACED_RATE must be at least 1, RECORDS not empty\n"); return 64; }
        double *latency = malloc(count * sizeof(double));
        if (!latency) return 71;
        double started = now();
        for (size_t i = 0; i < count;) {
            double at = now() - started;
            size_t due = (size_t)(at * rate) + 1;
            if (due > count) due = count;
            if (due <= i) {
                double wait = i / rate - at; /* under a second: rate is at least 1 */
                struct timespec pause = {0, (long)(wait * 1e9)};
                nanosleep(&pause, 0);
                continue;
            }
            sqlite3_exec(db, "BEGIN", 0, 0, 0);
            for (size_t j = i; j < due; j++) {
                int failed = insert_line(&statements, lines[j]);
                if (failed) return failed;
            }
            if (sqlite3_exec(db, "COMMIT", 0, 0, 0) != SQLITE_OK) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 74; }
            double committed = now() - started;
            for (size_t j = i; j < due; j++) latency[j] = committed - j / rate;
            i = due;
        }
        qsort(latency, count, sizeof(double), by_value);
        printf("%.2f %.2f %.2f %.2f\n", percentile(latency, count, 0.5), percentile(latency, count, 0.99),
               percentile(latency, count, 0.999), latency[count - 1] * 1000);
        return 0;
    }
    double started = now();
    for (size_t i = 0; i < count; i++) {
        if (i % batch == 0) sqlite3_exec(db, "BEGIN", 0, 0, 0);
        int failed = insert_line(deferred ? &rows_only : &statements, lines[i]);
        if (failed) return failed;
        unindexed++;
        if (i % batch == (size_t)batch - 1 || i == count - 1) {
            if (sqlite3_exec(db, "COMMIT", 0, 0, 0) != SQLITE_OK) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 74; }
            if (deferred && (unindexed >= DEFERRED_ROWS || i == count - 1)) {
                if ((failed = index_tail(&statements, tail, &indexed))) return failed;
                unindexed = 0;
            }
        }
    }
    double seconds = now() - started;
    if (deferred) {
        /* Every row listed once: the indexer missed or repeated none. */
        sqlite3_stmt *check;
        sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM by_user) = (SELECT count(*) FROM records)", -1, &check, 0);
        if (sqlite3_step(check) != SQLITE_ROW || sqlite3_column_int(check, 0) != 1) {
            fprintf(stderr, "the deferred index does not list every row once\n");
            return 70;
        }
        sqlite3_finalize(check);
        sqlite3_finalize(tail);
    }
    sqlite3_finalize(insert);
    sqlite3_finalize(find_user);
    sqlite3_finalize(add_user);
    sqlite3_finalize(add_by_user);
    sqlite3_close(db);
    printf("%.0f\n", count / seconds);
    return 0;
}
