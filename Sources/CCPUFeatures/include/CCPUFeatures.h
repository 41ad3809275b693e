// CCPUFeatures: what the processor and the operating system let FrameKit use, read once at
// start-up: CPUID and XGETBV, which Swift cannot issue, and the affinity mask, whose glibc call
// Swift's Glibc module leaves out (it is a GNU extension). Every symbol is prefixed `ccpu_`.
#ifndef CCPU_FEATURES_H
#define CCPU_FEATURES_H

/// 1 when AVX2 instructions may run: the CPU has AVX, AVX2 and OSXSAVE, and the OS saves the
/// YMM registers (XCR0 bits 1 and 2). 0 otherwise, and on every processor that is not x86-64.
int ccpu_avx2_usable(void);

/// CPUs in the calling thread's affinity mask (sched_getaffinity; a process's threads inherit
/// it), or 0 where it cannot be read.
int ccpu_affinity_count(void);

#endif
