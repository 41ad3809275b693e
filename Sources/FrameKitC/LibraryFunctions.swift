import CFrameKitAPI
import Foundation
import FrameKit

@_cdecl("fk_api_version")
public func fkApiVersion() -> Int32 { Int32(FK_API_VERSION) }

@_cdecl("fk_version")
public func fkVersion() -> UnsafePointer<CChar> { LibraryStrings.version }

@_cdecl("fk_drop_reason_name")
public func fkDropReasonName(_ reason: Int32) -> UnsafePointer<CChar>? {
    guard reason >= 0, Int(reason) < LibraryStrings.dropReasons.count else { return nil }
    return LibraryStrings.dropReasons[Int(reason)]
}

/// Strings handed to C with static storage: made once, never written or freed.
enum LibraryStrings {
    // nonisolated(unsafe): each pointer is set once, by the lazy initialiser (which Swift runs
    // once, thread-safely), and the memory behind it is never written afterwards.
    nonisolated(unsafe) static let version = permanent(FrameKitVersion.current)
    /// In framekit.h's FK_DROP_* order.
    static let reasons: [DropReason] = [.frameWasLate, .outOfBuffers, .discontinuity, .corrupt, .photoCapture, .processingFailed]
    nonisolated(unsafe) static let dropReasons = reasons.map { permanent($0.rawValue) }

    private static func permanent(_ text: String) -> UnsafePointer<CChar> { UnsafePointer(strdup(text)!) }
}
