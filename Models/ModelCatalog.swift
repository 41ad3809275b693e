import Foundation

/// Where FrameKit's shipped models are (see Models/README.md for the search order).
public enum ModelCatalog {
    /// The default face model's file name: CenterFace, a CNN (`FaceDetector`).
    public static let defaultFaceModel = "centerface.onnx"
    /// The Haar cascade's file name (`HaarFaceDetector`).
    public static let haarFaceModel = "haarcascade_frontalface_default.xml"

    /// The SHA-256 of the shipped network (as Models/MANIFEST.json gives it; a test holds the
    /// two equal): a file found by name along ``searchPath`` (outside ``userFolder``) is checked
    /// against it when it is loaded, so a damaged or replaced file is refused rather than run. (The Haar cascade is
    /// also found in the system's OpenCV folder, whose file differs by OpenCV release.)
    public static let shippedSHA256: [String: String] = [
        defaultFaceModel: "09189deaaf8646c5c51a68447e3c744ea1e211798155d4728c20507b9f5aefbc"
    ]

    /// The folder `FRAMEKIT_MODELS` names, searched first: a user's own models, under the
    /// shipped names (not checked against ``shippedSHA256``).
    public static var userFolder: URL? {
        guard let custom = ProcessInfo.processInfo.environment["FRAMEKIT_MODELS"], !custom.isEmpty else { return nil }
        return URL(fileURLWithPath: custom)
    }

    /// Whether `url` (found by ``url(forModel:)``) is a shipped file rather than one from
    /// ``userFolder``.
    public static func isShipped(_ url: URL) -> Bool {
        guard let user = userFolder else { return true }
        return url.deletingLastPathComponent().standardizedFileURL.path != user.standardizedFileURL.path
    }

    /// The folders searched, in order.
    public static var searchPath: [URL] {
        var folders: [URL] = []
        if let userFolder { folders.append(userFolder) }
        folders.append(contentsOf: resourceBundleCandidates)
        // An installed binary's prefix (scripts/install, the Debian package): bin/framekit
        // finds share/framekit/models.
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            folders.append(
                executable.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("share/framekit/models"))
        }
        // The source tree this module was built from (a checkout, or a consumer's checkout of
        // FrameKit): still there when the binary has been copied elsewhere.
        folders.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent())
        folders.append(URL(fileURLWithPath: "/usr/share/opencv4/haarcascades"))
        return folders
    }

    /// SwiftPM's resource bundle for this module, looked for beside the executable. (Not
    /// `Bundle.module`, whose accessor ends the process when the bundle has gone.)
    private static var resourceBundleCandidates: [URL] {
        var folders = [Bundle.main.bundleURL]
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            folders.append(executable.deletingLastPathComponent())
        }
        // The bundle is named "<package identity>_FrameModels.resources"; the identity depends
        // on how the consumer named the dependency, so match the suffix.
        return folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
                .filter { $0.hasSuffix("_FrameModels.resources") }
                .map { folder.appendingPathComponent($0) }
        }
    }

    /// The first readable file called `name` along ``searchPath``.
    public static func url(forModel name: String) -> URL? {
        for folder in searchPath {
            let candidate = folder.appendingPathComponent(name)
            if FileManager.default.isReadableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}
