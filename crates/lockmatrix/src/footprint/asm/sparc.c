#include "common.h"
int main(void) {
  long *p = word; long t = 0, u = 1;
  mark(2);
  __asm__ volatile(
    "membar #LoadLoad\n membar #StoreLoad\n membar #LoadLoad|#LoadStore|#StoreLoad|#StoreStore\n membar #StoreStore\n membar #LoadStore|#StoreStore\n membar #Sync\n membar #MemIssue|#Lookaside\n stbar\n"
    "cas [%2],%1,%0\n casx [%2],%1,%0\n swap [%2],%0\n ldstub [%2],%0\n casa [%2] 0x80,%1,%0\n casxa [%2] 0x80,%1,%0\n"
    "ldx [%2],%0\n"
    : "+&r"(t) : "r"(u), "r"(p) : "memory");
  mark(1);
  return 0;
}
