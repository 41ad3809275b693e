import CXNNPack
import Foundation
import FrameCore
import Synchronization

/// CenterFace's ONNX file, read once per process and shared by every ``FaceDetector`` that
/// loads the same file: a fleet's trackers hold one model, not one each.
///
/// What a pass needs besides the model is taken by the call and given back: a network for its
/// input size (XNNPACK packs the weights and plans the activations and indirection buffers per
/// input size: ~41 MB at 640x384, ~9 MB at 320x192) and a workspace (the input tensor, the
/// outputs, the converted and shrunk frame). At most ``concurrentCalls`` calls run at once
/// (one per CPU the process may use: more networks at once than CPUs finish no sooner, and
/// each would hold its own memory); a call beyond them waits for one to end. So N cameras hold
/// at most that many workspaces and, per input size, as many networks as ran that size at
/// once; idle networks beyond ``networksKept`` are freed, the least recently used first.
package final class CenterFaceModel: Sendable {
    let path: String
    private let model: ModelHandle
    private let pool = Mutex(Pool())
    /// A call's turn: taken for the whole call, given back when it ends.
    private let turns: DispatchSemaphore
    package let concurrentCalls: Int
    /// The graph's outputs by name, in CenterFace's order (heatmap, box size, offset, landmarks).
    let outputNames: [String]
    static let outputChannels: [Int32] = [1, 2, 2, 10]

    /// Idle networks kept across every size: a tracker's passes alternate between a handful of
    /// sizes (the frame, a tile, an edge strip, a closer look).
    package static let networksKept = 6

    private struct Pool {
        var networks: [CenterFaceNetwork] = [] // idle, the most recently used last
        var workspaces: [CenterFaceWorkspace] = []
        var networksMade = 0
    }

    /// Models by file (path and identity), held weakly: the last detector gone frees its model.
    private static let loaded = Mutex<[FileKey: WeakModel]>([:])

    /// Shipped files whose digest this process has checked (by the same identity as `loaded`):
    /// a file checked once is not hashed again when a later detector loads it anew (a bench's
    /// runs, a batch's inputs), while a file replaced since has another identity and is checked.
    /// Taken only inside `loaded`'s lock.
    private static let digestsChecked = Mutex<Set<FileKey>>([])

    private struct FileKey: Hashable {
        var path: String
        var device: UInt64, inode: UInt64, size: Int64, modified: Int, modifiedNanoseconds: Int

        /// The file at `path` as it is now; nil (errno set) if it cannot be read.
        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            self.path = path
            (device, inode, size) = (UInt64(info.st_dev), UInt64(info.st_ino), Int64(info.st_size))
            (modified, modifiedNanoseconds) = (info.st_mtim.tv_sec, info.st_mtim.tv_nsec)
        }
    }

    private struct WeakModel {
        weak var model: CenterFaceModel?
    }

    /// The model at `path`, loaded now unless a live detector already loaded the same file
    /// (same path, device, inode, size and modification time: a file replaced is read again).
    /// `shippedAs`: the file was found by that name, as the shipped model, and is checked against
    /// its SHA-256 when it is read.
    static func shared(path: String, shippedAs shipped: String? = nil) throws(FaceDetectorError) -> CenterFaceModel {
        guard let key = FileKey(path: path) else {
            throw .modelLoadFailed(path: path, message: String(cString: strerror(errno)))
        }
        // Loading under the lock: a second tracker asking at the same moment waits for this
        // load (~50 ms) rather than making a copy of its own.
        return try loaded.withLock { (models) throws(FaceDetectorError) -> CenterFaceModel in
            if let model = models[key]?.model { return model }
            if let shipped, !digestsChecked.withLock({ $0.contains(key) }) {
                try checkShippedDigest(URL(fileURLWithPath: path), named: shipped)
                // Remembered only if the file is still the one hashed (not replaced meanwhile).
                if FileKey(path: path) == key { digestsChecked.withLock { _ = $0.insert(key) } }
            }
            let model = try CenterFaceModel(path: path)
            models = models.filter { $0.value.model != nil }
            models[key] = WeakModel(model: model)
            return model
        }
    }

    private init(path: String) throws(FaceDetectorError) {
        var message = [CChar](repeating: 0, count: 512)
        var raw: OpaquePointer? = nil
        let status = fkxnn_model_load(path, &raw, &message, message.count)
        guard status == FKXNN_OK, let raw else {
            throw .modelLoadFailed(path: path, message: shimMessage(message, status: status.rawValue))
        }
        let handle = ModelHandle(raw)
        guard fkxnn_model_input_channels(raw) == 3 else {
            throw .modelLoadFailed(path: path, message: "the network's input is not 3 channels (RGB)")
        }
        // CenterFace's form: its outputs, in order, are the heatmap (1 channel), the box's log
        // size (2), the centre's offset (2) and five landmarks (10), whatever the export named them.
        let channels = (0..<fkxnn_model_output_count(raw)).map { fkxnn_model_output_channels(raw, $0) }
        guard channels == Self.outputChannels else {
            throw .modelLoadFailed(
                path: path,
                message:
                    "not a network of CenterFace's form: its outputs have \(channels) channels, not \(Self.outputChannels) (heatmap, box size, offset, landmarks)"
            )
        }
        outputNames = (0..<Int32(channels.count)).map { String(cString: fkxnn_model_output_name(raw, $0)) }
        self.path = path
        self.model = handle
        concurrentCalls = max(1, CPUAllowance.current.count)
        turns = DispatchSemaphore(value: concurrentCalls)
    }

    /// Runs `body` once a call's turn comes, with a workspace no other call is using (an idle
    /// one, else a new one). `body` may take a network (``withNetwork(width:height:_:)``).
    func withWorkspace<Result>(_ body: (inout CenterFaceWorkspace) throws(FaceDetectorError) -> Result) throws(FaceDetectorError)
        -> Result
    {
        turns.wait()
        defer { turns.signal() }
        var workspace = pool.withLock { $0.workspaces.popLast() } ?? CenterFaceWorkspace()
        defer { pool.withLock { $0.workspaces.append(workspace) } }
        return try body(&workspace)
    }

    /// Runs `body` with a network set up for a `width` x `height` input that no other call is
    /// using (called inside ``withWorkspace(_:)``, whose turn bounds the networks in use): an
    /// idle one of that size, else one set up now (with ``InferenceThreads/current`` threads; a
    /// network keeps the count it was set up with).
    func withNetwork<Result>(width: Int, height: Int, _ body: (OpaquePointer) throws(FaceDetectorError) -> Result)
        throws(FaceDetectorError) -> Result
    {
        let threads = InferenceThreads.current
        let idle = pool.withLock { pool -> CenterFaceNetwork? in
            guard
                let i = pool.networks.lastIndex(where: { $0.width == width && $0.height == height && $0.threads == threads })
            else { return nil }
            return pool.networks.remove(at: i)
        }
        let network: CenterFaceNetwork
        if let idle { network = idle } else { network = try makeNetwork(width: width, height: height, threads: threads) }
        defer {
            // The evicted are freed once returned, outside the lock: a network's teardown takes a while.
            _ = pool.withLock { pool -> [CenterFaceNetwork] in
                pool.networks.append(network)
                let excess = max(0, pool.networks.count - Self.networksKept)
                defer { pool.networks.removeFirst(excess) }
                return Array(pool.networks.prefix(excess))
            }
        }
        return try body(network.pointer)
    }

    private func makeNetwork(width: Int, height: Int, threads: Int) throws(FaceDetectorError) -> CenterFaceNetwork {
        var message = [CChar](repeating: 0, count: 512)
        var created: OpaquePointer? = nil
        let status = fkxnn_net_create(
            model.pointer, Int32(clamping: height), Int32(clamping: width), Int32(clamping: threads), &created, &message,
            message.count)
        guard status == FKXNN_OK, let created else { throw .inference(message: shimMessage(message, status: status.rawValue)) }
        pool.withLock { $0.networksMade += 1 }
        return CenterFaceNetwork(created, width: width, height: height, threads: threads)
    }

    /// Networks set up since the model was loaded, and those idle now: what tests read to know
    /// that detectors share them.
    package var networkCounts: (made: Int, idle: Int) {
        pool.withLock { ($0.networksMade, $0.networks.count) }
    }
}

/// A loaded model (fkxnn_model). @unchecked Sendable: the model is immutable once loaded
/// (CXNNPack.h), and every network set up from it reads it from any thread.
private final class ModelHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { fkxnn_model_destroy(pointer) }
}

/// One network (fkxnn_net): the model set up for one input size. @unchecked Sendable: a
/// network runs one call at a time, and it does: it is reachable only from its model's pool
/// (under the pool's lock) or from the one `withNetwork` call that took it out of the pool and
/// puts it back when done. (A network may hold the model's weights after the model is gone:
/// it shares them, CXNNPack.h.)
private final class CenterFaceNetwork: @unchecked Sendable {
    let pointer: OpaquePointer
    let width: Int, height: Int, threads: Int
    init(_ pointer: OpaquePointer, width: Int, height: Int, threads: Int) {
        self.pointer = pointer
        self.width = width
        self.height = height
        self.threads = threads
    }
    deinit { fkxnn_net_destroy(pointer) }
}
