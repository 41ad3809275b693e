import FrameCore

/// One true face of a frame: its box, and whether it is ignored (a face too small, cut or
/// blurred to count: finding it or not changes neither figure).
public struct TruthFace: Codable, Sendable {
    public var box: Rect
    public var ignored: Bool
    public init(box: Rect, ignored: Bool = false) {
        self.box = box
        self.ignored = ignored
    }
}
