#include "common.h"
int main(void) {
  long *p = word; long t = 0, u = 1;
  mark(2);
  __asm__ volatile(
    "fence rw,rw\n fence r,rw\n fence rw,w\n fence r,r\n fence w,w\n fence iorw,iorw\n fence.tso\n fence.i\n fence\n"
    "lr.w %0,(%2)\n sc.w %0,%1,(%2)\n lr.w.aq %0,(%2)\n sc.w.rl %0,%1,(%2)\n lr.d.aqrl %0,(%2)\n sc.d.aqrl %0,%1,(%2)\n"
    "amoswap.w.aq %0,%1,(%2)\n amoadd.d %0,%1,(%2)\n amoor.w.aqrl %0,%1,(%2)\n amoand.d.rl %0,%1,(%2)\n amomaxu.w %0,%1,(%2)\n"
    "ld %0,0(%2)\n"
    : "+&r"(t) : "r"(u), "r"(p) : "memory");
  mark(1);
  return 0;
}
