import CV4L2
import FrameCore

#if canImport(Glibc)
import Glibc
#endif

/// V4L2 fourccs ↔ FrameKit pixel formats, and enumeration of what a device offers
/// (ENUM_FMT → ENUM_FRAMESIZES → ENUM_FRAMEINTERVALS), read at run time, never assumed.
enum V4L2FormatCatalog {
    /// The FrameKit format a V4L2 fourcc delivers natively (nil for compressed or unknown ones).
    static func pixelFormat(fourCC: UInt32) -> PixelFormat? {
        switch fourCC {
        case cv4l2_PIX_FMT_YUYV: .yuyv
        case cv4l2_PIX_FMT_NV12: .nv12VideoRange
        case cv4l2_PIX_FMT_YUV420: .i420
        case cv4l2_PIX_FMT_GREY: .gray8
        case cv4l2_PIX_FMT_RGB24: .rgb24
        case cv4l2_PIX_FMT_ABGR32, cv4l2_PIX_FMT_XBGR32: .bgra32
        default: nil
        }
    }

    static func isJPEG(_ fourCC: UInt32) -> Bool { fourCC == cv4l2_PIX_FMT_MJPEG || fourCC == cv4l2_PIX_FMT_JPEG }

    static func string(_ fourCC: UInt32) -> String {
        String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: fourCC >> ($0 * 8)) }, as: UTF8.self)
    }

    /// Sizes tried against a stepwise or continuous size range: the fixed presets' sizes and
    /// common webcam sizes.
    static let candidateSizes: [FrameSize] = [
        (160, 120), (320, 180), (320, 240), (352, 288), (640, 360), (640, 480), (800, 600), (960, 540),
        (1024, 768), (1280, 720), (1280, 960), (1920, 1080), (2560, 1440), (3840, 2160)
    ].map { FrameSize(width: $0.0, height: $0.1) }

    static let candidateRates: [Double] = [5, 10, 15, 24, 25, 30, 50, 60]

    /// Every format, size and frame rate the device offers.
    static func enumerate(_ handle: V4L2Handle) throws(CaptureError) -> [CaptureDeviceFormat] {
        var formats: [CaptureDeviceFormat] = []
        for fmtIndex in 0..<256 {
            var desc = v4l2_fmtdesc()
            desc.index = UInt32(fmtIndex)
            desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            guard try endOfList({ () throws(CaptureError) in try handle.ioctl(cv4l2_VIDIOC_ENUM_FMT, "VIDIOC_ENUM_FMT", &desc) }) else {
                break
            }
            let code = desc.pixelformat
            let native = pixelFormat(fourCC: code)
            guard native != nil || isJPEG(code) else { continue } // formats FrameKit cannot read
            let emulated = desc.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0
            for size in try sizes(handle, code) {
                let rates = try frameRates(handle, code, size)
                formats.append(
                    CaptureDeviceFormat(
                        fourCC: string(code), pixelFormat: native, isCompressed: isJPEG(code),
                        size: size, frameRates: rates, isEmulated: emulated, v4l2Code: code))
            }
        }
        return formats
    }

    /// Runs an ENUM ioctl; false when the list has ended (EINVAL), as V4L2 signals it.
    private static func endOfList(_ body: () throws(CaptureError) -> Void) throws(CaptureError) -> Bool {
        do {
            try body()
            return true
        } catch let .systemCall(_, error) where error.errno == EINVAL || error.errno == ENOTTY {
            return false
        }
    }

    private static func sizes(_ handle: V4L2Handle, _ code: UInt32) throws(CaptureError) -> [FrameSize] {
        var result: [FrameSize] = []
        for index in 0..<512 {
            var fs = v4l2_frmsizeenum()
            fs.index = UInt32(index)
            fs.pixel_format = code
            guard
                try endOfList({ () throws(CaptureError) in try handle.ioctl(cv4l2_VIDIOC_ENUM_FRAMESIZES, "VIDIOC_ENUM_FRAMESIZES", &fs) })
            else { break }
            if fs.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                result.append(FrameSize(width: Int(fs.discrete.width), height: Int(fs.discrete.height)))
            } else {
                let s = fs.stepwise
                let stepW = max(1, Int(s.step_width))
                let stepH = max(1, Int(s.step_height))
                result += candidateSizes.filter { c in
                    c.width >= Int(s.min_width) && c.width <= Int(s.max_width) && c.height >= Int(s.min_height)
                        && c.height <= Int(s.max_height) && (c.width - Int(s.min_width)) % stepW == 0
                        && (c.height - Int(s.min_height)) % stepH == 0
                }
                break
            }
        }
        return result
    }

    private static func frameRates(_ handle: V4L2Handle, _ code: UInt32, _ size: FrameSize) throws(CaptureError) -> [Double] {
        var rates: [Double] = []
        for index in 0..<256 {
            var fi = v4l2_frmivalenum()
            fi.index = UInt32(index)
            fi.pixel_format = code
            fi.width = UInt32(size.width)
            fi.height = UInt32(size.height)
            guard
                try endOfList({ () throws(CaptureError) in
                    try handle.ioctl(cv4l2_VIDIOC_ENUM_FRAMEINTERVALS, "VIDIOC_ENUM_FRAMEINTERVALS", &fi)
                })
            else { break }
            if fi.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                if fi.discrete.numerator > 0 { rates.append(Double(fi.discrete.denominator) / Double(fi.discrete.numerator)) }
            } else {
                let fast = fi.stepwise.min
                let slow = fi.stepwise.max
                let maxRate = fast.numerator > 0 ? Double(fast.denominator) / Double(fast.numerator) : 30
                let minRate = slow.numerator > 0 ? Double(slow.denominator) / Double(slow.numerator) : 1
                rates += [minRate, maxRate] + candidateRates.filter { $0 > minRate && $0 < maxRate }
                break
            }
        }
        // Drivers without ENUM_FRAMEINTERVALS: the rate is whatever S_PARM gives; say 30.
        return rates.isEmpty ? [30] : Array(Set(rates)).sorted()
    }
}
