/// The sysexits codes both executables exit with (SPEC section 6, `sysexits.h`).
public enum ExitCode: Int32, Sendable {
    case ok = 0
    /// `EX_USAGE`: a bad flag or argument.
    case usage = 64
    /// `EX_DATAERR`: bad input data (rejected records, a corrupt journal).
    case dataError = 65
    /// `EX_NOINPUT`: an input file (the journal) does not exist.
    case noInput = 66
    /// `EX_UNAVAILABLE`: a service is not available (the daemon, the socket or journal held by another).
    case unavailable = 69
    /// `EX_SOFTWARE`: an internal error.
    case software = 70
    /// `EX_OSERR`: a system call failed (the event loop could not start or run).
    case osError = 71
    /// `EX_CANTCREAT`: an output file cannot be created (read-only directory, disk full).
    case cannotCreate = 73
    /// `EX_IOERR`: an I/O error.
    case ioError = 74
    /// `EX_TEMPFAIL`: try again later (the journal is locked).
    case tryAgain = 75
    /// `EX_CONFIG`: a bad configuration (rules file, activated socket, fleet membership).
    case configuration = 78
}
