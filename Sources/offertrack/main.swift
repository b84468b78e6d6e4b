import OfferTrackCLI
import Posix

/// offertrack: the operator's command line (report, export, ingest, status, rebuild, verify, simulate).
CurrentProcess.exit(CommandLineTool.run(Array(CommandLine.arguments.dropFirst())))
