/*
 * What the C runners share (the runners of bench/runners and bench/roundtrip): the
 * counts they compare, dying with a message, reading a corpus into memory,
 * the clocks, arguments, medians and the round-trip result line. Define
 * RUNNER_NAME (the prefix of error messages) before including it. Every
 * function is static inline: a runner that does not use one is not warned.
 */
#ifndef MCP_BENCH_RUNNER_UTIL_H
#define MCP_BENCH_RUNNER_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct counts {
    uint64_t messages;
    uint64_t errors;
    uint64_t checksum;
};

static inline void die(const char *what, const char *detail)
{
    fprintf(stderr, "%s: %s%s%s\n", RUNNER_NAME, what, detail ? ": " : "", detail ? detail : "");
    exit(2);
}

static inline uint8_t *read_file(const char *path, size_t *len)
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

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* This process's CPU time (user + system, all threads), seconds. */
static inline double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A positive decimal argument, or death. */
static inline size_t parse_size(const char *s, const char *what)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v == 0) die("not a positive number", what);
    return (size_t)v;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n] (sorts v). */
static inline double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A round-trip result line (bench/roundtrip/run.sh reads it): seconds = the
 * best of the runs v[0..runs] (sorted by median()), median = their median. */
static inline void print_roundtrip(const char *client, const char *mode, uint64_t requests,
                                   uint64_t inflight, double *v, size_t runs, const char *extra)
{
    double med = median(v, runs);
    printf("ROUNDTRIP client=%s mode=%s requests=%llu inflight=%llu seconds=%.9f median=%.9f runs=%zu%s\n",
           client, mode, (unsigned long long)requests, (unsigned long long)inflight, v[0], med, runs,
           extra);
    fflush(stdout);
}

/* The arguments of the round-trip clients: SERVER N ROUNDS SPAWNS [INFLIGHT]. */
struct roundtrip_args {
    const char *server;
    uint64_t n, inflight;
    size_t rounds, spawns;
};

static inline struct roundtrip_args parse_roundtrip_args(int argc, char **argv)
{
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "usage: %s SERVER N ROUNDS SPAWNS [INFLIGHT]\n", argv[0]);
        exit(2);
    }
    struct roundtrip_args a = {argv[1], parse_size(argv[2], "N"), 100, parse_size(argv[3], "ROUNDS"),
                               parse_size(argv[4], "SPAWNS")};
    if (argc > 5) a.inflight = parse_size(argv[5], "INFLIGHT");
    return a;
}

#endif
