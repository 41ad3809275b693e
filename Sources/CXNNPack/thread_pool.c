// FrameKit's thread pool behind XNNPACK: the pthreadpool interface (the calls libXNNPACK makes,
// declared by Debian's pthreadpool.h) implemented here, so that a thread with nothing to do
// sleeps instead of spinning. Defined in the program, these symbols are the ones the dynamic
// linker binds libXNNPACK's calls to (a program's own definitions come first in the lookup
// order); libpthreadpool is not linked.
//
// Why: pthreadpool's threads spin up to a million pauses (tens of milliseconds) waiting for
// each other, after every one of a network's ~70 operators. With two threads on one core (a
// Slurm task, a CPU quota) or beside other work, the spinning thread holds the core the other
// needs: a 90-frame 720p clip took 25.9 s of CPU pinned to one core against 1.2 s idle.
//
// How: a job is a grid of items (the pthreadpool call's tiles), cut into chunks that every
// thread, the caller included, claims from one counter; a thread that wakes late takes none,
// and the caller waits only for chunks already claimed. Waiting spins at most kSpinPauses
// (a few microseconds) and then sleeps on a futex.
#define _GNU_SOURCE
#include <pthreadpool.h>

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define FK_PAUSE() _mm_pause()
#else
#define FK_PAUSE() atomic_signal_fence(memory_order_seq_cst)
#endif

#include "CXNNPack.h"

enum {
    kSpinPauses = 200,     // ~1-10 us by processor: past it, a waiting thread sleeps
    kChunksPerThread = 8,  // a late or descheduled thread leaves at most this share unclaimed
    kMaxDims = 6,
};

// Which of pthreadpool's task signatures a job calls (the grid's rank and its tiled dimensions).
typedef enum {
    task_1d, task_1d_tile_1d, task_2d, task_2d_tile_1d, task_2d_tile_2d, task_3d, task_3d_tile_2d, task_4d,
    task_4d_tile_2d, task_5d, task_5d_tile_2d, task_6d_tile_2d,
} task_kind;

typedef struct {
    task_kind kind;
    int rank;  // dimensions of the grid (the kind's; the rest are 1)
    void *function;
    void *context;
    uint32_t flags;
    size_t range[kMaxDims], tile[kMaxDims];  // tile 1 for an untiled dimension
    size_t tiles[kMaxDims];                  // ceil(range / tile)
    size_t items, chunk, chunks;
} job;

struct pthreadpool {
    size_t threads;  // the caller included
    pthread_t *workers;
    pthread_mutex_t call;  // one job at a time, as pthreadpool promises
    job current;           // written by the caller before `cursor`; read only by a thread holding a claimed chunk
    _Atomic uint64_t cursor;    // (generation << 32) | the next chunk to claim
    _Atomic uint32_t limit;     // the current job's chunks (atomic: a late worker reads it before it claims)
    _Atomic uint32_t generation;  // a worker's futex: a new job, or `stopping`
    _Atomic uint32_t pending;     // the caller's futex: chunks claimed or not yet claimed, not done
    _Atomic uint32_t sleepers;    // workers asleep (or about to be) on `generation`
    _Atomic bool stopping;
};

static _Atomic uint64_t jobs_run = 0;

static long futex(_Atomic uint32_t *word, int op, uint32_t value) {
    return syscall(SYS_futex, (uint32_t *)word, op | FUTEX_PRIVATE_FLAG, value, NULL, NULL, 0);
}

// Runs item `index` of the grid: its coordinates, the tiled ones as a start and a size.
static void run_item(const job *j, size_t index) {
    size_t at[kMaxDims], size[kMaxDims];
    for (int d = j->rank - 1; d >= 0; --d) {
        const size_t t = index % j->tiles[d];
        index /= j->tiles[d];
        at[d] = t * j->tile[d];
        const size_t left = j->range[d] - at[d];
        size[d] = left < j->tile[d] ? left : j->tile[d];
    }
    void *c = j->context;
    switch (j->kind) {
    case task_1d: ((pthreadpool_task_1d_t)j->function)(c, at[0]); break;
    case task_1d_tile_1d: ((pthreadpool_task_1d_tile_1d_t)j->function)(c, at[0], size[0]); break;
    case task_2d: ((pthreadpool_task_2d_t)j->function)(c, at[0], at[1]); break;
    case task_2d_tile_1d: ((pthreadpool_task_2d_tile_1d_t)j->function)(c, at[0], at[1], size[1]); break;
    case task_2d_tile_2d: ((pthreadpool_task_2d_tile_2d_t)j->function)(c, at[0], at[1], size[0], size[1]); break;
    case task_3d: ((pthreadpool_task_3d_t)j->function)(c, at[0], at[1], at[2]); break;
    case task_3d_tile_2d:
        ((pthreadpool_task_3d_tile_2d_t)j->function)(c, at[0], at[1], at[2], size[1], size[2]);
        break;
    case task_4d: ((pthreadpool_task_4d_t)j->function)(c, at[0], at[1], at[2], at[3]); break;
    case task_4d_tile_2d:
        ((pthreadpool_task_4d_tile_2d_t)j->function)(c, at[0], at[1], at[2], at[3], size[2], size[3]);
        break;
    case task_5d: ((pthreadpool_task_5d_t)j->function)(c, at[0], at[1], at[2], at[3], at[4]); break;
    case task_5d_tile_2d:
        ((pthreadpool_task_5d_tile_2d_t)j->function)(c, at[0], at[1], at[2], at[3], at[4], size[3], size[4]);
        break;
    case task_6d_tile_2d:
        ((pthreadpool_task_6d_tile_2d_t)j->function)(c, at[0], at[1], at[2], at[3], at[4], at[5], size[4], size[5]);
        break;
    }
}

static void run_chunk(const job *j, size_t chunk) {
    const size_t first = chunk * j->chunk;
    const size_t end = first + j->chunk < j->items ? first + j->chunk : j->items;
#if defined(__x86_64__) || defined(__i386__)
    const unsigned saved = _mm_getcsr();
    if (j->flags & PTHREADPOOL_FLAG_DISABLE_DENORMALS) _mm_setcsr(saved | 0x8040);  // FTZ and DAZ
#endif
    for (size_t i = first; i < end; ++i) run_item(j, i);
#if defined(__x86_64__) || defined(__i386__)
    if (j->flags & PTHREADPOOL_FLAG_DISABLE_DENORMALS) _mm_setcsr(saved);
#endif
}

// Claims the next chunk of job `generation`; false once it has none left or is no longer current.
static bool claim(struct pthreadpool *pool, uint32_t generation, uint32_t *chunk) {
    uint64_t c = atomic_load(&pool->cursor);
    for (;;) {
        // A late worker may read the next job's limit here; its exchange then fails, as the
        // cursor moved on before the limit changed, and it sees the generation change.
        if ((uint32_t)(c >> 32) != generation || (uint32_t)c >= atomic_load(&pool->limit)) return false;
        if (atomic_compare_exchange_weak(&pool->cursor, &c, c + 1)) {
            *chunk = (uint32_t)c;
            return true;
        }
    }
}

// Claims and runs chunks of job `generation` until none is left; true if this thread ran the
// job's last chunk.
static bool work(struct pthreadpool *pool, uint32_t generation) {
    uint32_t chunk;
    bool last = false;
    while (claim(pool, generation, &chunk)) {
        // A claimed chunk keeps `pending` above zero, so the caller has not moved on: `current`
        // is this generation's until the decrement below.
        run_chunk(&pool->current, chunk);
        last = atomic_fetch_sub(&pool->pending, 1) == 1;
    }
    return last;
}

static void *worker_main(void *argument) {
    struct pthreadpool *pool = argument;
    // Generation 0 is the pool's before its first job: a worker that starts after a job was
    // posted still joins it (its claims tell whether it is still current).
    uint32_t seen = 0;
    for (;;) {
        uint32_t now = atomic_load(&pool->generation);
        for (int i = 0; i < kSpinPauses && now == seen; ++i) {
            FK_PAUSE();
            now = atomic_load(&pool->generation);
        }
        while (now == seen) {
            atomic_fetch_add(&pool->sleepers, 1);
            futex(&pool->generation, FUTEX_WAIT, seen);
            atomic_fetch_sub(&pool->sleepers, 1);
            now = atomic_load(&pool->generation);
        }
        seen = now;
        if (atomic_load(&pool->stopping)) return NULL;
        if (work(pool, seen)) futex(&pool->pending, FUTEX_WAKE, 1);
    }
}

static size_t usable_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return (size_t)CPU_COUNT(&set);
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (size_t)online : 1;
}

pthreadpool_t pthreadpool_create(size_t threads_count) {
    if (threads_count == 0) threads_count = usable_cpus();
    if (threads_count > 256) threads_count = 256;
    struct pthreadpool *pool = calloc(1, sizeof *pool);
    if (pool == NULL) return NULL;
    pool->threads = threads_count;
    pthread_mutex_init(&pool->call, NULL);
    if (threads_count > 1) {
        pool->workers = calloc(threads_count - 1, sizeof(pthread_t));
        if (pool->workers == NULL) {
            free(pool);
            return NULL;
        }
        for (size_t i = 0; i + 1 < threads_count; ++i) {
            if (pthread_create(&pool->workers[i], NULL, worker_main, pool) != 0) {
                pool->threads = i + 1;  // the workers started so far are joined by destroy
                pthreadpool_destroy(pool);
                return NULL;
            }
        }
    }
    return pool;
}

size_t pthreadpool_get_threads_count(pthreadpool_t pool) { return pool == NULL ? 1 : pool->threads; }

void pthreadpool_destroy(pthreadpool_t pool) {
    if (pool == NULL) return;
    atomic_store(&pool->stopping, true);
    atomic_fetch_add(&pool->generation, 1);
    futex(&pool->generation, FUTEX_WAKE, INT_MAX);
    for (size_t i = 0; i + 1 < pool->threads; ++i) pthread_join(pool->workers[i], NULL);
    pthread_mutex_destroy(&pool->call);
    free(pool->workers);
    free(pool);
}

// Runs a job: on the caller alone without a pool (or with nothing to share), else on every
// thread of the pool, returning once each item has run.
static void parallelize(struct pthreadpool *pool, job j) {
    j.items = 1;
    for (int d = 0; d < kMaxDims; ++d) {
        if (j.tile[d] == 0) j.tile[d] = 1;
        if (j.range[d] == 0) return;  // an empty grid: nothing to run
        j.tiles[d] = (j.range[d] + j.tile[d] - 1) / j.tile[d];
        j.items *= j.tiles[d];
    }
    atomic_fetch_add_explicit(&jobs_run, 1, memory_order_relaxed);
    if (pool == NULL || pool->threads < 2 || j.items < 2) {
        j.chunk = j.items;
        run_chunk(&j, 0);
        return;
    }
    size_t chunks = pool->threads * kChunksPerThread;
    if (chunks > j.items) chunks = j.items;
    j.chunk = (j.items + chunks - 1) / chunks;
    j.chunks = (j.items + j.chunk - 1) / j.chunk;

    pthread_mutex_lock(&pool->call);
    // The cursor moves to the new generation first: a worker still claiming in the last job
    // (it ran that job's last chunk and is looking for another) must fail before `limit`
    // grows, or it would take a chunk below the new limit, under the old generation, and run
    // the new job's chunk twice (20,000 jobs of 2 then 64 items on 8 threads hung that way).
    const uint32_t generation = atomic_load(&pool->generation) + 1;
    atomic_store(&pool->cursor, (uint64_t)generation << 32);
    pool->current = j;
    atomic_store(&pool->pending, (uint32_t)j.chunks);
    atomic_store(&pool->limit, (uint32_t)j.chunks);
    atomic_store(&pool->generation, generation);  // workers join from here
    if (atomic_load(&pool->sleepers) > 0) futex(&pool->generation, FUTEX_WAKE, INT_MAX);

    work(pool, generation);
    uint32_t left = atomic_load(&pool->pending);
    for (int i = 0; i < kSpinPauses && left != 0; ++i) {
        FK_PAUSE();
        left = atomic_load(&pool->pending);
    }
    while (left != 0) {
        futex(&pool->pending, FUTEX_WAIT, left);
        left = atomic_load(&pool->pending);
    }
    pthread_mutex_unlock(&pool->call);
}

// A grid of `rank` dimensions: `range` each, cut in tiles of `tile` (1: untiled).
static void grid(struct pthreadpool *pool, task_kind kind, void *function, void *context, uint32_t flags, int rank,
                 const size_t *range, const size_t *tile) {
    job j = {.kind = kind, .rank = rank, .function = function, .context = context, .flags = flags};
    for (int d = 0; d < kMaxDims; ++d) {
        j.range[d] = d < rank ? range[d] : 1;
        j.tile[d] = d < rank ? tile[d] : 1;
    }
    parallelize(pool, j);
}

void pthreadpool_parallelize_1d(pthreadpool_t pool, pthreadpool_task_1d_t f, void *c, size_t i, uint32_t flags) {
    grid(pool, task_1d, (void *)f, c, flags, 1, (size_t[]){i}, (size_t[]){1});
}

void pthreadpool_parallelize_1d_tile_1d(pthreadpool_t pool, pthreadpool_task_1d_tile_1d_t f, void *c, size_t i, size_t ti,
                                        uint32_t flags) {
    grid(pool, task_1d_tile_1d, (void *)f, c, flags, 1, (size_t[]){i}, (size_t[]){ti});
}

void pthreadpool_parallelize_2d(pthreadpool_t pool, pthreadpool_task_2d_t f, void *c, size_t i, size_t j, uint32_t flags) {
    grid(pool, task_2d, (void *)f, c, flags, 2, (size_t[]){i, j}, (size_t[]){1, 1});
}

void pthreadpool_parallelize_2d_tile_1d(pthreadpool_t pool, pthreadpool_task_2d_tile_1d_t f, void *c, size_t i, size_t j,
                                        size_t tj, uint32_t flags) {
    grid(pool, task_2d_tile_1d, (void *)f, c, flags, 2, (size_t[]){i, j}, (size_t[]){1, tj});
}

void pthreadpool_parallelize_2d_tile_2d(pthreadpool_t pool, pthreadpool_task_2d_tile_2d_t f, void *c, size_t i, size_t j,
                                        size_t ti, size_t tj, uint32_t flags) {
    grid(pool, task_2d_tile_2d, (void *)f, c, flags, 2, (size_t[]){i, j}, (size_t[]){ti, tj});
}

void pthreadpool_parallelize_3d(pthreadpool_t pool, pthreadpool_task_3d_t f, void *c, size_t i, size_t j, size_t k,
                                uint32_t flags) {
    grid(pool, task_3d, (void *)f, c, flags, 3, (size_t[]){i, j, k}, (size_t[]){1, 1, 1});
}

void pthreadpool_parallelize_3d_tile_2d(pthreadpool_t pool, pthreadpool_task_3d_tile_2d_t f, void *c, size_t i, size_t j,
                                        size_t k, size_t tj, size_t tk, uint32_t flags) {
    grid(pool, task_3d_tile_2d, (void *)f, c, flags, 3, (size_t[]){i, j, k}, (size_t[]){1, tj, tk});
}

void pthreadpool_parallelize_4d(pthreadpool_t pool, pthreadpool_task_4d_t f, void *c, size_t i, size_t j, size_t k, size_t l,
                                uint32_t flags) {
    grid(pool, task_4d, (void *)f, c, flags, 4, (size_t[]){i, j, k, l}, (size_t[]){1, 1, 1, 1});
}

void pthreadpool_parallelize_4d_tile_2d(pthreadpool_t pool, pthreadpool_task_4d_tile_2d_t f, void *c, size_t i, size_t j,
                                        size_t k, size_t l, size_t tk, size_t tl, uint32_t flags) {
    grid(pool, task_4d_tile_2d, (void *)f, c, flags, 4, (size_t[]){i, j, k, l}, (size_t[]){1, 1, tk, tl});
}

void pthreadpool_parallelize_5d(pthreadpool_t pool, pthreadpool_task_5d_t f, void *c, size_t i, size_t j, size_t k, size_t l,
                                size_t m, uint32_t flags) {
    grid(pool, task_5d, (void *)f, c, flags, 5, (size_t[]){i, j, k, l, m}, (size_t[]){1, 1, 1, 1, 1});
}

void pthreadpool_parallelize_5d_tile_2d(pthreadpool_t pool, pthreadpool_task_5d_tile_2d_t f, void *c, size_t i, size_t j,
                                        size_t k, size_t l, size_t m, size_t tl, size_t tm, uint32_t flags) {
    grid(pool, task_5d_tile_2d, (void *)f, c, flags, 5, (size_t[]){i, j, k, l, m}, (size_t[]){1, 1, 1, tl, tm});
}

void pthreadpool_parallelize_6d_tile_2d(pthreadpool_t pool, pthreadpool_task_6d_tile_2d_t f, void *c, size_t i, size_t j,
                                        size_t k, size_t l, size_t m, size_t n, size_t tm, size_t tn, uint32_t flags) {
    grid(pool, task_6d_tile_2d, (void *)f, c, flags, 6, (size_t[]){i, j, k, l, m, n}, (size_t[]){1, 1, 1, 1, tm, tn});
}

uint64_t fkxnn_pool_jobs_run(void) { return atomic_load_explicit(&jobs_run, memory_order_relaxed); }
