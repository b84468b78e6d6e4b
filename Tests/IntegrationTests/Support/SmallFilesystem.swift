import Foundation
import TestSupport
import Testing

/// A small tmpfs mounted inside a scratch directory (tests run as root), unmounted when released: a disk that
/// can be filled, freed or made read-only for real.
final class SmallFilesystem {
    let path: String

    /// Mounts a tmpfs of `size` (e.g. `32m`) at `name` in `directory`; `readOnly` mounts it read-only.
    init(in directory: ScratchDirectory, name: String = "small", size: String, readOnly: Bool = false) throws {
        path = directory.file(name)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let options = (readOnly ? "ro," : "") + "size=\(size)"
        let mount = try Shell.run("/bin/mount", ["-t", "tmpfs", "-o", options, "tmpfs", path])
        try #require(mount.status == 0, "this test needs to mount a tmpfs (root): \(mount.output)")
    }

    deinit { _ = try? Shell.run("/bin/umount", ["-l", path]) }

    var fillerPath: String { "\(path)/filler" }

    /// Fills every free byte.
    func fill() throws { _ = try Shell.run("/bin/dd", ["if=/dev/zero", "of=\(fillerPath)", "bs=64k"]) }

    /// Frees what `fill` took.
    func free() throws { try FileManager.default.removeItem(atPath: fillerPath) }
}
