import Foundation

/// Waits up to `seconds` for `condition`; false when it never held.
func eventually(_ seconds: Double = 60, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.1)
    }
    return try condition()
}
