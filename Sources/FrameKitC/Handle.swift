/// The C API's opaque handles: a Swift object retained while C holds it (`passRetained`), lent
/// to each call without a retain, released by the matching free.
enum Handle {
    static func make(_ object: AnyObject) -> OpaquePointer { OpaquePointer(Unmanaged.passRetained(object).toOpaque()) }

    /// The object behind `pointer`, or an ``InvalidArgument`` naming `what` for NULL or for a
    /// handle of another kind (a detector passed as a tracker). A freed handle cannot be told.
    static func object<T: AnyObject>(_ pointer: OpaquePointer?, as type: T.Type, _ what: String) throws -> T {
        guard let pointer else { throw InvalidArgument("\(what) is NULL") }
        guard let object = Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue() as? T else {
            throw InvalidArgument("\(what) is not a handle of that kind")
        }
        return object
    }

    static func release(_ pointer: OpaquePointer?) {
        guard let pointer else { return }
        Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(pointer)).release()
    }
}
