import OfferTrackCLI
import Posix

/// offertrack: the operator's command line (report, export, ingest, status, rebuild, verify, simulate). The
/// environment is read here only (`STATE_DIRECTORY`, `OFFERTRACK_SOCKET`, in debug builds the tests' hooks) and
/// passed down.
CurrentProcess.exit(
    CommandLineTool.run(
        Array(CommandLine.arguments.dropFirst()), environment: CommandEnvironment(CurrentProcess.environment)))
