#include "common.h"
int main(void) {
  long *p = word; long t = 0, u = 1;
  mark(2);
  __asm__ volatile(
    "mb\n wmb\n"
    "ldq_l %0,0(%2)\n stq_c %1,0(%2)\n ldl_l %0,8(%2)\n stl_c %1,8(%2)\n"
    "ldq %0,0(%2)\n trapb\n"
    : "+&r"(t), "+&r"(u) : "r"(p) : "memory");
  mark(1);
  return 0;
}
