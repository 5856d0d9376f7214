/* The C harness: see harness.h. Each function follows the Rust harness's
 * function of the same purpose (named in the header), so the two suites'
 * output differs only where their compilers do. */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- args */

static const char USAGE[] =
    "usage: SUITE [--list] [--bench NAME[,NAME..]] [--lock NAME[,NAME..]] [--threads N[,N..]] [--rounds N]\n"
    "             [--iters N] [--duration-ms N] [--profile quick|full] [--oversubscribe] [--seed N]\n"
    "Prints JSON-lines records (env, sample, check) on stdout; diagnostics on stderr.";

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "error: %s%s\n%s\n", what, detail, USAGE);
    exit(2);
}

static uint64_t number(const char *flag, const char *v)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (!*v || *end || errno || v[0] == '-') {
        fprintf(stderr, "error: %s expects a number, got '%s'\n%s\n", flag, v, USAGE);
        exit(2);
    }
    return n;
}

void lm_args_parse(struct lm_args *a, int argc, char **argv, const char *const *benches)
{
    memset(a, 0, sizeof *a);
    a->seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        const char *value = NULL;
        int takes = !strcmp(flag, "--bench") || !strcmp(flag, "--lock") ||
                    !strcmp(flag, "--threads") || !strcmp(flag, "--rounds") ||
                    !strcmp(flag, "--iters") || !strcmp(flag, "--duration-ms") ||
                    !strcmp(flag, "--seed") || !strcmp(flag, "--profile");
        if (takes) {
            if (i + 1 >= argc)
                fail(flag, " needs a value");
            value = argv[++i];
        }
        if (!strcmp(flag, "--list")) {
            a->list = 1;
        } else if (!strcmp(flag, "--oversubscribe")) {
            a->oversubscribe = 1;
        } else if (!strcmp(flag, "--bench")) {
            char *copy = strdup(value), *save = NULL;
            for (char *b = strtok_r(copy, ",", &save); b; b = strtok_r(NULL, ",", &save)) {
                if (a->nbench == 16)
                    fail("--bench", " names more than 16 benchmarks");
                a->bench[a->nbench++] = b;
            }
        } else if (!strcmp(flag, "--lock") || !strcmp(flag, "--duration-ms")) {
            /* Read as every suite reads them; this suite has no locks and
             * no timed-duration cells. */
            if (!strcmp(flag, "--duration-ms"))
                number(flag, value);
        } else if (!strcmp(flag, "--threads")) {
            char *copy = strdup(value), *save = NULL;
            a->nthreads = 0;
            for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                uint64_t n = number("--threads", t);
                if (n == 0)
                    fail("--threads counts start at 1", "");
                if (a->nthreads == 64 || n > 4096)
                    fail("--threads", ": at most 64 counts of at most 4096");
                a->threads[a->nthreads++] = (int)n;
            }
            free(copy);
        } else if (!strcmp(flag, "--rounds")) {
            a->rounds = (long)number(flag, value);
            if (a->rounds == 0)
                fail("--rounds must be at least 1", "");
        } else if (!strcmp(flag, "--iters")) {
            a->iters = number(flag, value);
        } else if (!strcmp(flag, "--seed")) {
            a->seed = number(flag, value);
        } else if (!strcmp(flag, "--profile")) {
            if (!strcmp(value, "quick"))
                a->profile = LM_QUICK;
            else if (!strcmp(value, "full"))
                a->profile = LM_FULL;
            else {
                fprintf(stderr, "error: unknown profile '%s' (quick, full)\n%s\n", value, USAGE);
                exit(2);
            }
        } else if (!strcmp(flag, "-h") || !strcmp(flag, "--help")) {
            puts(USAGE);
            exit(0);
        } else {
            fprintf(stderr, "error: unknown flag '%s'\n%s\n", flag, USAGE);
            exit(2);
        }
    }
    for (int b = 0; b < a->nbench; b++) {
        int known = 0;
        for (const char *const *k = benches; *k; k++)
            known |= !strcmp(*k, a->bench[b]);
        if (!known) {
            fprintf(stderr, "error: unknown benchmark '%s'; this suite has: ", a->bench[b]);
            for (const char *const *k = benches; *k; k++)
                fprintf(stderr, "%s%s", k == benches ? "" : ", ", *k);
            fprintf(stderr, "\n%s\n", USAGE);
            exit(2);
        }
    }
}

int lm_wants(const struct lm_args *a, const char *bench)
{
    if (a->nbench == 0)
        return 1;
    for (int i = 0; i < a->nbench; i++)
        if (!strcmp(a->bench[i], bench))
            return 1;
    return 0;
}

long lm_rounds(const struct lm_args *a, long quick, long full)
{
    return a->rounds ? a->rounds : a->profile == LM_QUICK ? quick : full;
}

uint64_t lm_iters(const struct lm_args *a, uint64_t quick, uint64_t full)
{
    return a->iters ? a->iters : a->profile == LM_QUICK ? quick : full;
}

int lm_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int lm_pin(int cpu)
{
    cpu_set_t set;
    int n = lm_cpus() < CPU_SETSIZE ? lm_cpus() : CPU_SETSIZE;
    CPU_ZERO(&set);
    CPU_SET(cpu % n, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0;
}

static int can_pin(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0;
}

/* args.rs's `ladder`: 1, 2, 3, 4, 6, 8, 12, 16, ... up to `cap`. */
int lm_thread_counts(const struct lm_args *a, int *out)
{
    if (a->nthreads) {
        memcpy(out, a->threads, sizeof(int) * a->nthreads);
        return a->nthreads;
    }
    int cap = a->oversubscribe ? 2 * lm_cpus() : lm_cpus(), n = 0;
    for (int k = 1; k <= 3 && k <= cap; k++)
        out[n++] = k;
    for (int k = 4; k <= cap && n < 62; k *= 2) {
        out[n++] = k;
        if (k * 3 / 2 <= cap)
            out[n++] = k * 3 / 2;
    }
    if (cap > 0 && out[n - 1] != cap && n < 64)
        out[n++] = cap;
    return n;
}

/* --------------------------------------------------------------- timer */

#if defined(__x86_64__) || defined(__i386__)
const char *const LM_TIMER_NAME = "rdtsc";
const char *const LM_TIMER_UNIT = "tsc_ticks";
uint64_t lm_now(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
const char *const LM_TIMER_NAME = "cntvct_el0";
const char *const LM_TIMER_UNIT = "cntvct_ticks";
uint64_t lm_now(void)
{
    uint64_t t;
    /* The isb keeps the counter read from being hoisted above the timed code. */
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(t));
    return t;
}
#else
const char *const LM_TIMER_NAME = "clock_monotonic";
const char *const LM_TIMER_UNIT = "ns";
uint64_t lm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

static double secs_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

double lm_hz(void)
{
    static double hz;
    if (hz > 0)
        return hz;
#if defined(__x86_64__) || defined(__i386__)
    /* Calibrated against the monotonic clock over 20 ms, best of three. */
    for (int i = 0; i < 3; i++) {
        double s0 = secs_now(), s;
        uint64_t t0 = lm_now();
        while ((s = secs_now()) - s0 < 0.020) {
        }
        double rate = (double)(lm_now() - t0) / (s - s0);
        hz = rate > hz ? rate : hz;
    }
#elif defined(__aarch64__)
    uint64_t f;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
    hz = (double)f;
#else
    (void)secs_now;
    hz = 1e9;
#endif
    return hz;
}

/* ---------------------------------------------------------------- JSON */

static void reserve(struct lm_line *l, size_t more)
{
    if (l->len + more + 1 <= l->cap)
        return;
    size_t cap = l->cap ? l->cap : 256;
    while (cap < l->len + more + 1)
        cap *= 2;
    l->buf = realloc(l->buf, cap);
    if (!l->buf) {
        perror("realloc");
        exit(1);
    }
    l->cap = cap;
}

void lm_put(struct lm_line *l, const char *text)
{
    size_t n = strlen(text);
    reserve(l, n);
    memcpy(l->buf + l->len, text, n + 1);
    l->len += n;
}

void lm_put_str(struct lm_line *l, const char *s)
{
    char esc[8];
    lm_put(l, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '"': lm_put(l, "\\\""); break;
        case '\\': lm_put(l, "\\\\"); break;
        case '\n': lm_put(l, "\\n"); break;
        case '\r': lm_put(l, "\\r"); break;
        case '\t': lm_put(l, "\\t"); break;
        default:
            if (c < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                lm_put(l, esc);
            } else {
                esc[0] = (char)c;
                esc[1] = 0;
                lm_put(l, esc);
            }
        }
    }
    lm_put(l, "\"");
}

void lm_put_num(struct lm_line *l, double x)
{
    char text[40];
    if (!isfinite(x)) {
        lm_put(l, "null");
        return;
    }
    /* A whole number as Rust's `{:?}` writes it ("20.0"); anything else
     * as the shortest text that reads back as `x`. */
    if (x == (double)(int64_t)x && x > -1e15 && x < 1e15) {
        snprintf(text, sizeof text, "%lld.0", (long long)x);
        lm_put(l, text);
        return;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, x);
        if (strtod(text, NULL) == x)
            break;
    }
    lm_put(l, text);
}

void lm_put_int(struct lm_line *l, int64_t i)
{
    char text[24];
    snprintf(text, sizeof text, "%lld", (long long)i);
    lm_put(l, text);
}

void lm_emit(struct lm_line *l)
{
    /* Each line flushed as written: a suite that crashes later still
     * leaves every earlier record. A closed stdout: the reader is gone. */
    if (fputs(l->buf ? l->buf : "", stdout) == EOF || fputc('\n', stdout) == EOF ||
        fflush(stdout) == EOF)
        exit(1);
    free(l->buf);
    *l = (struct lm_line){0};
}

/* ------------------------------------------------------------- records */

static int failed_checks;

static const char *relax_hint(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return "pause";
#elif defined(__aarch64__)
    return "isb";
#elif defined(__riscv)
    return "pause (zihintpause)";
#else
    return "none";
#endif
}

/* The architecture as Rust's std::env::consts::ARCH names it, so a C
 * and a Rust suite of one target say the same; alpha has no Rust name. */
static const char *arch_name(void)
{
#if defined(__x86_64__)
    return "x86_64";
#elif defined(__i386__)
    return "x86";
#elif defined(__aarch64__)
    return "aarch64";
#elif defined(__powerpc64__)
    return "powerpc64";
#elif defined(__mips__) && defined(__mips64)
    return "mips64";
#elif defined(__mips__)
    return "mips";
#elif defined(__riscv) && __riscv_xlen == 64
    return "riscv64";
#elif defined(__sparc__) && defined(__arch64__)
    return "sparc64";
#elif defined(__s390x__)
    return "s390x";
#elif defined(__alpha__)
    return "alpha";
#else
#error "an architecture this harness does not name yet"
#endif
}

void lm_env(const char *suite, const struct lm_args *a, const char *variants_json)
{
    struct lm_line l = {0};
    lm_put(&l, "{\"type\":\"env\",\"protocol\":");
    lm_put_int(&l, LM_PROTOCOL_VERSION);
    lm_put(&l, ",\"suite\":");
    lm_put_str(&l, suite);
    lm_put(&l, ",\"arch\":");
    lm_put_str(&l, arch_name());
    lm_put(&l, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? ",\"endian\":\"big\"" : ",\"endian\":\"little\"");
    lm_put(&l, ",\"pointer_width\":");
    lm_put_int(&l, (int64_t)(sizeof(void *) * 8));
    lm_put(&l, ",\"cpus\":");
    lm_put_int(&l, lm_cpus());
    lm_put(&l, ",\"timer\":");
    lm_put_str(&l, LM_TIMER_NAME);
    lm_put(&l, ",\"timer_unit\":");
    lm_put_str(&l, LM_TIMER_UNIT);
    lm_put(&l, ",\"timer_hz\":");
    lm_put_num(&l, lm_hz());
    lm_put(&l, ",\"relax\":");
    lm_put_str(&l, relax_hint());
    lm_put(&l, ",\"profile\":");
    lm_put_str(&l, a->profile == LM_QUICK ? "quick" : "full");
    lm_put(&l, ",\"seed\":");
    lm_put_int(&l, (int64_t)a->seed);
    lm_put(&l, can_pin() ? ",\"pinned\":true" : ",\"pinned\":false");
    lm_put(&l, ",\"variants\":");
    lm_put(&l, variants_json);
    lm_put(&l, "}");
    lm_emit(&l);
}

static int is_time(const char *unit)
{
    size_t n = strlen(unit);
    return !strcmp(unit, "ns") || (n > 6 && !strcmp(unit + n - 6, "_ticks"));
}

void lm_sample(const char *suite, const char *bench, const char *case_json,
               const char *metric, const char *unit, long round, double value)
{
    struct lm_line l = {0};
    /* A time the empty-loop subtraction cannot tell from zero, or a value
     * that is not finite, is null: shown, never compared (out.rs). */
    int valid = isfinite(value) && (value > 0 || (!is_time(unit) && value >= 0));
    lm_put(&l, "{\"type\":\"sample\",\"suite\":");
    lm_put_str(&l, suite);
    lm_put(&l, ",\"bench\":");
    lm_put_str(&l, bench);
    lm_put(&l, ",\"case\":");
    lm_put(&l, case_json);
    lm_put(&l, ",\"metric\":");
    lm_put_str(&l, metric);
    lm_put(&l, ",\"unit\":");
    lm_put_str(&l, unit);
    lm_put(&l, ",\"better\":\"lower\",\"round\":");
    lm_put_int(&l, round);
    lm_put(&l, ",\"value\":");
    if (valid)
        lm_put_num(&l, value);
    else
        lm_put(&l, "null");
    lm_put(&l, "}");
    lm_emit(&l);
}

void lm_check(const char *suite, const char *bench, const char *case_json,
              const char *name, int ok, const char *details_json)
{
    struct lm_line l = {0};
    if (!ok) {
        failed_checks++;
        fprintf(stderr, "%s: check %s of %s %s FAILED: %s\n", suite, name, bench, case_json,
                details_json);
    }
    lm_put(&l, "{\"type\":\"check\",\"suite\":");
    lm_put_str(&l, suite);
    lm_put(&l, ",\"bench\":");
    lm_put_str(&l, bench);
    lm_put(&l, ",\"case\":");
    lm_put(&l, case_json);
    lm_put(&l, ",\"name\":");
    lm_put_str(&l, name);
    lm_put(&l, ok ? ",\"ok\":true,\"details\":" : ",\"ok\":false,\"details\":");
    lm_put(&l, details_json);
    lm_put(&l, "}");
    lm_emit(&l);
}

void lm_check_eq(const char *suite, const char *bench, const char *case_json,
                 const char *name, uint64_t expected, uint64_t seen)
{
    char details[96];
    snprintf(details, sizeof details, "{\"expected\":%llu,\"seen\":%llu}",
             (unsigned long long)expected, (unsigned long long)seen);
    lm_check(suite, bench, case_json, name, expected == seen, details);
}

int lm_finish(void)
{
    return failed_checks ? 1 : 0;
}

/* -------------------------------------------------------------- probes */

/* A function with a fixed symbol, distinct from every other so that no
 * identical-code folding gives it another's address (probe.rs). */
__attribute__((noinline, used)) uint32_t lockmatrix_probe_anchor(void)
{
    uint32_t v = 0x4c4d5052;
    LM_BLACK_BOX(v);
    return v;
}

/* Where a function's code is: on 64-bit big-endian ELFv1 POWER a function
 * pointer points at a descriptor whose first word is the code's address. */
static intptr_t code(void (*function)(void))
{
#if defined(__powerpc64__) && defined(_CALL_ELF) && _CALL_ELF == 1
    return *(const intptr_t *)(const void *)function;
#else
    return (intptr_t)function;
#endif
}

void lm_probes(const char *suite, const struct lm_probe *probes, int n)
{
    struct lm_line l = {0};
    intptr_t anchor = code((void (*)(void))lockmatrix_probe_anchor);
    lm_put(&l, "{\"type\":\"probes\",\"suite\":");
    lm_put_str(&l, suite);
    lm_put(&l, ",\"anchor\":\"lockmatrix_probe_anchor\",\"probes\":[");
    for (int i = 0; i < n; i++) {
        lm_put(&l, i ? ",{\"unit\":" : "{\"unit\":");
        lm_put_str(&l, probes[i].unit);
        lm_put(&l, ",\"op\":");
        lm_put_str(&l, probes[i].op);
        lm_put(&l, ",\"offset\":");
        lm_put_int(&l, (int64_t)(code(probes[i].function) - anchor));
        lm_put(&l, "}");
    }
    lm_put(&l, "]}");
    lm_emit(&l);
}

/* ------------------------------------------------------------- markers */

static void marker(uint32_t region, long phase, long reply_fd)
{
    /* ENOSYS on every kernel and under QEMU; the plugin sees it first. */
    syscall(LM_MARKER_SYSCALL, LM_MARKER_MAGIC, (long)region, phase, reply_fd);
}

__attribute__((noinline)) void lm_marker_begin(uint32_t region)
{
    marker(region, LM_PHASE_BEGIN, -1);
}

__attribute__((noinline)) void lm_marker_begin_traced(uint32_t region)
{
    marker(region, LM_PHASE_BEGIN_TRACED, -1);
}

static int pipe_fds[2] = {-1, -1};
static int counting = -1;

long lm_pipe_read_fd(void)
{
    return pipe_fds[0];
}

long lm_pipe_write_fd(void)
{
    return pipe_fds[1];
}

static uint64_t le64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

int lm_counting(void)
{
    if (counting >= 0)
        return counting;
    counting = 0;
    if (pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) != 0)
        return 0;
    /* An empty region: under the plugin its end writes 8 bytes. */
    unsigned char bytes[8];
    lm_marker_begin(LM_PROBE_REGION);
    marker(LM_PROBE_REGION, LM_PHASE_END, pipe_fds[1]);
    counting = read(pipe_fds[0], bytes, 8) == 8;
    return counting;
}

/* Reads exactly `n` bytes from the non-blocking pipe, or fails: the
 * plugin has written its whole reply before the marker returns. */
static int read_exact(int fd, unsigned char *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t got = read(fd, buf + done, n - done);
        if (got <= 0)
            return 0;
        done += (size_t)got;
    }
    return 1;
}

static void push(struct lm_hist_entry **list, size_t *n, const char *text, size_t len,
                 int64_t count)
{
    *list = realloc(*list, (*n + 1) * sizeof **list);
    (*list)[*n].text = strndup(text, len);
    (*list)[*n].count = count;
    (*n)++;
}

/* marker.rs's Histogram::parse: `I<tab>COUNT<tab>TEXT` and
 * `S<tab>COUNT<tab>SYMBOL` lines; anything else and there is none. */
static int parse_histogram(char *payload, struct lm_hist *h)
{
    char *line = payload;
    while (*line) {
        char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *tab1 = memchr(line, '\t', len);
        if (!tab1)
            return 0;
        char *tab2 = memchr(tab1 + 1, '\t', len - (size_t)(tab1 + 1 - line));
        if (!tab2 || tab1 - line != 1 || tab2 == tab1 + 1)
            return 0;
        int64_t count = 0;
        for (char *d = tab1 + 1; d < tab2; d++) {
            if (*d < '0' || *d > '9')
                return 0;
            count = count * 10 + (*d - '0');
        }
        const char *text = tab2 + 1;
        size_t tlen = len - (size_t)(text - line);
        if (line[0] == 'I')
            push(&h->insns, &h->ninsns, text, tlen, count);
        else if (line[0] == 'S')
            push(&h->entered, &h->nentered, text, tlen, count);
        else
            return 0;
        line = end ? end + 1 : line + len;
    }
    return 1;
}

__attribute__((noinline)) int lm_end_traced(uint32_t region, uint64_t *insns, struct lm_hist *h)
{
    unsigned char head[12];
    memset(h, 0, sizeof *h);
    marker(region, LM_PHASE_END, pipe_fds[1]);
    if (!read_exact(pipe_fds[0], head, 12))
        return 0;
    *insns = le64(head);
    uint32_t len = le32(head + 8);
    if (len != LM_NO_HISTOGRAM) {
        char *payload = malloc((size_t)len + 1);
        if (payload && read_exact(pipe_fds[0], (unsigned char *)payload, len)) {
            payload[len] = 0;
            h->valid = strlen(payload) == len && parse_histogram(payload, h);
        }
        free(payload);
    }
    return 1;
}

void lm_hist_free(struct lm_hist *h)
{
    for (size_t i = 0; i < h->ninsns; i++)
        free(h->insns[i].text);
    for (size_t i = 0; i < h->nentered; i++)
        free(h->entered[i].text);
    free(h->insns);
    free(h->entered);
    memset(h, 0, sizeof *h);
}

uint32_t lm_next_region(void)
{
    static uint32_t next = 1;
    return next++;
}

__attribute__((noinline)) int lm_counted_empty_loop(uint32_t region, uint64_t iters,
                                                    uint64_t *insns, struct lm_hist *h)
{
    lm_marker_begin_traced(region);
    for (uint64_t i = 0; i < iters; i++)
        LM_BLACK_BOX(i);
    return lm_end_traced(region, insns, h);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(((const struct lm_hist_entry *)a)->text,
                  ((const struct lm_hist_entry *)b)->text);
}

/* The four regions' entries, each count signed (-op1 +op2 +empty1 -empty2,
 * as marker.rs's Executed::from_regions), summed per text, zeros left
 * out, as a JSON object in byte order of the texts. */
static void put_per_op(struct lm_line *l, struct lm_hist *hist, int entered, uint64_t iters)
{
    static const int sign[4] = {-1, 1, 1, -1};
    struct lm_hist_entry *all = NULL;
    size_t n = 0;
    for (int r = 0; r < 4; r++) {
        struct lm_hist_entry *list = entered ? hist[r].entered : hist[r].insns;
        size_t count = entered ? hist[r].nentered : hist[r].ninsns;
        for (size_t i = 0; i < count; i++) {
            all = realloc(all, (n + 1) * sizeof *all);
            all[n].text = list[i].text;
            all[n].count = sign[r] * list[i].count;
            n++;
        }
    }
    qsort(all, n, sizeof *all, by_text);
    lm_put(l, "{");
    int first = 1;
    for (size_t i = 0; i < n;) {
        int64_t sum = 0;
        size_t j = i;
        for (; j < n && !strcmp(all[j].text, all[i].text); j++)
            sum += all[j].count;
        if (sum != 0) {
            if (!first)
                lm_put(l, ",");
            first = 0;
            lm_put_str(l, all[i].text);
            lm_put(l, ":");
            lm_put_num(l, (double)sum / (double)iters);
        }
        i = j;
    }
    lm_put(l, "}");
    free(all);
}

void lm_report_counted(const char *suite, const char *bench, const char *case_json,
                       struct lm_counted *c, uint64_t iters)
{
    double op_loop = ((double)c->regions[1] - (double)c->regions[0]) / (double)iters;
    double empty_loop = ((double)c->regions[3] - (double)c->regions[2]) / (double)iters;
    /* Counts gate exactly wherever they exist. */
    lm_sample(suite, bench, case_json, "insns_per_op", "insns", 0, op_loop - empty_loop);
    if (c->hist[0].valid && c->hist[1].valid && c->hist[2].valid && c->hist[3].valid) {
        struct lm_line l = {0};
        lm_put(&l, "{\"type\":\"executed\",\"suite\":");
        lm_put_str(&l, suite);
        lm_put(&l, ",\"bench\":");
        lm_put_str(&l, bench);
        lm_put(&l, ",\"case\":");
        lm_put(&l, case_json);
        lm_put(&l, ",\"round\":0,\"per_op\":");
        put_per_op(&l, c->hist, 0, iters);
        lm_put(&l, ",\"entered\":");
        put_per_op(&l, c->hist, 1, iters);
        lm_put(&l, "}");
        lm_emit(&l);
    }
    for (int r = 0; r < 4; r++)
        lm_hist_free(&c->hist[r]);
}

/* --------------------------------------------------------- measurement */

__attribute__((noinline)) uint64_t lm_empty_loop(uint64_t iters)
{
    uint64_t t0 = lm_now();
    for (uint64_t i = 0; i < iters; i++)
        LM_BLACK_BOX(i);
    return lm_now() - t0;
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t lm_median(uint64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return v[n / 2];
}
