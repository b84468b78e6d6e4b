import Glibc

/// Looks up users and groups by name.
public enum UserDatabase {
    /// The uid of user `name`, or nil.
    public static func uid(named name: String) -> UInt32? {
        guard let entry = getpwnam(name) else { return nil }
        return entry.pointee.pw_uid
    }

    /// The gid of group `name`, or nil.
    public static func gid(named name: String) -> UInt32? {
        guard let entry = getgrnam(name) else { return nil }
        return entry.pointee.gr_gid
    }
}
