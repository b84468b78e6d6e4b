import Posix

/// Which peers the daemon serves (SPEC section 8): root, the daemon's own uid, the allowed uids, and peers with an
/// allowed gid as their primary or any supplementary group (`SO_PEERGROUPS`); and which of them may send a
/// `review` (root, the daemon's own uid and the reviewers named apart, who need not be allowed otherwise).
struct PeerPolicy: Sendable {
    let ownUID: UInt32
    let allowedUIDs: Set<UInt32>
    let allowedGIDs: Set<UInt32>
    var reviewerUIDs: Set<UInt32> = []
    var reviewerGIDs: Set<UInt32> = []

    /// Whether `peer` may connect and send records.
    func allows(_ peer: PeerCredentials) -> Bool {
        isTrusted(peer) || Self.names(peer, uids: allowedUIDs, gids: allowedGIDs) || mayReview(peer)
    }

    /// Whether `peer` may send `review` records (SPEC 3.4).
    func mayReview(_ peer: PeerCredentials) -> Bool {
        isTrusted(peer) || Self.names(peer, uids: reviewerUIDs, gids: reviewerGIDs)
    }

    private func isTrusted(_ peer: PeerCredentials) -> Bool { peer.uid == 0 || peer.uid == ownUID }

    private static func names(_ peer: PeerCredentials, uids: Set<UInt32>, gids: Set<UInt32>) -> Bool {
        uids.contains(peer.uid) || gids.contains(peer.gid) || peer.groups.contains(where: gids.contains)
    }
}
