import Foundation
import OfferTrackDomain
import Simulator
import TestSupport
import Testing

/// Stream servers whose store's disk fills up (nats-server 2.9) answer neither publishes nor stream requests,
/// log nothing about it, and can stay mute once the space is back, until they are restarted. The edge keeps
/// acknowledging and says so where an operator looks (`STATUS=`, `status`), with the fix; once it is applied,
/// every acknowledged record is forwarded.
@Suite(.serialized) struct StreamServersOutOfDiskTests {
    @Test func anEdgeSaysTheStreamDoesNotAnswerAndForwardsOnceTheServersAreFixed() throws {
        let directory = ScratchDirectory()
        let disk = try SmallFilesystem(in: directory, size: "64m")
        let cluster = try NATSCluster(in: directory, maxFileStore: "2GB", storeBase: disk.path)
        let edge = try DaemonProcess(
            in: ScratchDirectory("ot-edge"),
            arguments: ["--forward", cluster.urls.joined(separator: ","), "--partitions-total", "4"])
        guard edge.waitReady() else { return }
        let lines = Array(
            WorkloadSimulator(users: 200, seed: 16).filter { !$0.isDuplicate && $0.record.type != .erasure }.map(
                \.line))
        let half = lines.count / 2
        func forwarded(_ count: Int) throws -> Bool {
            try FleetStatus.json(edge).contains(#""forward":{"acknowledgedThrough":\#(count),"lagRecords":0,"#)
        }
        #expect(
            try LineClient(path: edge.socketPath).exchange(Array(lines[..<half])).allSatisfy { $0.status == "accepted" }
        )
        #expect(
            try eventually { try forwarded(half) }, "\((try? FleetStatus.json(edge)) ?? "")"
        )
        try disk.fill()
        // Only what the edge says from now on: a STREAM DOWN while the cluster was forming is not this one.
        edge.notify.reset()
        #expect(
            try LineClient(path: edge.socketPath).exchange(Array(lines[half...])).allSatisfy { $0.status == "accepted" }
        )
        let mute = edge.notify.waitFor(timeout: 60) { $0.contains("STREAM DOWN") }
        #expect(mute?.contains("JetStream does not answer") == true, "\(mute ?? edge.stderr)")
        #expect(mute?.contains("after a full disk, free space and restart the servers") == true)
        #expect(try FleetStatus.json(edge).contains(#""up":false"#))
        try disk.free()
        for node in cluster.nodes { node.stop() }
        for node in cluster.nodes { try node.start() }
        #expect(
            try eventually(120) { try forwarded(lines.count) },
            "\(FleetStatus.diagnosis([edge], in: directory))")
        edge.signal(Signals.terminate)
        #expect(edge.waitExit() == 0)
    }
}
