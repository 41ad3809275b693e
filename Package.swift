// swift-tools-version: 6.0
// FrameKit: a real-time frame-processing SDK for Linux. See docs/architecture.md for the module map.
import PackageDescription

// OpenCV's headers live in /usr/include/opencv4 (Debian's libopencv-dev). pkg-config would bring
// all 55 OpenCV libraries (0.46 s process start); naming the three we use keeps start-up at 0.01 s.
// The price: unsafeFlags, so FrameKit is consumed by local path or branch, not by version.
let openCVHeaders: [CXXSetting] = [.unsafeFlags(["-isystem", "/usr/include/opencv4"])]

// The AVX2 build of the row kernels: the same source with -target-cpu haswell (x86-64 hosts; an
// AArch64 build keeps the portable kernels and compiles this module as they are).
#if arch(x86_64)
let avx2Kernels: [SwiftSetting] = [.define("FRAMEKIT_AVX2"), .unsafeFlags(["-target-cpu", "haswell"])]
#else
let avx2Kernels: [SwiftSetting] = []
#endif

let package = Package(
    name: "FrameKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "FrameKit", targets: ["FrameKit"]),
        // Capture alone: cameras (V4L2, the virtual camera), sessions, outputs; links libv4l2 and
        // libjpeg-turbo, not FFmpeg's libraries or OpenCV.
        .library(name: "FrameCapture", targets: ["FrameCapture"]),
        // Capture plus video files, network streams and movie files (FFmpeg's libraries).
        .library(name: "FrameMedia", targets: ["FrameMedia"]),
        .library(name: "FrameProcessors", targets: ["FrameProcessors"]),
        // The C API (framekit.h) as libFrameKitC.so: Python's `framekit` package and other languages.
        .library(name: "FrameKitC", type: .dynamic, targets: ["FrameKitC"]),
        .executable(name: "framekit", targets: ["FrameKitCLI"]),
        .executable(name: "framekit-bench", targets: ["FrameKitBench"])
    ],
    targets: [
        // MARK: C shims
        .target(
            name: "CV4L2",
            linkerSettings: [.linkedLibrary("v4l2")]
        ),
        // libavformat/libavcodec 5.1 (Debian's libavformat-dev, libavcodec-dev, libswscale-dev).
        .target(
            name: "CFFmpeg",
            linkerSettings: [.linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("swscale"), .linkedLibrary("avutil")]
        ),
        .target(
            name: "CTurboJPEG",
            linkerSettings: [.linkedLibrary("turbojpeg")]
        ),
        // libpng's simplified API: PNG files in FrameImageIO.
        .target(name: "CPNG", linkerSettings: [.linkedLibrary("png16")]),
        // CPUID and XGETBV: whether the AVX2 kernels may run.
        .target(name: "CCPUFeatures"),
        // libyuv (Debian's libyuv-dev), the benchmark's second baseline; never in a product.
        .target(name: "CLibYUV", path: "Benchmarks/CLibYUV", linkerSettings: [.linkedLibrary("yuv")]),
        .target(
            name: "COpenCVShim",
            cxxSettings: openCVHeaders,
            linkerSettings: [
                .linkedLibrary("opencv_objdetect"), .linkedLibrary("opencv_imgproc"), .linkedLibrary("opencv_core")
            ]
        ),
        // CenterFace (any ONNX graph of Conv, ConvTranspose, BatchNormalization, Add, Relu and
        // Sigmoid) run by XNNPACK (Debian's libxnnpack-dev): ~2.2x as fast as OpenCV 4.6's dnn on
        // the same input here, with the same outputs to ~1e-3 (docs/performance.md).
        .target(name: "CXNNPack", linkerSettings: [.linkedLibrary("XNNPACK")]),
        // OpenCV's own filters, for tests and benchmarks to compare against; never in a product.
        .target(
            name: "COpenCVBaseline", path: "Tests/Reference/COpenCVBaseline",
            cxxSettings: openCVHeaders,
            linkerSettings: [
                .linkedLibrary("opencv_videoio"), .linkedLibrary("opencv_dnn"), .linkedLibrary("opencv_imgproc"),
                .linkedLibrary("opencv_core")
            ]
        ),

        // Swift face of COpenCVBaseline: what tests and benchmarks compare FrameKit against.
        .target(name: "OpenCVReference", dependencies: ["FrameCore", "COpenCVBaseline"], path: "Tests/Reference/OpenCVReference"),

        // MARK: Swift modules
        .target(name: "FrameCore", dependencies: ["CCPUFeatures"]),
        .target(
            name: "FrameModels", path: "Models", exclude: ["MANIFEST.json", "README.md", "Licences"],
            resources: [.copy("haarcascade_frontalface_default.xml"), .copy("centerface.onnx")]),
        // Every pixel kernel (conversion, resize, rotate/mirror) and the geometric chain stages:
        // below capture and processors alike, so capturing never links OpenCV.
        // The row kernels, compiled twice from one source (FramePixelKernelsAVX2 holds symlinks):
        // baseline x86-64 and Haswell; FramePixels' KernelDispatch picks one at start-up.
        .target(name: "FramePixelKernels"),
        .target(name: "FramePixelKernelsAVX2", swiftSettings: avx2Kernels),
        .target(name: "FramePixels", dependencies: ["FrameCore", "FramePixelKernels", "FramePixelKernelsAVX2", "CCPUFeatures"]),
        .target(name: "FrameImageIO", dependencies: ["FrameCore", "FramePixels", "CTurboJPEG", "CPNG"]),
        .target(
            name: "FrameCapture",
            dependencies: ["FrameCore", "FramePixels", "FrameImageIO", "CV4L2"],
            exclude: ["Resources"]),
        // Video files, network streams and movie files through FFmpeg's libraries: sources and an
        // output for FrameCapture's sessions, above it.
        .target(name: "FrameMedia", dependencies: ["FrameCore", "FramePixels", "FrameImageIO", "FrameCapture", "CFFmpeg"]),
        .target(
            name: "FrameProcessors",
            dependencies: ["FrameCore", "FramePixels", "FrameImageIO", "FrameModels", "COpenCVShim", "CXNNPack"]),
        .target(name: "FrameStats", dependencies: ["FrameCore"]),
        // Benchmarks of a processor chain on the user's files against a saved baseline (what
        // `framekit bench` runs): speeds as ratios to a reference workload, recall against truth.
        .target(
            name: "FrameBenchmark",
            dependencies: ["FrameCore", "FramePixels", "FrameCapture", "FrameMedia", "FrameProcessors", "FrameStats"]),
        .target(
            name: "FramePreview", dependencies: ["FrameCore", "FramePixels", "FrameImageIO", "FrameCapture", "FrameMedia", "FrameStats"]),
        .target(
            name: "FrameKit",
            dependencies: [
                "FrameCore", "FramePixels", "FrameImageIO", "FrameModels", "FrameProcessors", "FrameCapture", "FrameMedia", "FrameStats",
                "FramePreview", "FrameBenchmark"
            ]),
        // The C API: framekit.h (a C target, so that the Swift side is compiled against the
        // header's own types) and its implementation in @_cdecl functions.
        .target(name: "CFrameKitAPI", exclude: ["exports.map"]),
        .target(name: "FrameKitC", dependencies: ["FrameKit", "CFrameKitAPI"]),
        // The CLI as a library (commands, parser, output files), and the executable that calls it.
        .target(name: "FrameKitCommands", dependencies: ["FrameKit"]),
        .executableTarget(name: "FrameKitCLI", dependencies: ["FrameKitCommands"]),
        .executableTarget(
            name: "FrameKitBench", dependencies: ["FrameKit", "FrameKitCommands", "OpenCVReference", "FrameTestSupport", "CLibYUV"],
            path: "Benchmarks/FrameKitBench"),

        // MARK: Tests
        // Runs inside the vivid VM (scripts/test-vivid): the real V4L2 path on a kernel driver.
        .executableTarget(name: "FrameKitVividSuite", dependencies: ["FrameKit", "FrameTestSupport"], path: "Tests/VividSuite"),
        .target(
            name: "FrameTestSupport", dependencies: ["FrameKit"], path: "Tests/FrameTestSupport",
            exclude: ["Fixtures"]),
        .testTarget(
            name: "ShimTests",
            dependencies: ["FrameKit", "FrameCore", "FrameTestSupport", "OpenCVReference", "CXNNPack"]),
        .testTarget(name: "CaptureTests", dependencies: ["FrameKit", "FrameTestSupport", "CV4L2", "OpenCVReference"]),
        .testTarget(name: "MediaTests", dependencies: ["FrameKit", "FrameMedia", "FrameTestSupport", "OpenCVReference"]),
        .testTarget(name: "PreviewTests", dependencies: ["FrameKit", "FramePreview", "FrameTestSupport"]),
        .testTarget(
            name: "ProcessorTests",
            dependencies: [
                "FrameKit", "FrameTestSupport", "OpenCVReference", "FramePixels", "FramePixelKernels", "FramePixelKernelsAVX2",
                "FrameProcessors"
            ]),
        .testTarget(name: "StatsTests", dependencies: ["FrameKit", "FrameTestSupport"]),
        .testTarget(name: "CLITests", dependencies: ["FrameKit", "FrameTestSupport", "FrameKitCommands", "FrameKitCLI", "OpenCVReference"])
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
