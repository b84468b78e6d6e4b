import OfferTrackDomain

/// What `--version` prints for both executables: the release and the journal schema it reads and writes.
public enum VersionLine {
    /// `offertrack 0.2.0 (journal schema 5)`.
    public static func text(program: String) -> String {
        "\(program) \(OfferTrackVersion.string) (journal schema \(Schema.currentVersion))"
    }
}
