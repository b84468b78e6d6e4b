import Posix

/// Which peers the daemon serves (SPEC section 8): root, the daemon's own uid, the allowed uids, and peers with an
/// allowed gid as their primary or any supplementary group (`SO_PEERGROUPS`).
struct PeerPolicy: Sendable {
    let ownUID: UInt32
    let allowedUIDs: Set<UInt32>
    let allowedGIDs: Set<UInt32>

    func allows(_ peer: PeerCredentials) -> Bool {
        peer.uid == 0 || peer.uid == ownUID || allowedUIDs.contains(peer.uid) || allowedGIDs.contains(peer.gid)
            || peer.groups.contains(where: allowedGIDs.contains)
    }
}
