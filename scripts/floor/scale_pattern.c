// A lower bound for scale-4tib's memory traffic on this machine: per host write one
// random read-modify-write of a 4 GiB l2p (u32 x 2^30), one random valid-bitmap word
// (128 MiB) and one random per-block count (4 M blocks x u32 = 16 MiB); per GC move
// (WAF - 1 = 6.13 per write: 613 moves per 100 writes) one random l2p store. Every
// random line is prefetched D items ahead; no victim choice, no p2l, no buckets.
// Needs 4.2 GiB. docs/performance.md ("scale-4tib's memory floor") has the figures.
//   gcc -O2 -o /tmp/scale_pattern scripts/floor/scale_pattern.c && /tmp/scale_pattern 50000000
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
static uint64_t s = 0x9E3779B97F4A7C15ULL;
static inline uint64_t xs(void){ s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }
static void *big(size_t b){ void *p = mmap(0, b, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0); madvise(p, b, MADV_HUGEPAGE); return p; }
int main(int argc, char **argv){
  const size_t n = (size_t)1 << 30; long writes = atol(argv[1]); const int D = 16;
  uint32_t *l2p = big(n*4); uint64_t *bits = big(n/8); uint32_t *cnt = big((n>>8)*4);
  for (size_t i = 0; i < n; i++) l2p[i] = (uint32_t)(xs() & (n-1));
  for (size_t i = 0; i < n/64; i++) bits[i] = ~0ULL;
  for (size_t i = 0; i < (n>>8); i++) cnt[i] = 256;
  uint64_t hr[64], mr[64];
  for (int i = 0; i < 64; i++) { hr[i] = xs() & (n-1); mr[i] = xs() & (n-1); }
  struct timespec a, b; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  uint32_t frontier = 0; long m = 0; uint64_t acc = 0;
  for (long i = 0; i < writes; i++) {
    uint64_t lpn = hr[i & 63]; hr[i & 63] = xs() & (n-1);
    __builtin_prefetch(&l2p[hr[(i + D) & 63]], 1);
    { uint32_t o4 = l2p[hr[(i + 4) & 63]]; __builtin_prefetch(&bits[o4 >> 6], 1); __builtin_prefetch(&cnt[o4 >> 8], 1); }
    uint32_t old = l2p[lpn]; l2p[lpn] = frontier++;
    bits[old >> 6] &= ~(1ULL << (old & 63)); cnt[old >> 8]--;
    acc += old;
    for (long k = (i * 613) / 100; k < ((i + 1) * 613) / 100; k++, m++) {
      uint64_t mp = mr[m & 63]; mr[m & 63] = xs() & (n-1);
      __builtin_prefetch(&l2p[mr[(m + D) & 63]], 1);
      l2p[mp] = frontier++;
    }
  }
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
  double sec = (b.tv_sec-a.tv_sec) + (b.tv_nsec-a.tv_nsec)/1e9;
  printf("%ld writes, %ld moves: %.2f s CPU, %.1f ns/write, %.1f ns/random access; x1.01e9 writes = %.0f s (acc %lu)\n",
         writes, m, sec, sec*1e9/writes, sec*1e9/(writes*3+m), sec/writes*1.0100e9, (unsigned long)acc);
}
