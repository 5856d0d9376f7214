/* The C suites' harness: the same JSON-lines result protocol, timers,
 * batch measurement and QEMU region markers as the Rust harness
 * (suites/harness), so every later stage reads a C suite's output as it
 * reads a Rust suite's. Only libc; built statically by each target's
 * cross gcc (crates/lockmatrix/src/build/c.rs). */
#ifndef LOCKMATRIX_HARNESS_H
#define LOCKMATRIX_HARNESS_H

#include <stddef.h>
#include <stdint.h>

/* suites/harness/src/out.rs's PROTOCOL_VERSION. */
#define LM_PROTOCOL_VERSION 4

/* ---- command line (suites/harness/src/args.rs) ---- */
enum lm_profile { LM_QUICK, LM_FULL };

struct lm_args {
    int list;
    const char *bench[16];
    int nbench;
    int threads[64];
    int nthreads; /* 0: the ladder up to the CPU count */
    long rounds;  /* 0: the profile's */
    uint64_t iters; /* 0: the profile's */
    enum lm_profile profile;
    int oversubscribe;
    uint64_t seed;
};

/* Parses argv, checking benchmark names against `benches` (NULL-ended);
 * bad input exits 2 with the usage, as the Rust suites do. */
void lm_args_parse(struct lm_args *a, int argc, char **argv, const char *const *benches);
int lm_wants(const struct lm_args *a, const char *bench);
long lm_rounds(const struct lm_args *a, long quick, long full);
uint64_t lm_iters(const struct lm_args *a, uint64_t quick, uint64_t full);
/* Thread counts to sweep: --threads, else 1, 2, 3, 4, 6, 8, ... up to the
 * CPU count. Returns how many were written into `out` (at most 64). */
int lm_thread_counts(const struct lm_args *a, int *out);
int lm_cpus(void);
int lm_pin(int cpu);

/* ---- timer (suites/harness/src/timer.rs) ---- */
extern const char *const LM_TIMER_NAME;
extern const char *const LM_TIMER_UNIT;
uint64_t lm_now(void);
double lm_hz(void);

/* ---- JSON writing ---- */
/* A record is written with these into one line, then lm_emit()ed. */
struct lm_line {
    char *buf;
    size_t len, cap;
};
void lm_put(struct lm_line *l, const char *text);
void lm_put_str(struct lm_line *l, const char *s); /* a JSON string */
void lm_put_num(struct lm_line *l, double x);      /* null when not finite */
void lm_put_int(struct lm_line *l, int64_t i);
void lm_emit(struct lm_line *l); /* prints the line, flushes, frees */

/* ---- records (suites/harness/src/out.rs) ---- */
/* A case is a JSON object's text, e.g. {"op":"cas_sync"}. */
void lm_env(const char *suite, const struct lm_args *a, const char *variants_json);
void lm_sample(const char *suite, const char *bench, const char *case_json,
               const char *metric, const char *unit, long round, double value);
void lm_check(const char *suite, const char *bench, const char *case_json,
              const char *name, int ok, const char *details_json);
void lm_check_eq(const char *suite, const char *bench, const char *case_json,
                 const char *name, uint64_t expected, uint64_t seen);
/* Exit status: 1 when any check failed. */
int lm_finish(void);

/* ---- probes (suites/harness/src/probe.rs) ---- */
struct lm_probe {
    const char *unit;
    const char *op;
    void (*function)(void);
};
uint32_t lockmatrix_probe_anchor(void);
void lm_probes(const char *suite, const struct lm_probe *probes, int n);

/* ---- region markers (suites/harness/src/marker.rs) ---- */
#define LM_MARKER_SYSCALL 4221
#define LM_MARKER_MAGIC 0x4c4d4b52L
#define LM_PHASE_BEGIN 0
#define LM_PHASE_END 1
#define LM_PHASE_BEGIN_TRACED 2
#define LM_NO_HISTOGRAM 0xffffffffu
#define LM_PROBE_REGION 0xffffffffu
/* Iterations of a counted loop (suites/harness/src/measure.rs). */
#define LM_INSNS_ITERS 1000

void lm_marker_begin(uint32_t region);
void lm_marker_begin_traced(uint32_t region);
/* Whether instructions are being counted (qemu-user with the plugin). */
int lm_counting(void);
/* The reply pipe's descriptors, valid when lm_counting(). */
long lm_pipe_read_fd(void);
long lm_pipe_write_fd(void);

/* A traced region's reply: its count and, when sent, its histogram. */
struct lm_hist_entry {
    char *text;
    int64_t count;
};
struct lm_hist {
    struct lm_hist_entry *insns, *entered;
    size_t ninsns, nentered;
    int valid;
};
/* Closes traced region `region` and reads its reply; 0 without one. */
int lm_end_traced(uint32_t region, uint64_t *insns, struct lm_hist *h);
void lm_hist_free(struct lm_hist *h);

/* The four traced regions of a counted cell (op loop of iters and
 * 2*iters, empty loop of iters and 2*iters, as marker.rs's
 * insns_per_op) into its `insns_per_op` sample and `executed` record. */
struct lm_counted {
    uint64_t regions[4];
    struct lm_hist hist[4];
};
void lm_report_counted(const char *suite, const char *bench, const char *case_json,
                       struct lm_counted *c, uint64_t iters);
/* A fresh region id per counted cell. */
uint32_t lm_next_region(void);
/* The empty loop, counted as one traced region. */
int lm_counted_empty_loop(uint32_t region, uint64_t iters, uint64_t *insns, struct lm_hist *h);

/* ---- measurement (suites/harness/src/measure.rs) ---- */
/* Ticks of `iters` iterations of the empty loop. */
uint64_t lm_empty_loop(uint64_t iters);
uint64_t lm_median(uint64_t *v, int n);

/* Keeps `x` in a register and the loop around it: Rust's black_box. */
#define LM_BLACK_BOX(x) __asm__ __volatile__("" : "+r"(x))

#endif
