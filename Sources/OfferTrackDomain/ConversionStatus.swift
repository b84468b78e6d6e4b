/// Whether a conversion passed rules 4.1–4.4.
public enum ConversionStatus: Sendable, Equatable {
    case attributed
    case unattributed(UnattributedReason)

    /// True for `.attributed`.
    public var isAttributed: Bool {
        if case .attributed = self { return true }
        return false
    }
}
