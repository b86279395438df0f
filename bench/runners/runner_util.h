/*
 * What the C runners share: the counts they compare, dying with a message,
 * reading a corpus into memory, a monotonic clock. Define RUNNER_NAME
 * (the prefix of error messages) before including it.
 */
#ifndef MCP_BENCH_RUNNER_UTIL_H
#define MCP_BENCH_RUNNER_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct counts {
    uint64_t messages;
    uint64_t errors;
    uint64_t checksum;
};

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "%s: %s%s%s\n", RUNNER_NAME, what, detail ? ": " : "", detail ? detail : "");
    exit(2);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open", path);
    if (fseek(f, 0, SEEK_END) != 0) die("cannot seek", path);
    long size = ftell(f);
    if (size < 0) die("cannot tell", path);
    rewind(f);
    uint8_t *data = malloc(size ? (size_t)size : 1);
    if (!data) die("out of memory reading", path);
    if (fread(data, 1, (size_t)size, f) != (size_t)size) die("short read", path);
    fclose(f);
    *len = (size_t)size;
    return data;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
