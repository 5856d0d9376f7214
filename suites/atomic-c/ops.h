/* The operations seed 000 compares, one out-of-line function per variant
 * (the benchmark calls each through a pointer, and each is a probe of the
 * static ordering footprint), as suites/atomic/src/ops does in Rust.
 *
 * "sync" is the fully ordered form (Linux's cmpxchg(), atomic_add_return(),
 * smp_mb()); "local" is the cheapest form still atomic against the same
 * CPU (local_cmpxchg(), local_add_return()). GCC's __atomic builtins give
 * both where they compile to what the kernel does; where they do not, the
 * kernel's own sequences are written out:
 * - x86: cmpxchg and xadd without the lock prefix;
 * - alpha: ldq_l/stq_c loops, with `mb` before and after for the fully
 *   ordered forms (arch/alpha/include/asm/cmpxchg.h, atomic.h, local.h). */
#ifndef LOCKMATRIX_ATOMIC_OPS_H
#define LOCKMATRIX_ATOMIC_OPS_H

/* A machine word: `long` is pointer-sized on every Linux ABI here. */
typedef unsigned long word_t;
/* Returns the previous value. */
typedef word_t (*cas_fn)(word_t *p, word_t old, word_t new_value);
/* Returns the new value. */
typedef word_t (*add_fn)(word_t *p, word_t v);

#define OP __attribute__((noinline, used))

OP static word_t cas_sync(word_t *p, word_t old, word_t new_value);
OP static word_t add_return_sync(word_t *p, word_t v);

#if defined(__alpha__)

/* Linux's ____cmpxchg. Linux moves the retry branch out of line (a
 * `br 1b` in `.subsection 2`); here it is in line, so the whole loop is in
 * the primitive's own function for the static footprint. */
#define ALPHA_CAS_LOOP                                                        \
    "1:	ldq_l %0,%5\n"                                                        \
    "	cmpeq %0,%3,%1\n"                                                     \
    "	beq %1,2f\n"                                                          \
    "	mov %4,%1\n"                                                          \
    "	stq_c %1,%2\n"                                                        \
    "	beq %1,1b\n"                                                          \
    "2:\n"

OP static word_t cas_local(word_t *p, word_t old, word_t new_value)
{
    word_t prev, cmp;
    __asm__ __volatile__(ALPHA_CAS_LOOP
                         : "=&r"(prev), "=&r"(cmp), "=m"(*p)
                         : "r"(old), "r"(new_value), "m"(*p)
                         : "memory");
    return prev;
}

OP static word_t cas_sync(word_t *p, word_t old, word_t new_value)
{
    word_t prev, cmp;
    __asm__ __volatile__("mb\n" /* smp_mb() before */
                         ALPHA_CAS_LOOP
                         "mb\n" /* smp_mb() after */
                         : "=&r"(prev), "=&r"(cmp), "=m"(*p)
                         : "r"(old), "r"(new_value), "m"(*p)
                         : "memory");
    return prev;
}

/* Linux's ATOMIC64_OP_RETURN (its retry in line, as above). */
#define ALPHA_ADD_LOOP                                                        \
    "1:	ldq_l %0,%1\n"                                                        \
    "	addq %0,%3,%2\n"                                                      \
    "	addq %0,%3,%0\n"                                                      \
    "	stq_c %0,%1\n"                                                        \
    "	beq %0,1b\n"

OP static word_t add_return_local(word_t *p, word_t v)
{
    word_t temp, result;
    __asm__ __volatile__(ALPHA_ADD_LOOP
                         : "=&r"(temp), "=m"(*p), "=&r"(result)
                         : "Ir"(v), "m"(*p)
                         : "memory");
    return result;
}

OP static word_t add_return_sync(word_t *p, word_t v)
{
    word_t temp, result;
    __asm__ __volatile__("mb\n" ALPHA_ADD_LOOP "mb\n"
                         : "=&r"(temp), "=m"(*p), "=&r"(result)
                         : "Ir"(v), "m"(*p)
                         : "memory");
    return result;
}

static const char CAS_LOCAL_NAME[] = "ldq_l/stq_c loop without mb";
static const char ADD_LOCAL_NAME[] = "ldq_l/addq/stq_c loop without mb";

#elif defined(__x86_64__) || defined(__i386__)

/* Without `lock` the read-modify-write is still one instruction: atomic
 * against interrupts and signals on this CPU, not against other CPUs. */
OP static word_t cas_local(word_t *p, word_t old, word_t new_value)
{
    word_t prev = old;
    __asm__ __volatile__("cmpxchg %2, %1" : "+a"(prev), "+m"(*p) : "r"(new_value) : "memory", "cc");
    return prev;
}

OP static word_t add_return_local(word_t *p, word_t v)
{
    word_t r = v;
    __asm__ __volatile__("xadd %0, %1" : "+r"(r), "+m"(*p) : : "memory", "cc");
    return r + v;
}

static const char CAS_LOCAL_NAME[] = "cmpxchg without lock prefix";
static const char ADD_LOCAL_NAME[] = "xadd without lock prefix";

#else

OP static word_t cas_local(word_t *p, word_t old, word_t new_value)
{
    __atomic_compare_exchange_n(p, &old, new_value, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return old;
}

OP static word_t add_return_local(word_t *p, word_t v)
{
    return __atomic_add_fetch(p, v, __ATOMIC_RELAXED);
}

static const char CAS_LOCAL_NAME[] = "relaxed __atomic_compare_exchange_n";
static const char ADD_LOCAL_NAME[] = "relaxed __atomic_add_fetch";

#endif

#if !defined(__alpha__)
/* SeqCst on success and failure: the fully ordered CAS, Linux's cmpxchg(). */
OP static word_t cas_sync(word_t *p, word_t old, word_t new_value)
{
    __atomic_compare_exchange_n(p, &old, new_value, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return old;
}

/* SeqCst: Linux's atomic_add_return(). */
OP static word_t add_return_sync(word_t *p, word_t v)
{
    return __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST);
}
#endif

/* SeqCst: the full barrier, Linux's smp_mb() (`mb` on alpha). */
OP static void fence_seqcst(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

#endif
