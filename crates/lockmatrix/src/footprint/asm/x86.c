#include "common.h"
int main(void) {
  long *p = word; long t = 0, u = 1;
  mark(2);
  __asm__ volatile(
    "mfence\n lfence\n sfence\n"
    "lock cmpxchg %1,(%2)\n lock xadd %0,(%2)\n xchg %0,(%2)\n xchg %0,%1\n lock addl $1,(%2)\n lock orq $0,(%2)\n lock bts $1,(%2)\n lock incl (%2)\n lock decq (%2)\n cmpxchg %1,(%2)\n xadd %0,(%2)\n"
#ifdef __x86_64__
    "lock cmpxchg16b (%2)\n lock addl $0,-8(%%rsp)\n"
#else
    "lock cmpxchg8b (%2)\n lock addl $0,-4(%%esp)\n"
#endif
    "mov (%2),%0\n pause\n"
    : "+&a"(t), "+&r"(u) : "r"(p) : "memory"
#ifdef __x86_64__
    , "rdx", "rcx", "rbx"
#else
    , "edx", "ecx"
#endif
    );
  mark(1);
  return 0;
}
