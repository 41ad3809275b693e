import Foundation
import FrameKit
import FrameTestSupport
import Synchronization

// FrameKit's suite against the kernel's vivid driver, run inside the test VM by
// scripts/test-vivid (docs/testing.md). Every case prints PASS or FAIL with its name; the last
// line is "vivid: N passed, M failed". Exit status 0 only if nothing failed.

// MARK: The cases

var cases: [(String, () throws -> Void)] = []

cases.append(
    (
        "discovery: vivid with its real formats, sizes and intervals; presets resolved",
        {
            let devices = DiscoverySession(deviceTypes: [.external]).devices
            let vivid = try devices.first { $0.modelID == "vivid" }.map { $0 } ?? { throw Failure("vivid not discovered: \(devices)") }()
            let fourCCs = Set(vivid.formats.map(\.fourCC))
            try check(fourCCs.isSuperset(of: ["YUYV", "NV12", "GREY"]), "formats: \(fourCCs)")
            try check(
                vivid.supportedSizes.contains(FrameSize(width: 1280, height: 720))
                    && vivid.supportedSizes.contains(FrameSize(width: 320, height: 180)),
                "sizes: \(vivid.supportedSizes)")
            let hd = vivid.formats.first { $0.fourCC == "YUYV" && $0.size == FrameSize(width: 1280, height: 720) }
            try check(hd?.maxFrameRate == 12.5 || (hd?.maxFrameRate ?? 0) > 0, "1280x720 rates: \(String(describing: hd?.frameRates))")
            try check(vivid.supportsSessionPreset(.hd1280x720), "hd1280x720 not supported")
            try check(!vivid.supportsSessionPreset(.cif352x288), "cif352x288 claimed")
            let s = CaptureSession()
            try s.addInput(CaptureDeviceInput(device: vivid))
            do {
                try s.setSessionPreset(.cif352x288)
                throw Failure("cif352x288 accepted")
            } catch let error as CaptureError {
                try check(error.description.contains("cif352x288") && error.description.contains("1280x720"), "error: \(error)")
            }
        }
    ))

for (w, h, preset) in [(320, 180, SessionPreset.low), (640, 480, .vga640x480), (1280, 720, .hd1280x720)] {
    for format in [PixelFormat.yuyv, .nv12VideoRange, .bgra32, .gray8] {
        cases.append(
            (
                "capture \(w)x\(h) \(format.shortName): pixels match vivid's colour bars",
                {
                    let collector = Recorder(keepPixelsOfFirst: 3)
                    let fps: Double? = w == 320 ? 30 : nil
                    let (session, output, _) = try session(preset: preset, format: format, fps: fps, collector: collector)
                    try session.startRunning()
                    // With a rate to check, enough frames to measure it past the start-up frames.
                    let needed = fps == nil ? 3 : 14
                    let got = collector.wait(timeout: 60) { $0.frames.count >= needed }
                    session.stopRunning()
                    try check(got, "only \(collector.frames.count) frames")
                    let frame = collector.frames[2].pixelBuffer
                    try check(
                        frame.width == w && frame.height == h && frame.format == format,
                        "got \(frame.width)x\(frame.height) \(frame.format)")
                    try check(
                        session.inputs[0].activeFormat?.pixelFormat == format
                            || format == .bgra32 && session.inputs[0].activeFormat?.pixelFormat == .bgra32,
                        "native format not chosen: \(String(describing: session.inputs[0].activeFormat))")
                    try checkColourBars(frame)
                    if let fps {
                        // The first frames after STREAMON can come early under emulation: measure after them.
                        let frames = Array(collector.frames.dropFirst(3))
                        let times = frames.map(\.presentationTime)
                        let rate = Double(times.count - 1) / (times.last! - times.first!)
                        try check(abs(rate - fps) < fps * 0.2, "timestamps say \(rate) fps, asked \(fps)")
                    }
                    try check(output.counts.isBalanced, "counts \(output.counts)")
                }
            ))
    }
}

cases.append(
    (
        "frame rate set through the session (320x180 at 15 and 60 fps)",
        {
            for fps in [15.0, 60.0] {
                let collector = Recorder(keepPixelsOfFirst: 3)
                let (session, _, _) = try session(preset: .low, format: nil, fps: fps, collector: collector)
                try session.startRunning()
                _ = collector.wait(timeout: 30) { $0.frames.count >= 20 }
                session.stopRunning()
                let t = collector.frames.map(\.presentationTime)
                try check(t.count >= 10, "only \(t.count) frames at \(fps)")
                let measured = Double(t.count - 1) / (t.last! - t.first!)
                try check(abs(measured - fps) < fps * 0.25, "asked \(fps) fps, kernel timestamps say \(measured)")
            }
        }
    ))

cases.append(
    (
        "percentage_of_dropped_buffers=50: captured = delivered + dropped, gaps are discontinuity",
        {
            let (collector, output) = try capture(with: "percentage_of_dropped_buffers", 50, frames: 40)
            let c = output.counts
            try check(c.captured == c.delivered + c.droppedTotal && c.pending == 0, "unbalanced: \(c)")
            try check(c.dropped(.discontinuity) >= 10, "discontinuity drops: \(c.dropped(.discontinuity)) of \(c.captured)")
            // Every sequence number from first to last is accounted for exactly once.
            try checkNumbering(collector, "every frame once")
        }
    ))

cases.append(
    (
        "inject_v4l2_buf_flag_error: one corrupt drop, streaming goes on",
        {
            let collector = Recorder(keepPixelsOfFirst: 3)
            let (session, output, _) = try session(preset: .low, format: nil, fps: 30, collector: collector, discardsLate: false)
            try session.startRunning()
            _ = collector.wait(timeout: 30) { $0.frames.count >= 5 }
            try setControl("inject_v4l2_buf_flag_error")
            let before = collector.frames.count
            _ = collector.wait(timeout: 30) { $0.frames.count >= before + 15 }
            session.stopRunning()
            try check(output.counts.dropped(.corrupt) == 1, "corrupt drops: \(output.counts.dropped(.corrupt))")
            try check(collector.frames.count >= before + 15, "streaming stopped after the error")
        }
    ))

cases.append(
    (
        "wrap_sequence_number: no bogus drop at the 32-bit wrap",
        {
            // vivid starts at 0xffffff80: 128 frames to the wrap, about 4 s at 30 fps.
            let (collector, output) = try capture(with: "wrap_sequence_number", 1, frames: 150)
            let sequences = collector.frames.map(\.sequenceNumber)
            try check(
                sequences.contains { $0 >= 0xFFFF_FF80 && $0 < 0x1_0000_0000 } && sequences.contains { $0 > 0x1_0000_0000 },
                "no wrap seen (FrameKit's numbers run on past 2^32): \(sequences.prefix(3))…\(sequences.suffix(3))")
            // A bogus drop at the wrap would be ~2^32 frames, or a number FrameKit skipped there, so
            // that every frame after the wrap is numbered one too high. Under emulation vivid's
            // thread genuinely skips frames, anywhere, the wrap included: it numbers each frame
            // from jiffies since the start, rounded to the nearest period, and stamps it with
            // the clock when it fills it. So a frame's timestamp less its number's time is within
            // about half a period of the stream's start, however late the thread ran, and after a
            // genuine skip too (its clock gap can be as short as ~1.2 periods: two CI runs saw a
            // skip at the wrap with gaps of 0.048 s and more). Numbers shifted by FrameKit move
            // that offset by a whole period. Compared as medians before and after the wrap.
            let gaps = collector.drops.filter { $0.reason == .discontinuity }
            try check(gaps.count < 5, "\(gaps.count) discontinuity drops: \(gaps.map(\.sequenceNumber).prefix(5))")
            let period = 1.0 / 30
            let frames = collector.frames.sorted { $0.sequenceNumber < $1.sequenceNumber }
            let first = frames[0]
            let offsets = frames.map {
                (
                    wrapped: $0.sequenceNumber >= 0x1_0000_0000,
                    offset: ($0.presentationTime - first.presentationTime) - Double($0.sequenceNumber - first.sequenceNumber) * period
                )
            }
            func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
            let before = median(offsets.filter { !$0.wrapped }.map(\.offset))
            let after = median(offsets.filter(\.wrapped).map(\.offset))
            try check(
                abs(after - before) < period / 2,
                "frames after the wrap are numbered off the driver's clock: median offset \(before) s before, \(after) s after (a period is \(period) s); drops: \(gaps.map(\.sequenceNumber))"
            )
            try checkNumbering(collector, "numbers across the wrap")
            try check(output.counts.isBalanced, "counts \(output.counts)")
        }
    ))

for control in ["inject_vidioc_reqbufs_error", "inject_vidioc_streamon_error"] {
    cases.append(
        (
            "\(control): the start fails with a clear error, a second start succeeds",
            {
                try setControl(control)
                let collector = Recorder(keepPixelsOfFirst: 3)
                let (session, _, _) = try session(preset: .low, format: nil, fps: 30, collector: collector)
                do {
                    try session.startRunning()
                    session.stopRunning()
                    throw Failure("first start succeeded")
                } catch let error as CaptureError {
                    let name = control.contains("reqbufs") ? "VIDIOC_REQBUFS" : "VIDIOC_STREAMON"
                    try check(error.description.contains(name), "error does not name \(name): \(error)")
                }
                try session.startRunning()
                let got = collector.wait(timeout: 30) { $0.frames.count >= 3 }
                session.stopRunning()
                try check(got, "second start delivered \(collector.frames.count) frames")
            }
        ))
}

cases.append(
    (
        "inject_fatal_streaming_error: a runtime-error notification and a clean stop",
        {
            let (session, collector, notes, fds) = try watchedSession()
            try setControl("inject_fatal_streaming_error")
            let note = notes.wait(timeout: 10) { if case .runtimeError = $0 { true } else { false } }
            try check(note != nil, "no runtime error notification")
            try check(collector.wait(timeout: 5) { _ in !session.isRunning }, "session still running")
            session.stopRunning()
            try checkNoDescriptorsLeaked(since: fds)
        }
    ))

for (name, action) in [
    ("disconnect", { try setControl("disconnect") }),
    (
        "driver unbound mid-capture (hot unplug)",
        {
            try "vivid.0".write(toFile: "/sys/bus/platform/drivers/vivid/unbind", atomically: false, encoding: .utf8)
        }
    )
] as [(String, () throws -> Void)] {
    cases.append(
        (
            "\(name): an interruption, capture stops within a second, nothing leaked",
            {
                let (session, collector, notes, fds) = try watchedSession()
                let start = Date()
                try action()
                let note = notes.wait(timeout: 10) { if case .wasInterrupted = $0 { true } else { false } }
                let stopped = collector.wait(timeout: 10) { _ in !session.isRunning }
                let elapsed = Date().timeIntervalSince(start)
                session.stopRunning()
                try check(note != nil, "no interruption notification (\(notes.all))")
                try check(stopped && elapsed < 1.0 * timeScale, "stopped \(stopped) after \(elapsed) s")
                try checkNoDescriptorsLeaked(since: fds)
            }
        ))
}

cases.append(
    (
        "a delegate slower than the frame rate: frameWasLate drops and bounded latency",
        {
            let collector = Recorder(delay: 0.1, keepPixelsOfFirst: 3)
            let (session, output, _) = try session(preset: .low, format: nil, fps: 30, collector: collector)
            try session.startRunning()
            Thread.sleep(forTimeInterval: 2 * timeScale)
            session.stopRunning()
            let c = output.counts
            try check(c.dropped(.frameWasLate) >= 10, "late drops: \(c)")
            try check(c.isBalanced && c.pending == 0, "unbalanced: \(c)")
            let worst = collector.latencies.max() ?? 0
            try check(worst < 0.1 + 3.0 / 30 + 0.1 * timeScale, "latency up to \(worst) s: a backlog")
        }
    ))

cases.append(
    (
        "framekit devices and framekit detect run against the real driver",
        {
            try check(!framekitBinary.isEmpty, "FRAMEKIT_BIN not set")
            let devices = shell(framekitBinary, ["devices", "--json"])
            try check(
                devices.status == 0 && devices.output.contains("\"vivid\"") && devices.output.contains("hd1280x720"),
                "devices: \(devices.output.prefix(400))")
            let detect = shell(
                framekitBinary, ["detect", "--detector", "haar", "--device", device, "--preset", "hd1280x720", "--frames", "30"])
            try check(detect.status == 0, "detect exit \(detect.status): \(detect.output.suffix(400))")
            let lines = detect.output.split(separator: "\n").filter { $0.hasPrefix("{") }
            let summary = try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as? [String: Any]
            let s = summary?["summary"] as? [String: Any]
            try check(s?["width"] as? Int == 1280 && s?["source"] as? String == device, "summary: \(lines.last!)")
            let captured = s?["frames_captured"] as? Int ?? 0
            let delivered = s?["frames_delivered"] as? Int ?? -1
            let dropped = s?["frames_dropped"] as? Int ?? -1
            try check(captured >= 30 && captured == delivered + dropped, "counts: \(captured) = \(delivered) + \(dropped)")
        }
    ))

cases.append(
    (
        "controls: vivid's real controls enumerated; brightness and contrast change the pixels; gain set and read back",
        {
            let camera = try CaptureDevice.v4l2(path: device)
            let controls = try camera.controls()
            let keys = Set(controls.map(\.key))
            say(
                "  vivid controls: \(controls.filter { $0.kind != .controlClass }.map { "\($0.key)(\($0.kind.rawValue))" }.joined(separator: " "))"
            )
            try check(keys.isSuperset(of: ["brightness", "contrast", "saturation", "hue", "gain"]), "controls: \(keys.sorted())")
            try check(controls.contains { $0.kind == .controlClass }, "no control classes")
            let pattern = try camera.control(named: "test_pattern")
            try check(pattern.kind == .menu && pattern.menu.contains { $0.name.contains("Colorbar") }, "test_pattern: \(pattern)")
            let collector = Recorder(keepPixelsOfFirst: 400)
            let (session, output, running) = try session(preset: .vga640x480, format: .yuyv, collector: collector)
            try session.startRunning()
            defer { session.stopRunning() }
            let plain = try barsAfterChange(collector)
            try running.lockForConfiguration()
            defer { running.unlockForConfiguration() }
            try check(try running.setValue(200, forControl: "brightness") == 200, "brightness not kept")
            let brighter = try barsAfterChange(collector)
            say("  bars: plain \(plain), brightness 200 \(brighter)")
            let lift = zip(plain, brighter).map { $1 - $0 }
            try check(lift.allSatisfy { $0 >= 0 } && lift.reduce(0, +) / 8 > 30, "brightness 200 lifted the bars by \(lift)")
            try running.setValue(128, forControl: "brightness")
            try running.setValue(64, forControl: "contrast")
            let flat = try barsAfterChange(collector)
            say("  bars: contrast 64 \(flat)")
            try check(
                Double(flat[0] - flat[7]) < 0.75 * Double(plain[0] - plain[7]),
                "contrast 64: white-black \(flat[0] - flat[7]), was \(plain[0] - plain[7])")
            if keys.contains("gain_automatic") { try running.setValue(0, forControl: "gain_automatic") }
            let gain = try running.setValue(42, forControl: "gain")
            try check(gain == 42 && (try running.control(named: "gain").value) == 42, "gain read back \(String(describing: gain))")
            try check(output.counts.captured > 0, "nothing captured")
        }
    ))

cases.append(
    (
        "controls: a change by another program (v4l2-ctl) during capture arrives as a notification",
        {
            let collector = Recorder(keepPixelsOfFirst: 3)
            let (session, _, _) = try session(preset: .vga640x480, format: .yuyv, collector: collector)
            let notes = NotificationLog(session)
            try session.startRunning()
            defer { session.stopRunning() }
            try check(collector.wait(timeout: 5 * timeScale) { $0.frames.count >= 2 }, "no frames")
            try setControl("brightness", 150)
            let note = notes.wait(timeout: 5 * timeScale) {
                if case .deviceControlChanged(let c) = $0 { return c.key == "brightness" && c.value == 150 && c.valueChanged }
                return false
            }
            try check(note != nil, "no brightness event: \(notes.all)")
            let seen = collector.frames.count
            try check(collector.wait(timeout: 5 * timeScale) { $0.frames.count > seen + 2 }, "capture stopped after the event")
        }
    ))

cases.append(
    (
        "controls: framekit devices --controls, detect --control, and the lock held against another process",
        {
            try check(!framekitBinary.isEmpty, "FRAMEKIT_BIN not set")
            let listing = shell(framekitBinary, ["devices", "--controls", "--json"])
            try check(
                listing.status == 0 && listing.output.contains("\"brightness\"") && listing.output.contains("\"menu\""),
                "devices --controls: \(listing.output.prefix(300))")
            let detect = shell(
                framekitBinary,
                [
                    "detect", "--detector", "haar", "--device", device, "--preset", "vga640x480", "--frames", "5", "--control",
                    "brightness=90",
                    "--control", "contrast=100"
                ])
            try check(detect.status == 0, "detect --control exit \(detect.status): \(detect.output.suffix(300))")
            let camera = try CaptureDevice.v4l2(path: device)
            try check(try camera.control(named: "brightness").value == 90, "brightness after detect --control")
            let bad = shell(
                framekitBinary, ["detect", "--detector", "haar", "--device", device, "--frames", "1", "--control", "brightness=999"])
            try check(bad.status == 64 && bad.output.contains("0…255"), "brightness=999: \(bad.status) \(bad.output.suffix(200))")
            // While this process holds the configuration lock, another FrameKit process cannot take it.
            try camera.lockForConfiguration()
            let locked = shell(
                framekitBinary, ["detect", "--detector", "haar", "--device", device, "--frames", "1", "--control", "brightness=100"])
            camera.unlockForConfiguration()
            try check(
                locked.status == 75 && locked.output.contains("locked"), "second owner: \(locked.status) \(locked.output.suffix(200))")
        }
    ))

cases.append(
    (
        "multi-camera: two vivid instances (n_devs=2) captured at once, exact accounting for each; detect --device A --device B",
        {
            let second = "/dev/video1"
            try reloadVivid("n_devs=2 node_types=0x1,0x1 num_inputs=1,1 input_types=0x0,0x0", nodes: [device, second])
            let cameras = [try CaptureDevice.v4l2(path: device), try CaptureDevice.v4l2(path: second)]
            try cameras[1].setActiveFormat(
                cameras[1].formats.first { $0.fourCC == "YUYV" && $0.size == FrameSize(width: 320, height: 180) })
            let collectors = [Recorder(keepPixelsOfFirst: 3), Recorder(keepPixelsOfFirst: 3)]
            let (session, inputs, outputs) = try makeMultiCamSession(cameras, delegates: collectors)
            try session.startRunning()
            try check(
                collectors.allSatisfy { c in c.wait(timeout: 10 * timeScale) { $0.frames.count >= 30 } },
                "both cameras did not deliver 30 frames")
            session.stopRunning()
            for i in 0..<2 {
                let c = outputs[i].counts
                try check(c.captured == c.delivered + c.droppedTotal && c.pending == 0, "camera \(i): \(c)")
                try checkNumbering(collectors[i], "camera \(i)")
            }
            try check(
                inputs[0].activeFormat?.size == FrameSize(width: 640, height: 480),
                "camera 0 at \(String(describing: inputs[0].activeFormat))")
            try check(
                inputs[1].activeFormat?.size == FrameSize(width: 320, height: 180),
                "camera 1 at \(String(describing: inputs[1].activeFormat))")
            try checkColourBars(collectors[0].frames[0].pixelBuffer)
            try checkColourBars(collectors[1].frames[0].pixelBuffer)
            let detect = shell(
                framekitBinary,
                ["detect", "--detector", "haar", "--device", device, "--device", second, "--preset", "vga640x480", "--frames", "10"])
            try check(detect.status == 0, "detect with two devices: \(detect.status) \(detect.output.suffix(300))")
            let summaries = detect.output.split(separator: "\n").filter { $0.hasPrefix("{\"summary\"") }
            try check(summaries.count == 2 && summaries[1].contains(second), "summaries: \(summaries)")
        }
    ))

cases.append(
    (
        "photo: a 1920x1080 still while video runs at 640x360; the switch's gap is reported as photo_capture drops",
        {
            let camera = try CaptureDevice.v4l2(path: device)
            try check(
                camera.maxPhotoDimensions.map { $0.width >= 1920 } ?? false,
                "max photo size \(String(describing: camera.maxPhotoDimensions))")
            let session = CaptureSession()
            let video = VideoDataOutput()
            let collector = Recorder(keepPixelsOfFirst: 600)
            video.setSampleBufferDelegate(collector)
            let photos = PhotoOutput()
            photos.maxPhotoDimensions = FrameSize(width: 1920, height: 1080)
            try session.configure {
                try session.addInput(CaptureDeviceInput(device: camera))
                try session.addOutput(video)
                try session.addOutput(photos)
            }
            try? camera.setActiveFormat(camera.formats.first { $0.fourCC == "YUYV" && $0.size == FrameSize(width: 640, height: 360) })
            try session.startRunning()
            defer { session.stopRunning() }
            try check(collector.wait(timeout: 5 * timeScale) { $0.frames.count >= 5 }, "no video")
            final class Taken: PhotoCaptureDelegate {
                let result = Mutex<(Photo?, CaptureError?)?>(nil)
                func photoOutput(_ output: PhotoOutput, didFinishProcessingPhoto photo: Photo?, error: CaptureError?) {
                    result.withLock { $0 = (photo, error) }
                }
            }
            let taken = Taken()
            var settings = PhotoSettings()
            settings.maxPhotoDimensions = FrameSize(width: 1920, height: 1080)
            photos.capturePhoto(with: settings, delegate: taken)
            let deadline = Date().addingTimeInterval(10 * timeScale)
            while taken.result.withLock({ $0 }) == nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            guard let (photo, error) = taken.result.withLock({ $0 }) else { throw Failure("no photo within the time") }
            guard let photo else { throw Failure("photo failed: \(String(describing: error))") }
            try check(
                photo.pixelBuffer.width == 1920 && photo.pixelBuffer.height == 1080,
                "photo \(photo.pixelBuffer.width)x\(photo.pixelBuffer.height)")
            try checkColourBars(photo.pixelBuffer)
            let before = collector.frames.count
            try check(collector.wait(timeout: 5 * timeScale) { $0.frames.count >= before + 10 }, "video did not resume")
            let frame = collector.frames.last!.pixelBuffer
            try check(frame.width == 640 && frame.height == 360, "video came back at \(frame.width)x\(frame.height)")
            session.stopRunning()
            let c = video.counts
            try check(c.captured == c.delivered + c.droppedTotal && c.pending == 0, "counts \(c)")
            try check(c.dropped(.photoCapture) >= 1, "no photo_capture drops for the switch: \(c)")
            try checkNumbering(collector, "numbers across the switch")
            say("  photo switch: \(c.dropped(.photoCapture)) frames reported as photo_capture")
        }
    ))

var passed = 0
var failed = 0
var times: [(name: String, seconds: Double)] = []
let only = ProcessInfo.processInfo.environment["VIVID_ONLY"].flatMap { $0.isEmpty ? nil : $0 }
// VIVID_ONLY: run the cases whose name contains it (several: separated by '|').
for (name, body) in cases where only.map({ $0.split(separator: "|").contains { name.contains($0) } }) ?? true {
    let start = Date()
    do {
        try reloadVivid()
        try body()
        passed += 1
        say("PASS \(name) (\(String(format: "%.1f", Date().timeIntervalSince(start))) s)")
    } catch {
        failed += 1
        say("FAIL \(name): \(error)")
    }
    times.append((name, Date().timeIntervalSince(start)))
}
// Where the minutes go (#31): the slowest cases and the total, before the result line.
say("vivid: cases took \(String(format: "%.1f", times.map(\.seconds).reduce(0, +))) s; the slowest:")
for t in times.sorted(by: { $0.seconds > $1.seconds }).prefix(5) {
    say("  \(String(format: "%5.1f", t.seconds)) s  \(t.name.prefix(90))")
}
say("vivid: \(passed) passed, \(failed) failed")
exit(failed == 0 ? 0 : 1)
