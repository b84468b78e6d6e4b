/// How hard a commit is pushed to disk before it is acknowledged.
public enum Durability: String, Sendable, CaseIterable {
    /// `synchronous=FULL`: the WAL is synced on every commit; an acknowledged record survives a power cut.
    case full
    /// `synchronous=NORMAL`: survives a crash of the daemon; a power cut may lose the last commits.
    case normal
}
