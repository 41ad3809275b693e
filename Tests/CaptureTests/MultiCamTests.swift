import CV4L2
import Foundation
import FrameKit
import FrameTestSupport
import Synchronization
import Testing

/// Notifications of a multi-camera session, with the camera each came from.
final class TaggedLog: Sendable {
    private let log = Mutex<[(String, SessionNotification)]>([])
    init(_ session: MultiCamSession) { session.addObserver { device, n in self.log.withLock { $0.append((device.uniqueID, n)) } } }
    var all: [(String, SessionNotification)] { log.withLock { $0 } }
    func wait(timeout: Double = 5, _ match: (String, SessionNotification) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if all.contains(where: match) { return true }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return all.contains(where: match)
    }
}

@Suite("Several cameras at once (MultiCamSession) and a device's activeFormat")
struct MultiCamTests {
    @Test("two cameras, each with its own output, format, thread and exact accounting, on one clock")
    func twoCameras() throws {
        #expect(MultiCamSession.isMultiCamSupported)
        let a = CaptureDevice.makeVirtualCamera(uniqueID: "virtual-a")
        let b = CaptureDevice.makeVirtualCamera(uniqueID: "virtual-b")
        // Camera A at its own activeFormat, B at the session's preset.
        let small = a.formats.first { $0.size == FrameSize(width: 320, height: 180) }
        #expect(small != nil)
        try a.setActiveFormat(small)
        let (recorderA, recorderB) = (Recorder(), Recorder())
        let (session, inputs, outputs) = try makeMultiCamSession([a, b], delegates: [recorderA, recorderB])
        let (inputA, inputB, outputA, outputB) = (inputs[0], inputs[1], outputs[0], outputs[1])
        let log = TaggedLog(session)
        try session.startRunning()
        #expect(session.isRunning && session.cameraSessions.count == 2)
        #expect(recorderA.wait { $0.frames.count >= 15 } && recorderB.wait { $0.frames.count >= 15 })
        session.stopRunning()
        #expect(!session.isRunning)
        // Each camera's frames at its own size, numbered on their own.
        #expect(inputA.activeFormat?.size == FrameSize(width: 320, height: 180))
        #expect(inputB.activeFormat?.size == FrameSize(width: 640, height: 480))
        for (output, recorder) in [(outputA, recorderA), (outputB, recorderB)] {
            let c = output.counts
            #expect(c.isBalanced && c.pending == 0, "\(c)")
            #expect(c.delivered == recorder.frames.count && c.droppedTotal == recorder.drops.count)
            let sequences = recorder.frames.map(\.sequenceNumber) + recorder.drops.map(\.sequenceNumber)
            #expect(Set(sequences).count == sequences.count)
        }
        // One clock: the two cameras' capture instants overlap in time.
        let spanA = (recorderA.frames.first!.captureInstant, recorderA.frames.last!.captureInstant)
        let spanB = (recorderB.frames.first!.captureInstant, recorderB.frames.last!.captureInstant)
        #expect(abs(spanA.0.seconds(since: spanB.0)) < 0.5 && abs(spanA.1.seconds(since: spanB.1)) < 0.5)
        // Notifications say which camera they are about.
        #expect(log.wait { id, n in if case .didStartRunning = n { id == "virtual-a" } else { false } })
        #expect(log.wait { id, n in if case .didStartRunning = n { id == "virtual-b" } else { false } })
        #expect(log.wait { id, n in if case .didStopRunning = n { id == "virtual-b" } else { false } })
    }

    @Test("misuse is an error: unknown ends of a connection, an output connected twice, one device twice, no input")
    func misuse() throws {
        let camera = CaptureDevice.makeVirtualCamera(uniqueID: "virtual-misuse")
        let session = MultiCamSession()
        guard case .noInput? = thrownCaptureError({ try session.startRunning() }) else {
            Issue.record("started with no input")
            return
        }
        let input = try CaptureDeviceInput(device: camera)
        let output = VideoDataOutput()
        #expect(thrownCaptureError { try session.addConnection(from: input, to: output) } != nil)
        try session.addInputWithNoConnections(input)
        #expect(thrownCaptureError { try session.addInputWithNoConnections(CaptureDeviceInput(device: camera)) } != nil)
        #expect(thrownCaptureError { try session.addConnection(from: input, to: output) } != nil)
        try session.addOutputWithNoConnections(output)
        try session.addConnection(from: input, to: output)
        #expect(thrownCaptureError { try session.addConnection(from: input, to: output) } != nil)
        // A configure {} that throws half-way changes nothing.
        let other = try CaptureDeviceInput(device: CaptureDevice.makeVirtualCamera(uniqueID: "virtual-misuse-2"))
        #expect(throws: CaptureError.self) {
            try session.configure {
                try session.addInputWithNoConnections(other)
                try session.addConnection(from: other, to: output) // output already connected
            }
        }
        #expect(session.inputs.count == 1 && session.connections.count == 1)
        session.removeInput(input)
        #expect(session.inputs.isEmpty && session.connections.isEmpty)
    }

    @Test("a camera that is unplugged stops alone; the other goes on, and the notification names the camera")
    func oneCameraLost() throws {
        let kernel = FakeKernel()
        kernel.setScript((0..<20).map { .frame(sequence: $0) } + [.fail(ENODEV)])
        let usb = try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel)
        let virtual = CaptureDevice.makeVirtualCamera(uniqueID: "virtual-survivor")
        let virtualRecorder = Recorder()
        let (session, _, _) = try makeMultiCamSession([usb, virtual], delegates: [Recorder(), virtualRecorder])
        let log = TaggedLog(session)
        try session.startRunning()
        defer { session.stopRunning() }
        #expect(log.wait { id, n in if case .wasInterrupted(.videoDeviceNotAvailable) = n { id == "/dev/video0" } else { false } })
        let before = virtualRecorder.frames.count
        #expect(virtualRecorder.wait { $0.frames.count >= before + 10 }, "the virtual camera stopped with the unplugged one")
        #expect(session.isRunning)
        #expect(!log.all.contains { id, n in if case .wasInterrupted = n { id == "virtual-survivor" } else { false } })
    }

    @Test("a device's activeFormat wins over the session preset (AVFoundation's inputPriority); nil gives the preset back")
    func activeFormat() throws {
        let camera = CaptureDevice.makeVirtualCamera(uniqueID: "virtual-format")
        let small = try #require(camera.formats.first { $0.size == FrameSize(width: 352, height: 288) })
        try camera.setActiveFormat(small)
        #expect(camera.activeFormat == small)
        let foreign = CaptureDeviceFormat(
            fourCC: "YUYV", pixelFormat: .yuyv, isCompressed: false, size: FrameSize(width: 7, height: 7), frameRates: [30])
        #expect(thrownCaptureError { try camera.setActiveFormat(foreign) } != nil)
        let recorder = Recorder()
        let (session, _) = try makeSession(camera, preset: .hd1280x720, recorder: recorder)
        try session.startRunning()
        #expect(session.inputs.first?.activeFormat?.size == small.size)
        session.stopRunning()
        try camera.setActiveFormat(nil)
        try session.startRunning()
        #expect(session.inputs.first?.activeFormat?.size == FrameSize(width: 1280, height: 720))
        session.stopRunning()
    }
}
