import Dispatch
import Foundation
import FrameKit
import FrameTestSupport
import Testing

/// The session's promises under misuse and concurrency (#14): each case failed before.
@Suite("CaptureSession keeps its promises")
struct SessionPromiseTests {
    @Test("a configure {} body that throws half-way changes nothing")
    func configureIsAllOrNothing() throws {
        let session = CaptureSession()
        let output = VideoDataOutput()
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try session.configure {
                try session.addInput(CaptureDeviceInput(device: .virtualCamera))
                try session.addOutput(output)
                throw Stop()
            }
        }
        #expect(session.inputs.isEmpty && session.outputs.isEmpty, "the half-done part was committed")
        // A nested body that throws is undone too; the outer one's own changes stay.
        try session.configure {
            try session.addInput(CaptureDeviceInput(device: .virtualCamera))
            try? session.configure {
                try session.addOutput(output)
                throw Stop()
            }
        }
        #expect(session.inputs.count == 1 && session.outputs.isEmpty)
    }

    @Test("stopRunning() inside a configuration stops capture when it is committed")
    func stopInsideConfiguration() throws {
        let session = CaptureSession()
        try session.configure {
            try session.addInput(CaptureDeviceInput(device: .virtualCamera))
            try session.setSessionPreset(.vga640x480)
            try session.addOutput(VideoDataOutput())
        }
        try session.startRunning()
        session.beginConfiguration()
        session.stopRunning()
        #expect(session.isRunning, "still running until the commit")
        try session.commitConfiguration()
        #expect(!session.isRunning)
    }

    @Test("an output belongs to one session: adding it to a second is an error")
    func oneSessionPerOutput() throws {
        let output = VideoDataOutput()
        let a = CaptureSession(), b = CaptureSession()
        try a.addOutput(output)
        #expect(throws: CaptureError.self) { try b.addOutput(output) }
        a.removeOutput(output)
        try b.addOutput(output)
        #expect(b.outputs.count == 1 && a.outputs.isEmpty)
    }

    @Test("eight threads adding and removing outputs at once lose no change")
    func concurrentMutation() throws {
        let session = CaptureSession()
        try session.addInput(CaptureDeviceInput(device: .virtualCamera))
        try session.setSessionPreset(.vga640x480)
        try session.startRunning()
        defer { session.stopRunning() }
        let outputs = (0..<8).map { _ in VideoDataOutput() }
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            for _ in 0..<5 {
                try? session.addOutput(outputs[i])
                session.removeOutput(outputs[i])
            }
            try? session.addOutput(outputs[i])
        }
        #expect(session.outputs.count == 8, "\(session.outputs.count) of 8 outputs survived")
    }
}
