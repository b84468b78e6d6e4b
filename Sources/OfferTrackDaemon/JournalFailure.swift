import JournalStore

/// Why a batch (or a recompute) did not commit, for logs, status and what the daemon does next.
struct JournalFailure: Error, Sendable {
    /// What failed, each with its own remedy.
    enum Kind: Sendable, Equatable {
        /// Another connection held the lock past the busy timeout: the same records commit once it is released.
        case busy
        /// The disk (or the file system's quota) is full.
        case full
        /// An I/O error: the connection is reopened before the next batch.
        case ioError
        /// SQLite found the journal damaged: retrying cannot help; nothing more is acknowledged.
        case corrupt
        /// Anything else (read-only, a schema problem, a bug).
        case other
    }

    let kind: Kind
    /// The underlying error as text.
    let message: String

    init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// Classifies an error thrown by the journal writer.
    init(_ error: any Error) {
        let kind: Kind
        if JournalOpening.corruption(in: error) != nil {
            kind = .corrupt
        } else {
            switch JournalOpening.kind(of: error) {
            case .busy: kind = .busy
            case .full: kind = .full
            case .ioError: kind = .ioError
            case .corrupt, .missing, .otherSchema, .readOnly, .other: kind = .other
            }
        }
        self.init(kind: kind, message: "\(error)")
    }

    /// SQLite found the journal damaged (`kind == .corrupt`).
    var isCorruption: Bool { kind == .corrupt }
}
