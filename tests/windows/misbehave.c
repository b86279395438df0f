/* A stdio server for the Windows tests of the connection, run under Wine.
 * Needs nothing but the Win32 API and the C runtime (built with mingw-w64
 * by scripts/windows.sh). Modes, the first argument:
 *
 *   echo          answers each request line with {"jsonrpc":"2.0","id":<id>,"result":{}}
 *                 (the id copied as it came), exits at the end of stdin
 *   args          writes one JSON line listing its arguments after the mode, then
 *                 behaves as echo
 *   never-read    never reads stdin; waits for ever
 *   ignore-close  reads stdin to its end, then waits for ever (must be terminated)
 *   stderr-flood  writes N (second argument) bytes of lines to stderr, then echo
 *   exit          exits at once with the code given as second argument
 *   grandchild    starts itself as `marker FILE` (FILE: second argument), which
 *                 inherits its stdout and stderr and keeps them open, then echo
 *   marker        appends a byte to FILE every 50 ms, for ever
 *   crash-after   answers N (second argument) requests as echo, then on the
 *                 next one writes "boom" to stderr and exits with 7; with a
 *                 third argument FILE it first starts itself as `marker FILE`
 *                 (in its job, holding none of its pipes)
 *
 * Every mode but `exit` and `args` also appends to FILE when the
 * environment variable MISBEHAVE_MARKER names one: a process left running
 * keeps the file growing, which the tests check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

static void marker_loop(const char *path) {
    for (;;) {
        FILE *f = fopen(path, "ab");
        if (f) {
            fputc('.', f);
            fclose(f);
        }
        Sleep(50);
    }
}

static DWORD WINAPI marker_thread(LPVOID path) {
    marker_loop((const char *)path);
    return 0;
}

static void start_marker_thread(void) {
    const char *path = getenv("MISBEHAVE_MARKER");
    if (path && *path) CreateThread(NULL, 0, marker_thread, (LPVOID)path, 0, NULL);
}

/* Copies the id token of a request line ("id": then a number or a string). */
static int find_id(const char *line, char *id, size_t cap) {
    const char *p = strstr(line, "\"id\":");
    if (!p) return 0;
    p += 5;
    while (*p == ' ') p++;
    size_t n = 0;
    if (*p == '"') {
        id[n++] = *p++;
        while (*p && *p != '"' && n + 2 < cap) {
            if (*p == '\\' && p[1]) id[n++] = *p++;
            id[n++] = *p++;
        }
        if (*p != '"') return 0;
        id[n++] = '"';
    } else {
        while (*p && (*p == '-' || (*p >= '0' && *p <= '9')) && n + 1 < cap) id[n++] = *p++;
    }
    id[n] = 0;
    return n > 0;
}

/* Answers requests as echo; on the request after the first `crash_after`
 * (negative: never), writes "boom" to stderr and exits with 7. */
static void echo_until(long crash_after) {
    static char line[1 << 20];
    char id[256];
    long answered = 0;
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"method\"") && find_id(line, id, sizeof id)) {
            if (crash_after >= 0 && answered == crash_after) {
                fputs("boom\n", stderr);
                fflush(stderr);
                exit(7);
            }
            printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n", id);
            fflush(stdout);
            answered++;
        }
    }
}

static void echo(void) { echo_until(-1); }

/* Starts this program as `marker FILE`, inheriting nothing. */
static int start_marker(const char *file) {
    char self[MAX_PATH];
    GetModuleFileNameA(NULL, self, MAX_PATH);
    char line[2 * MAX_PATH + 32];
    snprintf(line, sizeof line, "\"%s\" marker \"%s\"", self, file);
    STARTUPINFOA si;
    PROCESS_INFORMATION pi;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    if (!CreateProcessA(NULL, line, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) return 0;
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    return 1;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "echo";
    if (strcmp(mode, "marker") == 0) {
        if (argc < 3) return 2;
        marker_loop(argv[2]);
    }
    if (strcmp(mode, "exit") == 0) return argc > 2 ? atoi(argv[2]) : 0;
    start_marker_thread();
    if (strcmp(mode, "args") == 0) {
        /* The arguments as a JSON array of strings (\ and " escaped; the
         * tests pass printable ASCII). */
        printf("{\"jsonrpc\":\"2.0\",\"method\":\"args\",\"params\":[");
        for (int i = 2; i < argc; i++) {
            printf(i > 2 ? ",\"" : "\"");
            for (const char *c = argv[i]; *c; c++) {
                if (*c == '"' || *c == '\\') putchar('\\');
                putchar(*c);
            }
            putchar('"');
        }
        printf("]}\n");
        fflush(stdout);
        echo();
        return 0;
    }
    if (strcmp(mode, "never-read") == 0) {
        for (;;) Sleep(1000);
    }
    if (strcmp(mode, "ignore-close") == 0) {
        static char buf[4096];
        while (fgets(buf, sizeof buf, stdin)) {
        }
        for (;;) Sleep(1000);
    }
    if (strcmp(mode, "stderr-flood") == 0) {
        long total = argc > 2 ? atol(argv[2]) : (8L << 20);
        static char chunk[1024];
        memset(chunk, 'e', sizeof chunk - 1);
        chunk[sizeof chunk - 1] = '\n';
        for (long written = 0; written < total; written += (long)sizeof chunk)
            fwrite(chunk, 1, sizeof chunk, stderr);
        fflush(stderr);
        echo();
        return 0;
    }
    if (strcmp(mode, "crash-after") == 0) {
        if (argc < 3) return 2;
        if (argc > 3 && !start_marker(argv[3])) return 3;
        echo_until(atol(argv[2]));
        return 0;
    }
    if (strcmp(mode, "grandchild") == 0) {
        if (argc < 3) return 2;
        char self[MAX_PATH];
        GetModuleFileNameA(NULL, self, MAX_PATH);
        char line[2 * MAX_PATH + 32];
        snprintf(line, sizeof line, "\"%s\" marker \"%s\"", self, argv[2]);
        STARTUPINFOA si;
        PROCESS_INFORMATION pi;
        memset(&si, 0, sizeof si);
        si.cb = sizeof si;
        si.dwFlags = STARTF_USESTDHANDLES;
        si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
        si.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
        si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
        /* Inheritable for the grandchild: it holds the pipes open. */
        SetHandleInformation(si.hStdOutput, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT);
        SetHandleInformation(si.hStdError, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT);
        if (!CreateProcessA(NULL, line, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) return 3;
        echo();
        return 0;
    }
    echo();
    return 0;
}
