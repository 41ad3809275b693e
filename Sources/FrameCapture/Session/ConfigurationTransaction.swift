/// Both session types' configuration bookkeeping: the configuration a session runs with, and
/// the one being changed between ``begin()`` and the outermost ``end()`` (beginConfiguration
/// and commitConfiguration nest; only the outermost commit applies). A value kept under the
/// session's state lock; applying a configuration (starting and stopping capture) is the
/// session's own.
struct ConfigurationTransaction<Configuration: Sendable>: Sendable {
    private(set) var committed: Configuration
    private var staged: Configuration?
    private var depth = 0

    init(_ initial: Configuration) { committed = initial }

    /// What the session's readers see: the staged configuration inside a transaction, else
    /// the committed one.
    var current: Configuration { staged ?? committed }
    var isOpen: Bool { depth > 0 }

    mutating func begin() {
        if depth == 0 { staged = committed }
        depth += 1
    }

    /// Ends one level: the staged configuration when the outermost ends (for the session to
    /// apply), nil when an inner one does.
    mutating func end() throws(CaptureError) -> Configuration? {
        guard depth > 0 else { throw .configuration("commitConfiguration() without beginConfiguration()") }
        depth -= 1
        guard depth == 0 else { return nil }
        defer { staged = nil }
        return staged
    }

    /// Inside a transaction, makes `change` to the staged configuration and returns true;
    /// outside one returns false, changing nothing: the session applies the change at once.
    mutating func stage(_ change: (inout Configuration) throws(CaptureError) -> Void) throws(CaptureError) -> Bool {
        guard depth > 0, var next = staged else { return false }
        try change(&next)
        staged = next
        return true
    }

    /// The configuration now running (or, when not running, to run at the next start).
    mutating func commit(_ configuration: Configuration) { committed = configuration }

    /// The staged configuration as it is, and putting one back: `configure {}` undoes what its
    /// body changed when the body throws.
    var stagedSnapshot: Configuration? { staged }
    mutating func restoreStaged(_ snapshot: Configuration?) { if depth > 0 { staged = snapshot } }
}

/// What both session types share for `configure {}`: their transaction, and its begin and commit.
protocol TransactionalSession: AnyObject {
    associatedtype Configuration: Sendable
    func beginConfiguration()
    func commitConfiguration() throws(CaptureError)
    /// Runs `body` on the session's transaction under its state lock.
    func withConfiguration<R>(_ body: (inout ConfigurationTransaction<Configuration>) -> R) -> R
}

extension TransactionalSession {
    /// The body of both sessions' `configure {}`: begin, run `changes`, commit; if `changes`
    /// throws, the staged configuration is put back as it was before the call (so nothing it
    /// changed survives) and the error rethrown.
    func configureAllOrNothing(_ changes: () throws -> Void) throws {
        beginConfiguration()
        let before = withConfiguration { $0.stagedSnapshot }
        do { try changes() } catch {
            withConfiguration { $0.restoreStaged(before) }
            try? commitConfiguration()
            throw error
        }
        try commitConfiguration()
    }
}
