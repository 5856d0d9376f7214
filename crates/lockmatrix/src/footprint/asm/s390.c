#include "common.h"
int main(void) {
  long *p = word; long t = 0, u = 1; int w = 0;
  mark(2);
  __asm__ volatile(
    "bcr 14,0\n bcr 15,0\n"
    "cs %3,%4,0(%2)\n csg %0,%1,0(%2)\n csy %3,%4,0(%2)\n cdsg %%r4,%%r6,0(%2)\n laa %3,%4,0(%2)\n laag %0,%1,0(%2)\n lan %3,%4,0(%2)\n"
    "lg %0,0(%2)\n"
    : "+&r"(t) , "+&r"(u) : "a"(p), "r"(w), "r"(w) : "memory", "r4","r5","r6","r7", "cc");
  mark(1);
  return 0;
}
