import CXNNPack
import Foundation
import FrameKit
import FrameTestSupport
import Synchronization
import Testing

/// The thread pool behind XNNPACK (CXNNPack's thread_pool.c, the pthreadpool calls): every item
/// of every grid shape run once with the right tile, and a waiting thread that sleeps instead
/// of spinning.
@Suite("FrameKit's thread pool behind XNNPACK")
struct ThreadPoolTests {
    /// Counts runs of each item of a grid, its tiles' coordinates and sizes checked against
    /// `range` and `tile` (an item is keyed by its start in each dimension).
    final class Grid: @unchecked Sendable { // runs: atomics, written from the pool's threads; the rest is immutable
        let range: [Int]
        let tile: [Int]
        let runs: UnsafeMutablePointer<Atomic<Int>>
        let count: Int
        let badTiles = Atomic<Int>(0)

        init(range: [Int], tile: [Int]) {
            self.range = range
            self.tile = tile
            count = range.reduce(1, *)
            runs = .allocate(capacity: count)
            for i in 0..<count { (runs + i).initialize(to: Atomic(0)) }
        }
        deinit { runs.deinitialize(count: count).deallocate() }

        /// One task call: its start in each dimension and the tile sizes of its tiled ones.
        func record(_ at: [Int], sizes: [Int?]) {
            var index = 0
            for d in 0..<range.count {
                let size = sizes[d] ?? 1
                let expected = min(tile[d], range[d] - at[d])
                if at[d] % tile[d] != 0 || size != expected { badTiles.add(1, ordering: .relaxed) }
                index = index * range[d] + at[d]
            }
            runs[index].add(1, ordering: .relaxed)
        }

        /// Items whose run count is not what it should be: one for a tile's first cell, none elsewhere.
        var wrong: Int {
            var wrong = badTiles.load(ordering: .relaxed)
            for index in 0..<count {
                var rest = index
                var isStart = true
                for d in (0..<range.count).reversed() {
                    if (rest % range[d]) % tile[d] != 0 { isStart = false }
                    rest /= range[d]
                }
                if runs[index].load(ordering: .relaxed) != (isStart ? 1 : 0) { wrong += 1 }
            }
            return wrong
        }
    }

    static func context(_ grid: Grid) -> UnsafeMutableRawPointer { Unmanaged.passUnretained(grid).toOpaque() }
    static func grid(_ context: UnsafeMutableRawPointer?) -> Grid { Unmanaged<Grid>.fromOpaque(context!).takeUnretainedValue() }

    /// Every shape XNNPACK calls, on a grid of awkward sizes (tiles that do not divide them).
    static func runAll(on pool: pthreadpool_t?) -> [String: Int] {
        var wrong: [String: Int] = [:]
        func check(_ name: String, _ range: [Int], _ tile: [Int], _ body: (UnsafeMutableRawPointer) -> Void) {
            let grid = Grid(range: range, tile: tile)
            body(context(grid))
            wrong[name] = grid.wrong
        }
        check("1d", [37], [1]) { c in
            pthreadpool_parallelize_1d(pool, { c, i in ThreadPoolTests.grid(c).record([i], sizes: [nil]) }, c, 37, 0)
        }
        check("1d_tile_1d", [37], [5]) { c in
            pthreadpool_parallelize_1d_tile_1d(pool, { c, i, t in ThreadPoolTests.grid(c).record([i], sizes: [t]) }, c, 37, 5, 0)
        }
        check("2d", [7, 9], [1, 1]) { c in
            pthreadpool_parallelize_2d(pool, { c, i, j in ThreadPoolTests.grid(c).record([i, j], sizes: [nil, nil]) }, c, 7, 9, 0)
        }
        check("2d_tile_1d", [7, 9], [1, 4]) { c in
            pthreadpool_parallelize_2d_tile_1d(
                pool, { c, i, j, tj in ThreadPoolTests.grid(c).record([i, j], sizes: [nil, tj]) }, c, 7, 9, 4, 0)
        }
        check("2d_tile_2d", [13, 9], [3, 4]) { c in
            pthreadpool_parallelize_2d_tile_2d(
                pool, { c, i, j, ti, tj in ThreadPoolTests.grid(c).record([i, j], sizes: [ti, tj]) }, c, 13, 9, 3, 4,
                UInt32(PTHREADPOOL_FLAG_DISABLE_DENORMALS))
        }
        check("3d", [3, 4, 5], [1, 1, 1]) { c in
            pthreadpool_parallelize_3d(
                pool, { c, i, j, k in ThreadPoolTests.grid(c).record([i, j, k], sizes: [nil, nil, nil]) }, c, 3, 4, 5, 0)
        }
        check("3d_tile_2d", [3, 7, 5], [1, 2, 3]) { c in
            pthreadpool_parallelize_3d_tile_2d(
                pool, { c, i, j, k, tj, tk in ThreadPoolTests.grid(c).record([i, j, k], sizes: [nil, tj, tk]) }, c, 3, 7, 5, 2, 3, 0)
        }
        check("4d", [2, 3, 4, 5], [1, 1, 1, 1]) { c in
            pthreadpool_parallelize_4d(
                pool, { c, i, j, k, l in ThreadPoolTests.grid(c).record([i, j, k, l], sizes: [nil, nil, nil, nil]) }, c, 2, 3, 4, 5, 0)
        }
        check("4d_tile_2d", [2, 3, 7, 5], [1, 1, 2, 3]) { c in
            pthreadpool_parallelize_4d_tile_2d(
                pool, { c, i, j, k, l, tk, tl in ThreadPoolTests.grid(c).record([i, j, k, l], sizes: [nil, nil, tk, tl]) }, c, 2, 3, 7, 5,
                2, 3, 0)
        }
        check("5d", [2, 2, 3, 2, 3], [1, 1, 1, 1, 1]) { c in
            pthreadpool_parallelize_5d(
                pool, { c, i, j, k, l, m in ThreadPoolTests.grid(c).record([i, j, k, l, m], sizes: [nil, nil, nil, nil, nil]) }, c, 2, 2, 3,
                2, 3, 0)
        }
        check("5d_tile_2d", [2, 2, 3, 7, 5], [1, 1, 1, 2, 4]) { c in
            pthreadpool_parallelize_5d_tile_2d(
                pool, { c, i, j, k, l, m, tl, tm in ThreadPoolTests.grid(c).record([i, j, k, l, m], sizes: [nil, nil, nil, tl, tm]) }, c, 2,
                2, 3, 7, 5,
                2, 4, 0)
        }
        check("6d_tile_2d", [2, 2, 2, 3, 7, 5], [1, 1, 1, 1, 3, 2]) { c in
            pthreadpool_parallelize_6d_tile_2d(
                pool,
                { c, i, j, k, l, m, n, tm, tn in ThreadPoolTests.grid(c).record([i, j, k, l, m, n], sizes: [nil, nil, nil, nil, tm, tn]) },
                c, 2, 2,
                2, 3, 7, 5, 3, 2, 0)
        }
        check("empty", [0], [1]) { c in
            pthreadpool_parallelize_1d(pool, { c, i in ThreadPoolTests.grid(c).record([i], sizes: [nil]) }, c, 0, 0)
        }
        return wrong
    }

    @Test("every item of every grid shape XNNPACK calls runs once, with its tile, on the caller alone and on 2-4 threads")
    func everyItemOnce() throws {
        #expect(Self.runAll(on: nil).values.allSatisfy { $0 == 0 }, "\(Self.runAll(on: nil))")
        for threads in [1, 2, 3, 4] {
            let pool = try #require(pthreadpool_create(threads))
            defer { pthreadpool_destroy(pool) }
            #expect(pthreadpool_get_threads_count(pool) == threads)
            // Many jobs back to back: a worker that wakes late must take nothing of the next.
            for _ in 0..<50 {
                let wrong = Self.runAll(on: pool)
                #expect(wrong.values.allSatisfy { $0 == 0 }, "\(threads) threads: \(wrong)")
            }
        }
    }

    /// The pool's caller and a worker holding an item: what the caller's thread spent while it
    /// waited for the worker.
    final class HeldItem: Sendable {
        let caller = pthread_self()
        let workerTookOne = Atomic<Bool>(false)
    }

    @Test("a thread that waits for another sleeps: the caller spends almost no CPU while a worker holds an item 300 ms")
    func waitingSleeps() throws {
        let pool = try #require(pthreadpool_create(2))
        defer { pthreadpool_destroy(pool) }
        let held = HeldItem()
        var start = timespec()
        var end = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start)
        pthreadpool_parallelize_1d(
            pool,
            { context, _ in
                let held = Unmanaged<HeldItem>.fromOpaque(context!).takeUnretainedValue()
                if pthread_equal(pthread_self(), held.caller) == 0 {
                    // The worker: the first item it takes, it holds (the caller meanwhile runs
                    // the rest and waits for this one).
                    if !held.workerTookOne.exchange(true, ordering: .acquiringAndReleasing) { usleep(300_000) }
                } else {
                    // The caller leaves items to the worker until it has taken one, blocking
                    // (not spinning) on its own: at most one frame of scheduling.
                    while !held.workerTookOne.load(ordering: .acquiring) { usleep(1_000) }
                }
            }, Unmanaged.passUnretained(held).toOpaque(), 64, 0)
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end)
        let cpu = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
        let workerTookOne = held.workerTookOne.load(ordering: .relaxed)
        #expect(workerTookOne)
        // pthreadpool spins a million pauses first (tens of milliseconds); this pool a few microseconds.
        #expect(cpu < 0.010, "the caller used \(cpu * 1000) ms of CPU waiting 300 ms for a worker")
    }

    @Test("XNNPACK's calls reach FrameKit's pool, not libpthreadpool's, on one thread and on two")
    func xnnpackUsesThisPool() throws {
        let model = try XNNPackShimTests.Model(try FaceDetector().modelURL.path)
        let (nhwc, _) = try XNNPackShimTests.input(width: 64, height: 64)
        for threads: Int32 in [1, 2] {
            let before = fkxnn_pool_jobs_run()
            _ = try XNNPackShimTests.forward(model, nhwc: nhwc, width: 64, height: 64, threads: threads)
            // CenterFace's ~70 operators, each one job (the count is process-wide: other tests
            // may add theirs, never take any away).
            #expect(fkxnn_pool_jobs_run() - before >= 50, "\(threads) threads")
        }
    }
}

extension ThreadPoolTests {
    /// Counts each item's runs of the job at hand (a job of `count` items).
    final class Tally: @unchecked Sendable { // runs: atomics, written from the pool's threads
        let runs = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: 64)
        init() { for i in 0..<64 { (runs + i).initialize(to: Atomic(0)) } }
        deinit { runs.deinitialize(count: 64).deallocate() }
    }

    @Test("jobs of few chunks then many, back to back: a worker finishing the last job's chunk never runs the next job's")
    func smallThenLargeJobs() throws {
        // More threads than cores: a worker is often preempted between its last chunk and its
        // next claim, which is where the race was.
        for threads in [2, 8] {
            let pool = try #require(pthreadpool_create(threads))
            defer { pthreadpool_destroy(pool) }
            let tally = Tally()
            var wrong = 0
            // A 2-item job leaves the workers' last claim racing the caller's set-up of the
            // 64-item job after it (more chunks: a stale claim below the new limit).
            for round in 0..<100_000 {
                let count = round % 2 == 0 ? 2 : 64
                for i in 0..<count { tally.runs[i].store(0, ordering: .relaxed) }
                pthreadpool_parallelize_1d(
                    pool, { c, i in Unmanaged<Tally>.fromOpaque(c!).takeUnretainedValue().runs[i].add(1, ordering: .relaxed) },
                    Unmanaged.passUnretained(tally).toOpaque(), count, 0)
                for i in 0..<count where tally.runs[i].load(ordering: .relaxed) != 1 { wrong += 1 }
            }
            #expect(wrong == 0, "\(threads) threads: \(wrong) items run other than once")
        }
    }
}
