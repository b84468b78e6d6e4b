/* The journal's physical limit as a C programmer would write it: NDJSON records from a file, the fields a
 * journal indexes picked out of each line, inserted into SQLite (WAL, synchronous=FULL, a unique index on id),
 * ROWS_PER_TRANSACTION rows a transaction. Prints the rows per second of the inserts (the file is read first).
 *   sqlite-baseline RECORDS.ndjson DATABASE [ROWS_PER_TRANSACTION]                                      */
#include <sqlite3.h>
#include <time.h>

#include "ndjson-lines.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: sqlite-baseline RECORDS.ndjson DATABASE [ROWS_PER_TRANSACTION]\n");
        return 64;
    }
    int batch = argc > 3 ? atoi(argv[3]) : 1000;
    size_t count;
    char **lines = read_lines(argv[1], &count);
    if (!lines) { perror(argv[1]); return 66; }
    sqlite3 *db;
    if (sqlite3_open(argv[2], &db) != SQLITE_OK) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 73; }
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                     "CREATE TABLE records (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL,"
                     " ts TEXT NOT NULL, user TEXT NOT NULL, line TEXT NOT NULL);", 0, 0, 0);
    sqlite3_stmt *insert;
    sqlite3_prepare_v2(db, "INSERT INTO records (id, type, ts, user, line) VALUES (?1, ?2, ?3, ?4, ?5)", -1,
                       &insert, 0);
    double started = now();
    for (size_t i = 0; i < count; i++) {
        if (i % batch == 0) sqlite3_exec(db, "BEGIN", 0, 0, 0);
        const char *values[4];
        int lengths[4];
        const char *keys[4] = {"\"id\":\"", "\"type\":\"", "\"ts\":\"", "\"user\":\""};
        for (int k = 0; k < 4; k++) {
            if (!string_member(lines[i], keys[k], &values[k], &lengths[k])) { values[k] = ""; lengths[k] = 0; }
            sqlite3_bind_text(insert, k + 1, values[k], lengths[k], SQLITE_STATIC);
        }
        sqlite3_bind_text(insert, 5, lines[i], -1, SQLITE_STATIC);
        if (sqlite3_step(insert) != SQLITE_DONE) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 70; }
        sqlite3_reset(insert);
        if (i % batch == (size_t)batch - 1 || i == count - 1) {
            if (sqlite3_exec(db, "COMMIT", 0, 0, 0) != SQLITE_OK) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 74; }
        }
    }
    double seconds = now() - started;
    sqlite3_finalize(insert);
    sqlite3_close(db);
    printf("%.0f\n", count / seconds);
    return 0;
}
