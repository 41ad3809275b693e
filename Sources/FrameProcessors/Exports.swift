// Research code links only the FrameProcessors product: `import FrameProcessors` brings the
// pixel buffers, the pixel kernels and image I/O it works on too.
@_exported import FrameCore
@_exported import FrameImageIO
@_exported import FramePixels
