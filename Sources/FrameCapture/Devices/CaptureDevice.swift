import Foundation
import FrameCore
import Synchronization

/// A source of video frames: a V4L2 camera, the built-in virtual camera, or a file.
///
/// As `AVCaptureDevice`: find devices with ``DiscoverySession`` or ``default(for:)``, look at
/// their ``formats``, set ``activeVideoMinFrameDuration``, and wrap one in a
/// ``CaptureDeviceInput`` to add it to a ``CaptureSession``.
public final class CaptureDevice: Sendable, CustomStringConvertible {
    public enum DeviceType: String, Sendable, CaseIterable, Codable {
        /// A V4L2 camera (USB webcam, CSI camera, or a kernel driver such as vivid).
        case external
        /// FrameKit's built-in virtual camera: always present.
        case virtual
        /// A video file (MP4, MKV, WebM, MOV, AVI, Y4M, MJPEG…) or JPEG/PNG/PGM/PPM images.
        case file
        /// A network stream (rtsp://, tcp://, udp://, http(s)://, srt://…).
        case stream
    }

    public enum Position: String, Sendable, Codable { case unspecified, front, back }
    public enum MediaType: String, Sendable { case video }

    /// What the device is, for what only some devices have (controls, the configuration lock,
    /// permissions); its frames come from ``source`` whatever it is.
    enum Backend: Sendable {
        case v4l2(path: String, kernel: any V4L2Kernel)
        case virtual(VirtualCameraControls)
        case file(FileSourceDescription)
        /// Any other source: FrameMedia's files and streams, or one a program brings.
        case custom(any FrameSourceFactory)
    }

    public let uniqueID: String
    public let localizedName: String
    public let deviceType: DeviceType
    public let position: Position
    /// The driver (V4L2) or kind of source.
    public let modelID: String
    /// Every format, size and frame rate on offer, enumerated when the device was found.
    public let formats: [CaptureDeviceFormat]
    /// How long a file device's media lasts, in seconds, when its container or reader says so
    /// (a video file; a folder of images or a Y4M file at its frame rate); nil for cameras,
    /// live streams and files that do not say (an MJPEG file). As AVAsset's `duration`: the
    /// whole media's, whatever start the device was opened at.
    public let duration: Double?
    /// Whether the device's frames are still pictures (a JPEG/PNG/PGM/PPM image, or a folder of
    /// them): each frame an unrelated picture of its own size, not a moment of one scene, so
    /// nothing seen in one says where to look in the next.
    public var isStillImages: Bool {
        if case .file(let description) = backend { return description.kind == .images }
        return false
    }
    let backend: Backend
    /// Makes the device's frame source each time a session starts with it: the session knows
    /// no kind of source, only this.
    let source: any FrameSourceFactory
    private let frameDuration = Mutex<Double?>(nil)
    private let chosenFormat = Mutex<CaptureDeviceFormat?>(nil)
    /// Who holds ``lockForConfiguration()``: nobody, or this object (with the descriptor that
    /// holds the V4L2 node's `flock`, or the virtual camera's in-process lock).
    let configurationLock = Mutex<ConfigurationLock>(.unlocked)
    /// V4L2 has one manual exposure mode; whether it was entered as `.custom` (with a duration
    /// or ISO) rather than `.locked` is remembered here.
    let exposureIsCustom = Mutex(false)

    enum ConfigurationLock: Sendable {
        case unlocked
        case v4l2(V4L2Handle)
        case virtual
    }

    init(
        uniqueID: String, localizedName: String, deviceType: DeviceType, position: Position = .unspecified,
        modelID: String, formats: [CaptureDeviceFormat], duration: Double? = nil, backend: Backend
    ) {
        self.duration = duration.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
        self.uniqueID = uniqueID
        self.localizedName = localizedName
        self.deviceType = deviceType
        self.position = position
        self.modelID = modelID
        self.formats = formats
        self.backend = backend
        switch backend {
        case .v4l2(let path, let kernel): source = V4L2SourceFactory(path: path, deviceID: uniqueID, kernel: kernel)
        case .virtual(let controls): source = VirtualCameraSourceFactory(controls: controls)
        case .file(let description): source = description
        case .custom(let factory): source = factory
        }
    }

    /// The shortest time between frames the session should ask for (1 / max fps); nil lets the
    /// session pick the highest rate the chosen format offers (30 fps when that is available).
    /// Checked against the active format when the session starts.
    public var activeVideoMinFrameDuration: Double? { frameDuration.withLock { $0 } }

    /// Sets ``activeVideoMinFrameDuration`` (nil: the session's choice); a duration that is not
    /// a positive, finite number of seconds is ``CaptureError/invalidArgument(_:)``.
    public func setActiveVideoMinFrameDuration(_ duration: Double?) throws(CaptureError) {
        if let duration, !(duration > 0 && duration.isFinite) {
            throw .invalidArgument("a frame duration must be a positive number of seconds, got \(duration)")
        }
        frameDuration.withLock { $0 = duration }
    }

    /// The format the device is set to capture in, whatever the session's preset (as
    /// AVFoundation's `activeFormat`, which puts the session in `inputPriority`); nil: the
    /// session's preset chooses. Applies when a session next starts or commits a configuration.
    public var activeFormat: CaptureDeviceFormat? { chosenFormat.withLock { $0 } }

    /// Sets ``activeFormat``: one of ``formats``, or nil to let the session's preset choose.
    /// A format the device does not offer is ``CaptureError/invalidArgument(_:)``.
    public func setActiveFormat(_ format: CaptureDeviceFormat?) throws(CaptureError) {
        if let format, !formats.contains(format) {
            throw .invalidArgument("\(localizedName) has no format \(format); see its formats")
        }
        chosenFormat.withLock { $0 = format }
    }

    /// A device whose frames come from sources `source` makes: FrameMedia's files and streams
    /// are made so, and so is any source a program brings (a GStreamer appsink, a network
    /// camera's SDK) without touching FrameCapture. `formats` are what a session chooses among
    /// (by its preset, or the ``activeFormat``); `.file` and `.stream` devices have one size.
    /// `duration`: the media's length in seconds where it is known (``duration``).
    public convenience init(
        uniqueID: String, localizedName: String, deviceType: DeviceType, modelID: String, formats: [CaptureDeviceFormat],
        duration: Double? = nil, source: any FrameSourceFactory
    ) {
        self.init(
            uniqueID: uniqueID, localizedName: localizedName, deviceType: deviceType, modelID: modelID, formats: formats,
            duration: duration, backend: .custom(source))
    }

    /// The distinct frame sizes the device offers, smallest first.
    public var supportedSizes: [FrameSize] {
        Array(Set(formats.map(\.size))).sorted { ($0.area, $0.width) < ($1.area, $1.width) }
    }

    /// The photo sizes the device can take, smallest first (AVFoundation has these on
    /// `activeFormat.supportedMaxPhotoDimensions`): every size it offers, since a still may be
    /// taken at any of them while video runs at another.
    public var supportedMaxPhotoDimensions: [FrameSize] { supportedSizes }

    /// The largest photo the device takes.
    public var maxPhotoDimensions: FrameSize? { supportedSizes.last }

    /// Whether `preset` resolves to a size this device offers.
    public func supportsSessionPreset(_ preset: SessionPreset) -> Bool { preset.resolve(among: supportedSizes) != nil }

    /// The presets this device supports.
    public var supportedPresets: [SessionPreset] { SessionPreset.allCases.filter(supportsSessionPreset) }

    public var description: String { "\(localizedName) [\(uniqueID)]" }

    // MARK: Finding devices

    /// The V4L2 camera at `path` (e.g. /dev/video0), its formats enumerated now.
    public static func v4l2(path: String) throws(CaptureError) -> CaptureDevice {
        try v4l2(path: path, kernel: SystemV4L2Kernel())
    }

    /// As ``v4l2(path:)`` through `kernel` (tests play the kernel).
    package static func v4l2(path: String, kernel: any V4L2Kernel) throws(CaptureError) -> CaptureDevice {
        let handle = try V4L2Handle(path: path, kernel: kernel)
        let formats = try V4L2FormatCatalog.enumerate(handle)
        let cap = handle.capability
        return CaptureDevice(
            uniqueID: path, localizedName: cap.card.isEmpty ? path : cap.card, deviceType: .external,
            modelID: cap.driver, formats: formats, backend: .v4l2(path: path, kernel: kernel))
    }

    /// FrameKit's built-in virtual camera.
    public static let virtualCamera = makeVirtualCamera(uniqueID: "virtual")

    /// Another instance of the virtual camera, with controls of its own (for a test, or one
    /// camera of several); ``virtualCamera`` is the one discovery lists.
    public static func makeVirtualCamera(uniqueID: String, name: String = "FrameKit Virtual Camera") -> CaptureDevice {
        CaptureDevice(
            uniqueID: uniqueID, localizedName: name, deviceType: .virtual, modelID: "framekit-virtual",
            formats: VirtualCameraSource.offeredSizes.map {
                CaptureDeviceFormat(
                    fourCC: "NV12", pixelFormat: .nv12VideoRange, isCompressed: false, size: $0,
                    frameRates: VirtualCameraSource.offeredRates)
            }, backend: .virtual(VirtualCameraControls(deviceID: uniqueID)))
    }

    /// A file FrameKit's own readers know (Y4M, MJPEG, a JPEG/PNG/PGM/PPM image, a folder of
    /// them) as a device; ``CaptureError/unreadableFile(path:reason:)`` with
    /// `FileSourceDescription.notOurs` for any other content (FrameMedia's `file(_:)` then
    /// tries libavformat).
    package static func ownFile(_ url: URL, realTime: Bool, frameRate: Double?) throws(CaptureError) -> CaptureDevice {
        let description = try FileSourceDescription(url: url, realTime: realTime, frameRate: frameRate)
        return CaptureDevice(
            uniqueID: "file:\(url.path)", localizedName: url.lastPathComponent, deviceType: .file,
            modelID: description.kind.rawValue, formats: [description.deviceFormat], duration: description.duration,
            backend: .file(description))
    }

    /// The reason ``ownFile(_:realTime:frameRate:)`` gives for content its readers do not know.
    package static let notOurFile = FileSourceDescription.notOurs

    /// Files and streams have one size: presets that name another are refused.
    public var hasFixedSize: Bool { deviceType == .file || deviceType == .stream }

    /// Whether the device delivers frames at its own pace (cameras, the virtual camera, a file
    /// opened with `realTime`) rather than as fast as they are consumed (a file otherwise).
    public var isPaced: Bool { source.isRealTime }

    /// The first V4L2 camera, or else the virtual camera.
    public static func `default`(for mediaType: MediaType = .video) -> CaptureDevice {
        `default`(for: mediaType, kernel: SystemV4L2Kernel())
    }

    package static func `default`(for mediaType: MediaType = .video, kernel: any V4L2Kernel) -> CaptureDevice {
        DiscoverySession(deviceTypes: [.external], kernel: kernel).devices.first ?? virtualCamera
    }

    // MARK: Authorization

    public enum AuthorizationStatus: String, Sendable { case notDetermined, restricted, denied, authorized }

    /// Whether this user may open the video device nodes. On Linux that is the nodes'
    /// permissions (usually the `video` group); with no camera node, the virtual camera is all
    /// there is and access is authorized.
    public static func authorizationStatus(for mediaType: MediaType = .video) -> AuthorizationStatus {
        authorizationStatus(for: mediaType, kernel: SystemV4L2Kernel())
    }

    package static func authorizationStatus(for mediaType: MediaType = .video, kernel: any V4L2Kernel) -> AuthorizationStatus {
        let nodes = kernel.deviceNodes()
        if nodes.isEmpty { return .authorized }
        return nodes.contains(where: kernel.isAccessible) ? .authorized : .denied
    }

    /// Linux cannot prompt: returns whether access is authorized now. When denied,
    /// ``authorizationAdvice`` says what to do.
    public static func requestAccess(for mediaType: MediaType = .video) async -> Bool {
        authorizationStatus(for: mediaType) == .authorized
    }

    package static func requestAccess(for mediaType: MediaType = .video, kernel: any V4L2Kernel) async -> Bool {
        authorizationStatus(for: mediaType, kernel: kernel) == .authorized
    }

    public static let authorizationAdvice =
        "camera access denied: add your user to the 'video' group (sudo usermod -aG video $USER) and log in again"
}

/// Finds devices by type, media type and position (as AVCaptureDevice.DiscoverySession).
public struct DiscoverySession: Sendable {
    public let deviceTypes: [CaptureDevice.DeviceType]
    public let position: CaptureDevice.Position
    let kernel: any V4L2Kernel
    /// The stream URLs this discovery lists (with `.stream` in ``deviceTypes``; FrameMedia's
    /// `init(deviceTypes:mediaType:position:streams:)` takes them).
    public let streams: [URL]
    /// Opens one of ``streams`` as a device (FrameMedia's `CaptureDevice.stream`).
    let openStream: (@Sendable (URL) throws(CaptureError) -> CaptureDevice)?

    /// Devices of `deviceTypes` at `position` (the virtual camera and V4L2 cameras have no
    /// position: `.unspecified`).
    /// - Parameters:
    ///   - deviceTypes: what to look for: V4L2 cameras, the virtual camera.
    ///   - mediaType: video (FrameKit's only one).
    ///   - position: a position to match, or `.unspecified` for any.
    public init(
        deviceTypes: [CaptureDevice.DeviceType] = [.external, .virtual], mediaType: CaptureDevice.MediaType = .video,
        position: CaptureDevice.Position = .unspecified
    ) {
        self.init(deviceTypes: deviceTypes, mediaType: mediaType, position: position, kernel: SystemV4L2Kernel())
    }

    /// As ``init(deviceTypes:mediaType:position:)``, scanning through `kernel` (tests play the
    /// kernel), and listing `streams` as devices `openStream` makes.
    package init(
        deviceTypes: [CaptureDevice.DeviceType] = [.external, .virtual], mediaType: CaptureDevice.MediaType = .video,
        position: CaptureDevice.Position = .unspecified, kernel: any V4L2Kernel, streams: [URL] = [],
        openStream: (@Sendable (URL) throws(CaptureError) -> CaptureDevice)? = nil
    ) {
        self.deviceTypes = deviceTypes
        self.position = position
        self.kernel = kernel
        self.streams = streams
        self.openStream = openStream
    }

    /// The matching devices, cameras first. V4L2 nodes that are not capture devices (metadata
    /// nodes, codecs) or cannot be opened are skipped; see ``problems`` for why.
    public var devices: [CaptureDevice] { scan().devices }

    /// Nodes that were skipped and why (a denied permission among them).
    public var problems: [(path: String, error: CaptureError)] { scan().problems }

    private func scan() -> (devices: [CaptureDevice], problems: [(path: String, error: CaptureError)]) {
        var found: [CaptureDevice] = []
        var problems: [(String, CaptureError)] = []
        if deviceTypes.contains(.external) {
            for path in kernel.deviceNodes() {
                do { found.append(try CaptureDevice.v4l2(path: path, kernel: kernel)) } catch { problems.append((path, error)) }
            }
        }
        if deviceTypes.contains(.virtual) { found.append(CaptureDevice.virtualCamera) }
        if deviceTypes.contains(.stream), let openStream {
            for url in streams {
                do { found.append(try openStream(url)) } catch { problems.append((url.absoluteString, error)) }
            }
        }
        return (found.filter { position == .unspecified || $0.position == position }, problems)
    }
}
