import CFFmpeg
import FrameCore

extension PixelBuffer {
    /// Calls `body` with the buffer's planes, strides and layout as CFFmpeg's encoders take them
    /// (the planes valid only within the call).
    func withEncoderInput<R>(_ body: ([UnsafePointer<UInt8>?], [Int32], cffm_input_layout) -> R) -> R {
        let layout: cffm_input_layout
        switch format {
        case .i420: layout = CFFM_INPUT_I420
        case .nv12VideoRange, .nv12FullRange: layout = CFFM_INPUT_NV12
        case .gray8: layout = CFFM_INPUT_GRAY8
        case .yuyv: layout = CFFM_INPUT_YUYV
        case .bgra32: layout = CFFM_INPUT_BGRA
        case .rgb24: layout = CFFM_INPUT_RGB24
        }
        return withUnsafeBytes(ofPlane: 0) { p0, plane0 in
            withUnsafeBytes(ofPlane: 1) { p1, plane1 in
                withUnsafeBytes(ofPlane: 2) { p2, plane2 in
                    let planes: [UnsafePointer<UInt8>?] = [p0, p1, p2].map {
                        $0.isEmpty ? nil : $0.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    }
                    return body(planes, [Int32(plane0.bytesPerRow), Int32(plane1.bytesPerRow), Int32(plane2.bytesPerRow)], layout)
                }
            }
        }
    }
}

extension String {
    /// The text CFFmpeg wrote into a message buffer (up to its NUL).
    init(cffmMessage message: [CChar]) {
        self.init(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
