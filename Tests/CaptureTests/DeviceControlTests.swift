import CV4L2
import Foundation
import FrameKit
import FrameTestSupport
import Synchronization
import Testing

@Suite("Device controls: V4L2 through a fake kernel, and the virtual camera's own")
struct DeviceControlTests {
    @Test("every control is enumerated with NEXT_CTRL: classes, ranges, flags, menus with gaps, integer menus")
    func enumeration() throws {
        let kernel = FakeKernel()
        let camera = try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel)
        let controls = try camera.controls()
        #expect(controls.map(\.id) == FakeKernel.webcamControls.map(\.id).sorted())
        #expect(controls.filter { $0.kind == .controlClass }.map(\.name) == ["User Controls", "Camera Controls"])
        let brightness = try camera.control(named: "brightness")
        #expect(brightness.minimum == -64 && brightness.maximum == 64 && brightness.value == 0 && brightness.flags == .slider)
        let exposure = try camera.control(named: "auto_exposure")
        #expect(exposure.kind == .menu && exposure.menu.map(\.index) == [1, 3]) // index 0 and 2 skipped, as UVC does
        #expect(exposure.menu.map(\.name) == ["Manual Mode", "Aperture Priority Mode"] && exposure.value == 3)
        let mode = try camera.control(named: "Sensor Mode")
        #expect(mode.kind == .integerMenu && mode.menu.compactMap(\.value) == [720, 1080, 2160])
        let counter = try camera.control(named: "frame_counter")
        #expect(counter.flags.contains(.readOnly) && counter.flags.contains(.volatile) && counter.maximum == 1 << 40)
        #expect(try camera.control(named: "white_balance_temperature").flags.contains(.inactive))
        // v4l2-ctl's spelling of names, and its listing.
        #expect(DeviceControl.key(for: "Exposure Time, Absolute") == "exposure_time_absolute")
        #expect(brightness.description == "brightness 0x980900 (int) : min=-64 max=64 step=1 default=0 value=0 flags=slider")
        #expect(exposure.description.hasSuffix("value=3\n\t1: Manual Mode\n\t3: Aperture Priority Mode"))
        let error = thrownCaptureError { _ = try camera.control(named: "iris") }
        guard case .unknownControl("iris", _, let available)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(available.contains("brightness") && !available.contains("user_controls"))
    }

    @Test("setting needs the lock; range, step and menu are checked before any ioctl; the clamped value is read back")
    func setting() throws {
        let kernel = FakeKernel()
        let camera = try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel)
        guard case .notLockedForConfiguration? = thrownCaptureError({ try camera.setValue(10, forControl: "brightness") }) else {
            Issue.record("set without the lock")
            return
        }
        try camera.lockForConfiguration()
        defer { camera.unlockForConfiguration() }
        #expect(try camera.setValue(-20, forControl: "brightness") == -20)
        #expect(kernel.controlValue(cv4l2_CID_BRIGHTNESS) == -20)
        let before = kernel.calls("S_EXT_CTRLS")
        for (value, key, fragment) in [
            (65, "brightness", "-64…64"), (4605, "white_balance_temperature", "steps of 10"), (2, "auto_exposure", "no menu item 2"),
            (1, "frame_counter", "read-only"), (2, "white_balance_automatic", "0…1")
        ] as [(Int64, String, String)] {
            let error = thrownCaptureError { try camera.setValue(value, forControl: key) }
            guard case .controlRejected(key, let reason)? = error else {
                Issue.record("\(key)=\(value): \(String(describing: error))")
                continue
            }
            #expect(reason.contains(fragment), "\(reason)")
        }
        #expect(kernel.calls("S_EXT_CTRLS") == before, "a refused value reached the driver")
        // The driver keeps less than it declares (a UVC quirk): the value it kept comes back.
        #expect(try camera.setValue(1, forControl: "auto_exposure") == 1)
        #expect(try camera.setValue(2000, forControl: "exposure_time_absolute") == 1250)
        // Menus and booleans by name, as --control takes them.
        let menu = try camera.control(named: "auto_exposure")
        #expect(menu.parse("aperture_priority_mode") == 3 && menu.parse("Manual Mode") == 1 && menu.parse("shutter") == nil)
        #expect(try camera.control(named: "white_balance_automatic").parse("off") == 0)
    }

    @Test("one owner at a time: a second lock, by this object or another, is refused until the first unlocks")
    func lockOwnership() throws {
        let kernel = FakeKernel()
        let first = try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel)
        let second = try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel)
        try first.lockForConfiguration()
        #expect(first.isLockedForConfiguration)
        guard case .lockedForConfiguration? = thrownCaptureError({ try first.lockForConfiguration() }),
            case .lockedForConfiguration? = thrownCaptureError({ try second.lockForConfiguration() })
        else {
            Issue.record("a second owner got the lock")
            return
        }
        first.unlockForConfiguration()
        try second.lockForConfiguration()
        #expect(try second.setValue(5, forControl: "gain") == 5)
        second.unlockForConfiguration()
        #expect(!second.isLockedForConfiguration)
        let virtual = CaptureDevice.makeVirtualCamera(uniqueID: "virtual-lock")
        try virtual.lockForConfiguration()
        #expect(thrownCaptureError { try virtual.lockForConfiguration() } != nil)
        virtual.unlockForConfiguration()
    }

    @Test("a control grabbed by the running stream is refused with EBUSY's meaning, a read-only one with EACCES's")
    func grabbed() throws {
        let recorder = Recorder()
        let (session, _, kernel) = try scriptedSession((0..<200).map { .frame(sequence: $0) }, recorder: recorder)
        let camera = session.inputs[0].device
        try session.startRunning()
        defer { session.stopRunning() }
        #expect(try camera.control(named: "sensor_mode").flags.contains(.grabbed))
        try camera.lockForConfiguration()
        defer { camera.unlockForConfiguration() }
        let error = thrownCaptureError { try camera.setValue(1, forControl: "sensor_mode") }
        guard case .controlRejected("sensor_mode", let reason)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(reason.contains("grabbed"))
        // A control that turned read-only after it was read: the driver's EACCES says so.
        let contrast = try camera.control(named: "contrast")
        kernel.with { s in
            let i = s.nodes["/dev/video0"]!.controls.firstIndex { $0.id == cv4l2_CID_CONTRAST }!
            s.nodes["/dev/video0"]!.controls[i].flags |= 0x4
        }
        guard case .controlRejected("contrast", let why)? = thrownCaptureError({ try camera.setValue(40, for: contrast) }) else {
            Issue.record("read-only contrast accepted")
            return
        }
        #expect(why.contains("read-only"))
    }

    @Test("control changes by others and by the driver arrive as notifications while capture goes on")
    func events() throws {
        let recorder = Recorder()
        let (session, output, kernel) = try scriptedSession((0..<400).map { .frame(sequence: $0) }, recorder: recorder)
        let log = NotificationLog(session)
        try session.startRunning()
        defer { session.stopRunning() }
        #expect(kernel.calls("SUBSCRIBE_EVENT") >= 10)
        // Another owner (a second device object: another descriptor) sets the contrast.
        let other = try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel)
        try other.lockForConfiguration()
        try other.setValue(50, forControl: "contrast")
        other.unlockForConfiguration()
        let change = log.wait {
            if case .deviceControlChanged(let c) = $0 { return c.key == "contrast" }
            return false
        }
        guard case .deviceControlChanged(let c)? = change else {
            Issue.record("no contrast notification: \(log.all)")
            return
        }
        #expect(c.value == 50 && c.valueChanged && c.device == "/dev/video0")
        kernel.driverChanges(cv4l2_CID_GAIN, to: 77)
        #expect(
            log.wait {
                if case .deviceControlChanged(let c) = $0 { return c.key == "gain" && c.value == 77 }
                return false
            } != nil)
        #expect(recorder.wait { $0.frames.count > 5 })
        #expect(output.counts.isBalanced || output.counts.pending > 0)
    }

    @Test("exposure, focus, white balance and zoom in AVFoundation's shape map onto the V4L2 controls")
    func avFoundationShape() throws {
        let kernel = FakeKernel()
        let camera = try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel)
        #expect(try camera.exposureMode == .continuousAutoExposure) // aperture priority is automatic
        #expect(camera.isExposureModeSupported(.locked) && camera.isExposureModeSupported(.custom))
        #expect(!camera.isExposureModeSupported(.autoExpose))
        try camera.lockForConfiguration()
        defer { camera.unlockForConfiguration() }
        try camera.setExposureModeCustom(duration: 0.01, iso: 40)
        #expect(try camera.exposureMode == .custom)
        #expect(kernel.controlValue(cv4l2_CID_EXPOSURE_AUTO) == 1 && kernel.controlValue(cv4l2_CID_EXPOSURE_ABSOLUTE) == 100)
        #expect(try camera.exposureDuration == 0.01 && camera.iso == 40)
        try camera.setExposureMode(.locked)
        #expect(try camera.exposureMode == .locked)
        try camera.setExposureMode(.continuousAutoExposure)
        #expect(kernel.controlValue(cv4l2_CID_EXPOSURE_AUTO) == 3) // no Auto Mode item: aperture priority
        guard case .unsupportedMode? = thrownCaptureError({ try camera.setExposureMode(.autoExpose) }) else {
            Issue.record("autoExpose accepted")
            return
        }
        // Focus: continuous → locked at a lens position on the control's step.
        #expect(try camera.focusMode == .continuousAutoFocus && camera.isLockingFocusWithCustomLensPositionSupported)
        try camera.setFocusModeLocked(lensPosition: 0.5)
        #expect(kernel.controlValue(cv4l2_CID_FOCUS_AUTO) == 0 && kernel.controlValue(cv4l2_CID_FOCUS_ABSOLUTE) == 125)
        #expect(try camera.focusMode == .locked && camera.lensPosition == 0.5)
        #expect(!camera.isFocusModeSupported(.autoFocus))
        // White balance: locked at a temperature, rounded to the 10 K step.
        try camera.setWhiteBalanceModeLocked(with: .init(temperature: 3204, tint: 0))
        #expect(kernel.controlValue(cv4l2_CID_AUTO_WHITE_BALANCE) == 0)
        #expect(try camera.whiteBalanceTemperatureAndTintValues?.temperature == 3200 && camera.whiteBalanceMode == .locked)
        #expect(thrownCaptureError { try camera.setWhiteBalanceModeLocked(with: .init(temperature: 4000, tint: 5)) } != nil)
        // Zoom 100…500 is 1x…5x.
        #expect(camera.maxAvailableVideoZoomFactor == 5)
        try camera.setVideoZoomFactor(2.5)
        #expect(try kernel.controlValue(cv4l2_CID_ZOOM_ABSOLUTE) == 250 && camera.videoZoomFactor == 2.5)
        #expect(thrownCaptureError { try camera.setVideoZoomFactor(6) } != nil)
        #expect(camera.supportedFlashModes.isEmpty) // no flash controls
    }

    @Test("a device without controls answers from what it has: files have none, modes are fixed")
    func noControls() throws {
        let clip = Fixtures.temporaryFolder("controls").appendingPathComponent("clip.y4m")
        defer { try? FileManager.default.removeItem(at: clip) }
        try Y4MWriter.write(frames: 2, width: 64, height: 48, to: clip)
        let file = try CaptureDevice.file(clip)
        #expect(try file.controls().isEmpty)
        #expect(try file.exposureMode == .locked && !file.isExposureModeSupported(.continuousAutoExposure))
        #expect(file.isFocusModeSupported(.locked) && !file.isWhiteBalanceModeSupported(.continuousAutoWhiteBalance))
        try file.lockForConfiguration()
        #expect(thrownCaptureError { try file.setValue(1, forControl: "brightness") } != nil)
        file.unlockForConfiguration()
    }

    @Test("the virtual camera's controls change its pixels and post notifications while it runs")
    func virtualCamera() throws {
        let camera = CaptureDevice.makeVirtualCamera(uniqueID: "virtual-controls")
        #expect(
            try camera.controls().filter { $0.kind != .controlClass }.map(\.key) == [
                "brightness", "contrast", "white_balance_automatic", "gain", "white_balance_temperature", "auto_exposure",
                "exposure_time_absolute", "zoom_absolute"
            ])
        #expect(camera.isExposureModeSupported(.custom) && camera.isWhiteBalanceModeSupported(.continuousAutoWhiteBalance))
        let recorder = Recorder(keepPixels: true)
        let (session, _) = try makeSession(camera, preset: .vga640x480, recorder: recorder, format: .nv12VideoRange)
        let log = NotificationLog(session)
        try session.startRunning()
        defer { session.stopRunning() }
        func nextFrame() throws -> PixelBuffer {
            let seen = recorder.frames.count
            #expect(recorder.wait { $0.frames.count >= seen + 2 })
            return try #require(recorder.frames.last?.pixelBuffer)
        }
        // The bottom ramp scrolls sideways and the face never reaches it: a row of it, sorted,
        // is the same in every frame, so a control's effect is exactly a mapping of that row.
        let row = 470
        func ramp(_ buffer: PixelBuffer) -> [Int] {
            buffer.withUnsafeBytes(ofPlane: 0) { bytes, p in (0..<640).map { Int(bytes[row * p.bytesPerRow + $0]) }.sorted() }
        }
        func chroma(_ buffer: PixelBuffer) -> Set<[Int]> {
            buffer.withUnsafeBytes(ofPlane: 1) { bytes, p in
                Set((0..<320).map { [Int(bytes[(row / 2) * p.bytesPerRow + 2 * $0]), Int(bytes[(row / 2) * p.bytesPerRow + 2 * $0 + 1])] })
            }
        }
        let plain = ramp(try nextFrame())
        #expect(plain == ramp(try nextFrame()), "the ramp row is not shift-invariant")
        try camera.lockForConfiguration()
        defer { camera.unlockForConfiguration() }
        try camera.setValue(138, forControl: "brightness")
        #expect(ramp(try nextFrame()) == plain.map { $0 + 10 })
        try camera.setValue(128, forControl: "brightness")
        // 1.5 times the exposure time: luma above black grows by half.
        try camera.setExposureModeCustom(duration: 0.0234, iso: nil)
        #expect(try camera.exposureMode == .custom)
        #expect(ramp(try nextFrame()) == plain.map { min(255, Int((16 + Double($0 - 16) * 1.5).rounded())) })
        try camera.setExposureMode(.continuousAutoExposure)
        #expect(ramp(try nextFrame()) == plain)
        // A low white-balance setting turns the picture blue: Cb up, Cr down.
        #expect(chroma(try nextFrame()) == [[128, 128]])
        try camera.setWhiteBalanceModeLocked(with: .init(temperature: 3000, tint: 0))
        #expect(chroma(try nextFrame()) == [[148, 108]])
        #expect(
            log.wait {
                if case .deviceControlChanged(let c) = $0 { return c.key == "white_balance_temperature" && c.value == 3000 }
                return false
            } != nil)
        // Manual temperature's inactive flag went away: a flags change is posted too.
        #expect(
            log.all.contains {
                if case .deviceControlChanged(let c) = $0 { return c.key == "white_balance_temperature" && c.flagsChanged }
                return false
            })
    }
}
