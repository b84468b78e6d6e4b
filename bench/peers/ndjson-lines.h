/* Shared by the C baselines: a file's lines in memory, and the string value of one member of a record line. */
#ifndef OFFERTRACK_NDJSON_LINES_H
#define OFFERTRACK_NDJSON_LINES_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every line of `path` without its '\n' (NULL when unreadable); `count` is set to how many. */
static char **read_lines(const char *path, size_t *count) {
    FILE *input = fopen(path, "r");
    if (!input) return NULL;
    size_t capacity = 1 << 20;
    char **lines = malloc(capacity * sizeof *lines);
    char *line = NULL;
    size_t size = 0;
    ssize_t length;
    *count = 0;
    while ((length = getline(&line, &size, input)) > 0) {
        if (line[length - 1] == '\n') line[--length] = 0;
        if (*count == capacity) lines = realloc(lines, (capacity *= 2) * sizeof *lines);
        lines[(*count)++] = strdup(line);
    }
    free(line);
    fclose(input);
    return lines;
}

/* The value of "key":"..." in `line` (the simulator's ids, users, types and times have no escapes): its start
 * and length, or 0 when absent. `key` includes the quotes, colon and opening quote: "\"id\":\"". */
static int string_member(const char *line, const char *key, const char **start, int *length) {
    const char *found = strstr(line, key);
    if (!found) return 0;
    found += strlen(key);
    const char *end = strchr(found, '"');
    if (!end) return 0;
    *start = found;
    *length = (int)(end - found);
    return 1;
}
#endif
