import OfferTrackCLI
import Posix

/// offertrack: the operator's command line (report, export, ingest, status, rebuild, verify, simulate).
ProcessInfo.exit(CommandLineTool.run(Array(CommandLine.arguments.dropFirst())))
