// CCPUFeatures: what the processor and the operating system let FrameKit's kernels use, read
// once at start-up (CPUID and XGETBV, which Swift cannot issue). Every symbol is prefixed `ccpu_`.
#ifndef CCPU_FEATURES_H
#define CCPU_FEATURES_H

/// 1 when AVX2 instructions may run: the CPU has AVX, AVX2 and OSXSAVE, and the OS saves the
/// YMM registers (XCR0 bits 1 and 2). 0 otherwise, and on every processor that is not x86-64.
int ccpu_avx2_usable(void);

#endif
