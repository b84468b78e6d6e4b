/// The credentials of a Unix socket's peer, read with `SO_PEERCRED` and `SO_PEERGROUPS`.
public struct PeerCredentials: Sendable, Equatable {
    public let pid: Int32
    public let uid: UInt32
    public let gid: UInt32
    /// The peer's supplementary groups when it connected.
    public let groups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }
}
