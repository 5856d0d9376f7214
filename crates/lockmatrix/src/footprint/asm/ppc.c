#include "common.h"
int main(void) {
  long *p = word; long t = 0; 
  mark(2);
  __asm__ volatile(
    "sync\n lwsync\n isync\n hwsync\n sync 0\n sync 1\n eieio\n ptesync\n"
    "lwarx %0,0,%1\n stwcx. %0,0,%1\n ldarx %0,0,%1\n stdcx. %0,0,%1\n"
    "lbarx %0,0,%1\n stbcx. %0,0,%1\n lharx %0,0,%1\n sthcx. %0,0,%1\n lwarx %0,0,%1,1\n"
    "ld %0,0(%1)\n std %0,0(%1)\n"
    : "+&r"(t) : "b"(p) : "memory", "cr0");
  mark(1);
  return 0;
}
