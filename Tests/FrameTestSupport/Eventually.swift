import Foundation

/// Waits until `condition` holds, checking every 10 ms; false if `timeout` seconds pass first.
/// For conditions with no event to wait on (a counter an output keeps): the deadline is a last
/// resort, generous for a busy 2-core machine, and costs nothing when the condition comes soon.
public func eventually(timeout: Double = 60, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() >= deadline { return false }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return true
}
