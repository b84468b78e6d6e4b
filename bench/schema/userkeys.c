/* Per-user index designs for the journal, measured in plain SQLite (issue 22): the same rows as the bench's
 * returning-user section (users x 6 records, in time order) or new users (1 record each), batches of 1000 rows
 * per durable transaction (WAL, synchronous=FULL), the records table as the journal's (id TEXT UNIQUE).
 *   cc -O2 -o userkeys userkeys.c -lsqlite3 && ./userkeys DIR
 * Designs: 0 id index only; 1 records(user, ts, id) on text (schema 7);
 * 2 users(k INTEGER PRIMARY KEY, user TEXT UNIQUE) + by_user(k, ts, seq) WITHOUT ROWID (schema 8);
 * 3 users(user TEXT PRIMARY KEY, k) WITHOUT ROWID + by_user(k, ts, seq) WITHOUT ROWID. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void ok(int rc, sqlite3 *db) { if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); exit(1); } }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static double run(const char *dir, int design, int users, int per) {
    char path[512]; snprintf(path, sizeof path, "%s/uk-%d.db", dir, design);
    char extra[512]; snprintf(extra, sizeof extra, "%s-wal", path); remove(path); remove(extra);
    sqlite3 *db; ok(sqlite3_open(path, &db), db);
    ok(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-32768;"
        "CREATE TABLE records (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, type INTEGER NOT NULL, ts INTEGER NOT NULL,"
        " user TEXT NOT NULL, received_at INTEGER NOT NULL, offer_id TEXT, affiliate_token TEXT, line TEXT NOT NULL);", 0, 0, 0), db);
    if (design == 1) ok(sqlite3_exec(db, "CREATE INDEX records_by_user ON records(user, ts, id);", 0, 0, 0), db);
    if (design == 2) ok(sqlite3_exec(db, "CREATE TABLE users (k INTEGER PRIMARY KEY, user TEXT NOT NULL UNIQUE);", 0, 0, 0), db);
    if (design == 3) ok(sqlite3_exec(db, "CREATE TABLE users (user TEXT PRIMARY KEY, k INTEGER NOT NULL) WITHOUT ROWID;", 0, 0, 0), db);
    if (design >= 2) ok(sqlite3_exec(db, "CREATE TABLE by_user (k INTEGER NOT NULL, ts INTEGER NOT NULL, seq INTEGER NOT NULL,"
        " PRIMARY KEY (k, ts, seq)) WITHOUT ROWID;", 0, 0, 0), db);
    sqlite3_stmt *ins, *find = 0, *add = 0, *idx = 0;
    ok(sqlite3_prepare_v2(db, "INSERT INTO records (id, type, ts, user, received_at, offer_id, affiliate_token, line)"
        " VALUES (?1, 1, ?2, ?3, ?2, NULL, 'aff', ?4) ON CONFLICT (id) DO NOTHING", -1, &ins, 0), db);
    if (design >= 2) {
        ok(sqlite3_prepare_v2(db, design == 2 ? "SELECT k FROM users WHERE user = ?1" : "SELECT k FROM users WHERE user = ?1", -1, &find, 0), db);
        ok(sqlite3_prepare_v2(db, design == 2 ? "INSERT INTO users (user) VALUES (?1)" : "INSERT INTO users (user, k) VALUES (?1, ?2)", -1, &add, 0), db);
        ok(sqlite3_prepare_v2(db, "INSERT INTO by_user (k, ts, seq) VALUES (?1, ?2, ?3)", -1, &idx, 0), db);
    }
    long total = (long)users * per; long nextKey = 1;
    char line[300]; memset(line, 'x', 250); line[250] = 0;
    srand(7);
    double start = now();
    for (long i = 0; i < total; i += 1000) {
        ok(sqlite3_exec(db, "BEGIN IMMEDIATE", 0, 0, 0), db);
        for (long j = i; j < i + 1000 && j < total; j++) {
            /* returning users: each record is a random user's next visit, in time order */
            long u = per == 1 ? j : rand() % users;
            char id[40], user[40];
            snprintf(id, sizeof id, "01M6%016ld", j); snprintf(user, sizeof user, "u-%016lx", (unsigned long)(u * 2654435761UL));
            sqlite3_bind_text(ins, 1, id, -1, SQLITE_TRANSIENT); sqlite3_bind_int64(ins, 2, 1790000000000 + j * 100);
            sqlite3_bind_text(ins, 3, user, -1, SQLITE_TRANSIENT); sqlite3_bind_text(ins, 4, line, -1, SQLITE_STATIC);
            ok(sqlite3_step(ins), db); sqlite3_reset(ins);
            sqlite3_int64 seq = sqlite3_last_insert_rowid(db);
            if (design >= 2) {
                sqlite3_int64 k;
                sqlite3_bind_text(find, 1, user, -1, SQLITE_TRANSIENT);
                if (sqlite3_step(find) == SQLITE_ROW) k = sqlite3_column_int64(find, 0);
                else {
                    sqlite3_bind_text(add, 1, user, -1, SQLITE_TRANSIENT);
                    if (design == 3) sqlite3_bind_int64(add, 2, nextKey);
                    ok(sqlite3_step(add), db); sqlite3_reset(add);
                    k = design == 2 ? sqlite3_last_insert_rowid(db) : nextKey;
                    nextKey++;
                }
                sqlite3_reset(find);
                sqlite3_bind_int64(idx, 1, k); sqlite3_bind_int64(idx, 2, 1790000000000 + j * 100); sqlite3_bind_int64(idx, 3, seq);
                ok(sqlite3_step(idx), db); sqlite3_reset(idx);
            }
        }
        ok(sqlite3_exec(db, "COMMIT", 0, 0, 0), db);
    }
    double rate = total / (now() - start);
    sqlite3_finalize(ins); sqlite3_finalize(find); sqlite3_finalize(add); sqlite3_finalize(idx); sqlite3_close(db);
    remove(path); remove(extra);
    return rate;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    const char *names[] = {"id index only", "per-user text index (schema 7)", "users(k rowid, user UNIQUE) + by_user", "users(user PK) WITHOUT ROWID + by_user"};
    for (int round = 0; round < 2; round++)
        for (int d = 0; d < 4; d++)
            printf("round %d  %-42s returning 50000x6: %8.0f rows/s   new 300000x1: %8.0f rows/s\n", round, names[d],
                run(dir, d, 50000, 6), run(dir, d, 300000, 1));
    return 0;
}
