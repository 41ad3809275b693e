import CV4L2
import FrameCore

// A photo larger than the video: the format switch, with the flash.
extension V4L2Source {
    /// A still in `format`: streaming stops (buffers given back), the still is taken in that
    /// format, and video restarts in its own; the next frames report the gap.
    func captureStill(format: CaptureDeviceFormat, flash: Bool) throws(CaptureError) -> SampleBuffer {
        let resume = last?.time ?? Timestamp.now()
        // Every buffer must come back before the switch: consumers' frames are waited for while
        // video still streams, so one that keeps a buffer fails the photo and video goes on as
        // it was (its queued frames too).
        let queued = pending.filter { if case .frame(let frame) = $0 { frame.pixelBuffer.isBorrowed } else { false } }.count
        if let stream {
            let held = stream.awaitBorrowedBuffers(beyond: queued) - queued
            guard held <= 0 else { throw .buffersHeld(device: path, count: held, seconds: V4L2Stream.releaseWait) }
        }
        // Queued frames borrow the driver's buffers too: they are reported as photoCapture
        // drops instead (the photo's moment is now).
        pending = pending.map { event in
            guard case .frame(let frame) = event else { return event }
            return .dropped(
                DroppedFrame(sequenceNumber: frame.sequenceNumber, presentationTime: frame.presentationTime, reason: .photoCapture))
        }
        let released = stream?.stop(releasingBuffers: true)
        stream = nil
        let still = V4L2Source(
            path: path, deviceID: deviceID, kernel: kernel,
            configuration: SourceConfiguration(
                format: format, pixelFormat: format.pixelFormat ?? .nv12FullRange, frameRate: format.frameRates.last ?? 30,
                bufferCount: 2))
        let stillWait = 3.0
        var result: Result<SampleBuffer, CaptureError> = .failure(.noStillFrame(device: path, size: format.size, seconds: stillWait))
        do throws(CaptureError) {
            try still.start()
            if flash { try still.fireFlash() }
            let deadline = Timestamp.now().adding(seconds: stillWait)
            while Timestamp.now().seconds(since: deadline) < 0 {
                guard case .frame(var frame) = try still.next() else { continue }
                frame.pixelBuffer = frame.pixelBuffer.copy() // the driver's buffer goes back before the switch
                result = .success(frame)
                break
            }
        } catch .deviceBusy(let busy) {
            result = .failure(released ?? .deviceBusy(path: busy)) // why the switch was refused, where known
        } catch {
            result = .failure(error)
        }
        if flash { try? still.setFlash(on: false) }
        let stillReleased = still.stop(releasingBuffers: true)
        do { try start() } catch { // video again, in its own format
            let failure: CaptureError
            if case .deviceBusy(let busy) = error { failure = stillReleased ?? .deviceBusy(path: busy) } else { failure = error }
            restartFailure = failure
            throw failure
        }
        resumeAfterStill = resume
        sequence = SequenceTracker() // the driver's numbers start again
        return try result.get()
    }

    /// Strobes the flash (flash_led_mode = flash, then flash_strobe) where the device has them.
    func fireFlash() throws(CaptureError) {
        try setFlash(on: true)
        guard let handle = stream?.handle, let strobe = try handle.queryControls().first(where: { $0.id == cv4l2_CID_FLASH_STROBE })
        else { return }
        _ = try handle.set(strobe, to: 1)
    }

    func setFlash(on: Bool) throws(CaptureError) {
        guard let handle = stream?.handle, let mode = try handle.queryControls().first(where: { $0.id == cv4l2_CID_FLASH_LED_MODE })
        else { throw .unsupportedMode("flash mode on (no flash_led_mode control)", device: deviceID) }
        _ = try handle.set(mode, to: Int64(on ? cv4l2_FLASH_LED_MODE_FLASH : cv4l2_FLASH_LED_MODE_NONE))
    }
}
