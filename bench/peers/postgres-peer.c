/* The peer a user would build instead of offertrack: an app server that commits each record to PostgreSQL as it
 * arrives (one INSERT a transaction, synchronous_commit on, a unique index on id), CLIENTS connections at once.
 * Prints records per second over all clients.
 *   postgres-peer RECORDS.ndjson CONNINFO CLIENTS                                                          */
#include <libpq-fe.h>
#include <pthread.h>
#include <time.h>

#include "ndjson-lines.h"

static char **lines;
static size_t count;
static const char *conninfo;
static int clients;
static volatile int failed;

/* The value of `key` copied into `out` (empty when absent or too long). */
static void copy_member(const char *line, const char *key, char *out, size_t capacity) {
    const char *start;
    int length;
    if (!string_member(line, key, &start, &length) || (size_t)length >= capacity) length = 0;
    else memcpy(out, start, length);
    out[length] = 0;
}

static void *client(void *argument) {
    long number = (long)argument;
    PGconn *connection = PQconnectdb(conninfo);
    if (PQstatus(connection) != CONNECTION_OK) { fprintf(stderr, "%s", PQerrorMessage(connection)); failed = 1; return 0; }
    PGresult *prepared = PQprepare(connection, "insert",
        "INSERT INTO records (id, type, ts, user_id, line) VALUES ($1, $2, $3, $4, $5)", 5, 0);
    PQclear(prepared);
    char id[160], type[64], ts[64], user[160];
    for (size_t i = number; i < count; i += clients) {
        copy_member(lines[i], "\"id\":\"", id, sizeof id);
        copy_member(lines[i], "\"type\":\"", type, sizeof type);
        copy_member(lines[i], "\"ts\":\"", ts, sizeof ts);
        copy_member(lines[i], "\"user\":\"", user, sizeof user);
        const char *values[5] = {id, type, ts, user, lines[i]};
        PGresult *result = PQexecPrepared(connection, "insert", 5, values, 0, 0, 0);
        if (PQresultStatus(result) != PGRES_COMMAND_OK) { fprintf(stderr, "%s", PQerrorMessage(connection)); failed = 1; }
        PQclear(result);
    }
    PQfinish(connection);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: postgres-peer RECORDS.ndjson CONNINFO CLIENTS\n"); return 64; }
    conninfo = argv[2];
    clients = atoi(argv[3]);
    lines = read_lines(argv[1], &count);
    if (!lines) { perror(argv[1]); return 66; }
    PGconn *setup = PQconnectdb(conninfo);
    if (PQstatus(setup) != CONNECTION_OK) { fprintf(stderr, "%s", PQerrorMessage(setup)); return 69; }
    PQclear(PQexec(setup, "SET client_min_messages TO warning; DROP TABLE IF EXISTS records; CREATE TABLE records (seq BIGSERIAL PRIMARY KEY,"
                          " id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, ts TEXT NOT NULL, user_id TEXT NOT NULL,"
                          " line TEXT NOT NULL)"));
    PQfinish(setup);
    pthread_t threads[256];
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long i = 0; i < clients && i < 256; i++) pthread_create(&threads[i], 0, client, (void *)i);
    for (long i = 0; i < clients && i < 256; i++) pthread_join(threads[i], 0);
    clock_gettime(CLOCK_MONOTONIC, &end);
    if (failed) return 70;
    printf("%.0f\n", count / ((end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9));
    return 0;
}
