#define _GNU_SOURCE
#include "CCPUFeatures.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <stdint.h>

int ccpu_avx2_usable(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const unsigned osxsave = 1u << 27, avx = 1u << 28;
    if ((c & osxsave) == 0 || (c & avx) == 0) return 0;
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6) != 6) return 0; // the OS does not save XMM and YMM state
    if (__get_cpuid_max(0, 0) < 7) return 0;
    __cpuid_count(7, 0, a, b, c, d);
    return (b & (1u << 5)) != 0; // AVX2
}
#else
int ccpu_avx2_usable(void) { return 0; }
#endif

#if defined(__linux__)
#include <sched.h>

int ccpu_affinity_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return CPU_COUNT(&set);
}
#else
int ccpu_affinity_count(void) { return 0; }
#endif
