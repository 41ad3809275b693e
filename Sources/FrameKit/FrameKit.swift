// The umbrella: `import FrameKit` brings every FrameKit module.
@_exported import FrameCapture
@_exported import FrameCore
@_exported import FrameImageIO
@_exported import FrameMedia
@_exported import FrameModels
@_exported import FramePixels
@_exported import FramePreview
@_exported import FrameProcessors
@_exported import FrameStats
