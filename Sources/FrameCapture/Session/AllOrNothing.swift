/// The body of both sessions' `configure {}`: begin, run `changes`, commit; if `changes`
/// throws, the staged configuration is put back as it was before the call (so nothing it
/// changed survives) and the error rethrown.
func configureAllOrNothing<Staged>(
    begin: () -> Void, staged: () -> Staged, restore: (Staged) -> Void, commit: () throws(CaptureError) -> Void,
    _ changes: () throws -> Void
) throws {
    begin()
    let before = staged()
    do { try changes() } catch {
        restore(before)
        try? commit()
        throw error
    }
    try commit()
}
