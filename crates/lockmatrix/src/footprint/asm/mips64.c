#include "common.h"
int main(void) {
  long *p = word; long t = 0;
  mark(2);
  __asm__ volatile(
    ".set push\n .set mips64r2\n sync\n sync 0x10\n sync 0x4\n sync 0x11\n sync 0x12\n sync 0x13\n"
    "ll %0,0(%1)\n sc %0,0(%1)\n"
#ifdef __mips64
    "lld %0,0(%1)\n scd %0,0(%1)\n"
#endif
    "lw %0,0(%1)\n .set pop\n"
    : "+&r"(t) : "r"(p) : "memory");
  mark(1);
  return 0;
}
