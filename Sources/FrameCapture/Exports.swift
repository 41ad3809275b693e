// `import FrameCapture` is enough to use capture: the vocabulary of its API (SampleBuffer,
// PixelBuffer, BufferPool — FrameCore), the conversions its outputs name (FramePixels) and
// image I/O come with it, as they do with FrameProcessors.
@_exported import FrameCore
@_exported import FrameImageIO
@_exported import FramePixels
