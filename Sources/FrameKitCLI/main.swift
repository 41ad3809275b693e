import Foundation
import FrameKitCommands

// framekit: the command line (docs/cli.md). Everything but this call is the FrameKitCommands
// library, which the tests also call directly.
exit(FrameKitCommandLine.main(Array(CommandLine.arguments.dropFirst())))
