/* The C twin of the atomic suite (suites/atomic): seed 000's cost of
 * atomic primitives, fully ordered vs local, against the cost of
 * "disabling interrupts", and a contended fetch-add on one cache line vs
 * per-thread padded counters; the same benchmarks, cells, checks and
 * records, compiled by GCC instead of rustc (and run on alpha, which
 * rustc cannot build for).
 *
 * Benchmarks:
 * - `single_thread`: case {op}, metric `ticks_per_op`, one sample per
 *   round; ops cas_local, cas_sync, add_return_local, add_return_sync,
 *   fence, irq_disable, irq_enable, irq_disable_enable. Checks: every CAS
 *   succeeded and the word holds the count of updates; the signal mask is
 *   all-blocked after disable and empty after enable.
 * - `contended_add`: case {layout: shared|padded, threads}, metric
 *   `ticks_per_op` (mean over threads). Check: the counters' total.
 *
 * On real hardware every timing gates at the strictness its measured
 * noise allows, as the Rust suite's do; instruction counts and ordering
 * footprints gate every cell exactly. */
#define _GNU_SOURCE
#include "harness.h"
#include "ops.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char SUITE[] = "atomic-c";
static const char *const BENCHES[] = {"single_thread", "contended_add", NULL};

/* One cell's loops, as suites/harness/src/measure.rs and marker.rs have
 * them: a timed loop and a counted (traced) loop with the same body, one
 * instance per cell, so both regions of a cell run the very same code. */
#define CELL(name, ctx_t, body)                                                      \
    __attribute__((noinline)) static uint64_t name##_timed(ctx_t *c, uint64_t iters) \
    {                                                                                \
        uint64_t t0 = lm_now();                                                      \
        for (uint64_t i = 0; i < iters; i++) {                                       \
            LM_BLACK_BOX(i);                                                         \
            body;                                                                    \
        }                                                                            \
        return lm_now() - t0;                                                        \
    }                                                                                \
    __attribute__((noinline)) static int name##_counted(                             \
        uint32_t region, ctx_t *c, uint64_t iters, uint64_t *insns, struct lm_hist *h) \
    {                                                                                \
        lm_marker_begin_traced(region);                                              \
        for (uint64_t i = 0; i < iters; i++) {                                       \
            LM_BLACK_BOX(i);                                                         \
            body;                                                                    \
        }                                                                            \
        return lm_end_traced(region, insns, h);                                      \
    }                                                                                \
    /* Ticks per op above the empty loop, median of `reps` batches. */               \
    __attribute__((unused)) static double name##_per_op(ctx_t *c, uint64_t iters, int reps) \
    {                                                                                \
        uint64_t ops[16], empties[16];                                               \
        name##_timed(c, iters < 1000 ? iters : 1000);                                \
        for (int r = 0; r < reps; r++) {                                             \
            empties[r] = lm_empty_loop(iters);                                       \
            ops[r] = name##_timed(c, iters);                                         \
        }                                                                            \
        double op = (double)lm_median(ops, reps);                                    \
        return (op - (double)lm_median(empties, reps)) / (double)iters;              \
    }                                                                                \
    /* Under QEMU with the plugin: the cell's insns_per_op and executed. */          \
    static void name##_insns(const char *bench, const char *case_json, ctx_t *c)     \
    {                                                                                \
        if (!lm_counting())                                                          \
            return;                                                                  \
        uint32_t region = lm_next_region();                                          \
        uint64_t n = LM_INSNS_ITERS;                                                 \
        struct lm_counted k;                                                         \
        memset(&k, 0, sizeof k);                                                     \
        name##_timed(c, n); /* warm-up: lazy initialisation outside */               \
        if (name##_counted(region, c, n, &k.regions[0], &k.hist[0]) &&               \
            name##_counted(region, c, 2 * n, &k.regions[1], &k.hist[1]) &&           \
            lm_counted_empty_loop(region, n, &k.regions[2], &k.hist[2]) &&           \
            lm_counted_empty_loop(region, 2 * n, &k.regions[3], &k.hist[3]))         \
            lm_report_counted(SUITE, bench, case_json, &k, n);                       \
        else                                                                         \
            for (int r = 0; r < 4; r++)                                              \
                lm_hist_free(&k.hist[r]);                                            \
    }

/* ------------------------------------------------------ single_thread */

static const char SINGLE[] = "single_thread";

struct cas_ctx {
    cas_fn f;
    word_t word, next;
    uint64_t misses;
};
CELL(cas, struct cas_ctx, {
    if (c->f(&c->word, c->next, c->next + 1) != c->next)
        c->misses++;
    c->next++;
})

struct add_ctx {
    add_fn f;
    word_t word, calls;
    uint64_t wrong;
};
CELL(add, struct add_ctx, {
    c->calls++;
    if (c->f(&c->word, 1) != c->calls)
        c->wrong++;
})

struct fence_ctx {
    void (*f)(void);
};
CELL(fence, struct fence_ctx, c->f())

/* The user-space analogue of cli/sti: blocking and unblocking every
 * signal (suites/atomic/src/sigmask.rs). */
struct irq_ctx {
    sigset_t full, empty;
    int first_error;
    uint64_t errors;
};
static void note(struct irq_ctx *c, int rc)
{
    if (rc != 0) {
        if (!c->first_error)
            c->first_error = rc;
        c->errors++;
    }
}
CELL(irq_disable, struct irq_ctx, note(c, pthread_sigmask(SIG_BLOCK, &c->full, NULL)))
CELL(irq_enable, struct irq_ctx, note(c, pthread_sigmask(SIG_SETMASK, &c->empty, NULL)))
CELL(irq_disable_enable, struct irq_ctx, {
    note(c, pthread_sigmask(SIG_BLOCK, &c->full, NULL));
    LM_BLACK_BOX(i);
    note(c, pthread_sigmask(SIG_SETMASK, &c->empty, NULL));
})

static int is_blocked(int sig)
{
    sigset_t cur;
    sigemptyset(&cur);
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    return sigismember(&cur, sig) == 1;
}

static void op_case(char *buf, size_t n, const char *op)
{
    snprintf(buf, n, "{\"op\":\"%s\"}", op);
}

static void emit(const char *op, long round, double per_op)
{
    char c[64];
    op_case(c, sizeof c, op);
    lm_sample(SUITE, SINGLE, c, "ticks_per_op", LM_TIMER_UNIT, round, per_op);
}

static const struct {
    const char *name;
    cas_fn f;
} CAS_VARIANTS[] = {{"cas_local", cas_local}, {"cas_sync", cas_sync}};

static const struct {
    const char *name;
    add_fn f;
} ADD_VARIANTS[] = {{"add_return_local", add_return_local}, {"add_return_sync", add_return_sync}};

static void single_thread(const struct lm_args *a)
{
    long rounds = lm_rounds(a, 5, 15);
    /* 20000 loops is seed 000's count; syscalls are ~100x dearer. */
    uint64_t iters = lm_iters(a, 20000, 200000);
    uint64_t sys_iters = iters / 10 ? iters / 10 : 1;
    const int reps = 5;
    char c[64];

    for (size_t v = 0; v < sizeof CAS_VARIANTS / sizeof *CAS_VARIANTS; v++) {
        struct cas_ctx ctx = {CAS_VARIANTS[v].f, 0, 0, 0};
        for (long r = 0; r < rounds; r++)
            emit(CAS_VARIANTS[v].name, r, cas_per_op(&ctx, iters, reps));
        op_case(c, sizeof c, CAS_VARIANTS[v].name);
        cas_insns(SINGLE, c, &ctx);
        lm_check_eq(SUITE, SINGLE, c, "every_cas_succeeded", 0, ctx.misses);
        lm_check_eq(SUITE, SINGLE, c, "final_value", ctx.next, ctx.word);
    }

    for (size_t v = 0; v < sizeof ADD_VARIANTS / sizeof *ADD_VARIANTS; v++) {
        struct add_ctx ctx = {ADD_VARIANTS[v].f, 0, 0, 0};
        for (long r = 0; r < rounds; r++)
            emit(ADD_VARIANTS[v].name, r, add_per_op(&ctx, iters, reps));
        op_case(c, sizeof c, ADD_VARIANTS[v].name);
        add_insns(SINGLE, c, &ctx);
        lm_check_eq(SUITE, SINGLE, c, "returned_new_value", 0, ctx.wrong);
        lm_check_eq(SUITE, SINGLE, c, "final_value", ctx.calls, ctx.word);
    }

    struct fence_ctx fence = {fence_seqcst};
    for (long r = 0; r < rounds; r++)
        emit("fence", r, fence_per_op(&fence, iters, reps));
    op_case(c, sizeof c, "fence");
    fence_insns(SINGLE, c, &fence);

    struct irq_ctx irq;
    memset(&irq, 0, sizeof irq);
    sigfillset(&irq.full);
    sigemptyset(&irq.empty);
    int blocked_after_disable = 1, unblocked_after_enable = 1;
    for (long r = 0; r < rounds; r++) {
        emit("irq_disable", r, irq_disable_per_op(&irq, sys_iters, reps));
        blocked_after_disable &= is_blocked(SIGUSR1) && is_blocked(SIGTERM);
        emit("irq_enable", r, irq_enable_per_op(&irq, sys_iters, reps));
        unblocked_after_enable &= !is_blocked(SIGUSR1) && !is_blocked(SIGTERM);
        emit("irq_disable_enable", r, irq_disable_enable_per_op(&irq, sys_iters, reps));
    }
    op_case(c, sizeof c, "irq_disable");
    irq_disable_insns(SINGLE, c, &irq);
    op_case(c, sizeof c, "irq_enable");
    irq_enable_insns(SINGLE, c, &irq);
    op_case(c, sizeof c, "irq_disable_enable");
    irq_disable_enable_insns(SINGLE, c, &irq);
    char details[96];
    snprintf(details, sizeof details, "{\"seen\":%s}", blocked_after_disable ? "true" : "false");
    lm_check(SUITE, SINGLE, c, "disable_blocks_signals", blocked_after_disable, details);
    snprintf(details, sizeof details, "{\"seen\":%s}", unblocked_after_enable ? "true" : "false");
    lm_check(SUITE, SINGLE, c, "enable_unblocks_signals", unblocked_after_enable, details);
    snprintf(details, sizeof details, "{\"failed_calls\":%llu,\"first_errno\":%d}",
             (unsigned long long)irq.errors, irq.first_error);
    lm_check(SUITE, SINGLE, c, "sigmask_calls_succeeded", irq.errors == 0, details);
}

/* ------------------------------------------------------ contended_add */

static const char CONTENDED[] = "contended_add";

/* 128 bytes: two 64-byte lines, since adjacent-line prefetch pairs them. */
struct padded {
    word_t value;
} __attribute__((aligned(128)));

struct contended {
    struct padded *counters;
    int shared;
    uint64_t iters;
    pthread_barrier_t start;
};

struct worker {
    struct contended *run;
    int index;
    uint64_t ticks;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    struct contended *run = w->run;
    word_t *c = &run->counters[run->shared ? 0 : w->index].value;
    lm_pin(w->index);
    pthread_barrier_wait(&run->start);
    uint64_t t0 = lm_now();
    for (uint64_t i = 0; i < run->iters; i++)
        __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
    w->ticks = lm_now() - t0;
    return NULL;
}

struct own_ctx {
    word_t value;
};
CELL(own_add, struct own_ctx, __atomic_fetch_add(&c->value, 1, __ATOMIC_RELAXED))

static void contended_add(const struct lm_args *a)
{
    long rounds = lm_rounds(a, 3, 10);
    uint64_t iters = lm_iters(a, 20000, 1000000);
    int counts[64];
    int ncounts = lm_thread_counts(a, counts);
    for (int k = 0; k < ncounts; k++) {
        int n = counts[k];
        for (int shared = 1; shared >= 0; shared--) {
            char c[96];
            snprintf(c, sizeof c, "{\"layout\":\"%s\",\"threads\":%d}",
                     shared ? "shared" : "padded", n);
            struct contended run = {
                .counters = aligned_alloc(128, sizeof(struct padded) * (size_t)n),
                .shared = shared,
                .iters = iters,
            };
            struct worker *workers = calloc((size_t)n, sizeof *workers);
            pthread_t *ids = calloc((size_t)n, sizeof *ids);
            if (!run.counters || !workers || !ids) {
                perror("allocating the counters");
                exit(1);
            }
            memset(run.counters, 0, sizeof(struct padded) * (size_t)n);
            for (long r = 0; r < rounds; r++) {
                pthread_barrier_init(&run.start, NULL, (unsigned)n);
                for (int t = 0; t < n; t++) {
                    workers[t] = (struct worker){&run, t, 0};
                    if (pthread_create(&ids[t], NULL, work, &workers[t]) != 0) {
                        perror("pthread_create");
                        exit(1);
                    }
                }
                uint64_t sum = 0;
                for (int t = 0; t < n; t++) {
                    pthread_join(ids[t], NULL);
                    sum += workers[t].ticks;
                }
                pthread_barrier_destroy(&run.start);
                /* Contended: too noisy on shared VMs to gate on timing. */
                lm_sample(SUITE, CONTENDED, c, "ticks_per_op", LM_TIMER_UNIT, r,
                          (double)sum / (double)((uint64_t)n * iters));
            }
            uint64_t total = 0;
            for (int t = 0; t < n; t++)
                total += run.counters[t].value;
            if (n == 1) {
                /* Counted on a counter of its own so the total stays exact. */
                struct own_ctx own = {0};
                own_add_insns(CONTENDED, c, &own);
            }
            lm_check_eq(SUITE, CONTENDED, c, "counter_total", (uint64_t)n * iters * (uint64_t)rounds,
                        total);
            free(run.counters);
            free(workers);
            free(ids);
        }
    }
}

/* ----------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    struct lm_args a;
    lm_args_parse(&a, argc, argv, BENCHES);
    if (a.list) {
        for (const char *const *b = BENCHES; *b; b++)
            puts(*b);
        return 0;
    }
    char variants[512];
    snprintf(variants, sizeof variants,
             "{\"cas_local\":\"%s\",\"add_return_local\":\"%s\",\"lse\":null,"
             "\"atomic_64bit\":%s,\"word_bits\":%d,"
             "\"irq_analogue\":\"pthread_sigmask(all signals)\",\"compiler\":\"gcc %s\"}",
             CAS_LOCAL_NAME, ADD_LOCAL_NAME,
             __GCC_ATOMIC_LLONG_LOCK_FREE == 2 ? "true" : "false", (int)(sizeof(word_t) * 8),
             __VERSION__);
    lm_env(SUITE, &a, variants);
    struct lm_probe probes[] = {
        {"cas_local", "op", (void (*)(void))cas_local},
        {"cas_sync", "op", (void (*)(void))cas_sync},
        {"add_return_local", "op", (void (*)(void))add_return_local},
        {"add_return_sync", "op", (void (*)(void))add_return_sync},
        {"fence", "op", fence_seqcst},
    };
    lm_probes(SUITE, probes, sizeof probes / sizeof *probes);
    if (lm_wants(&a, "single_thread"))
        single_thread(&a);
    if (lm_wants(&a, "contended_add"))
        contended_add(&a);
    return lm_finish();
}
