#include <unistd.h>
#include <sys/syscall.h>
#include <stdint.h>
static long word[4] __attribute__((aligned(16)));
static void mark(long phase) { syscall(4221, 0x4c4d4b52L, 1L, phase, -1L); }
