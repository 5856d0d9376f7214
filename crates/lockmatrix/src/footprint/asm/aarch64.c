#include "common.h"
int main(void) {
  long *p = word; long t, u; unsigned s;
  mark(2);
  __asm__ volatile(
    "dmb ish\n dmb ishld\n dmb ishst\n dmb sy\n dmb ld\n dsb sy\n dsb ish\n isb\n"
    "ldar %0, [%2]\n stlr %0, [%2]\n ldapr %0, [%2]\n ldarb %w0, [%2]\n stlrh %w0, [%2]\n"
    "ldaxr %0, [%2]\n stlxr %w1, %0, [%2]\n ldxr %0, [%2]\n stxr %w1, %0, [%2]\n ldaxp %0, %1, [%2]\n stlxp w3, %0, %1, [%2]\n"
    "cas %0, %1, [%2]\n casa %0, %1, [%2]\n casl %0, %1, [%2]\n casal %0, %1, [%2]\n casab %w0, %w1, [%2]\n casalh %w0, %w1, [%2]\n"
    "ldadd %0, %1, [%2]\n ldadda %0, %1, [%2]\n ldaddl %0, %1, [%2]\n ldaddal %0, %1, [%2]\n swp %0, %1, [%2]\n swpal %0, %1, [%2]\n swpa %0, %1, [%2]\n"
    "ldset %0, %1, [%2]\n ldclral %0, %1, [%2]\n ldeora %0, %1, [%2]\n stadd %0, [%2]\n stsetl %0, [%2]\n ldsmaxal %0, %1, [%2]\n"
    "ldr %0, [%2]\n str %0, [%2]\n"
    : "=&r"(t), "=&r"(u) : "r"(p) : "memory", "w3");
  mark(1);
  return 0;
}
