import CV4L2
import FrameCore

#if canImport(Glibc)
import Glibc
#endif

/// The V4L2 control calls on an open descriptor: enumeration (QUERY_EXT_CTRL with NEXT_CTRL and
/// NEXT_COMPOUND, QUERYMENU), values (G/S_EXT_CTRLS) and change events (SUBSCRIBE_EVENT,
/// DQEVENT). Errnos mean something particular here (EACCES: read-only, EBUSY: grabbed by a
/// stream), so these calls map them themselves.
extension V4L2Handle {
    /// Every control the driver has, in the driver's order, with current values.
    func queryControls() throws(CaptureError) -> [DeviceControl] {
        var controls: [DeviceControl] = []
        var next = cv4l2_CTRL_FLAG_NEXT_CTRL | cv4l2_CTRL_FLAG_NEXT_COMPOUND
        while controls.count < 4096 { // a driver that loops forever is not followed forever
            var query = v4l2_query_ext_ctrl()
            query.id = next
            do { try rawErrnoIoctl(cv4l2_VIDIOC_QUERY_EXT_CTRL, "VIDIOC_QUERY_EXT_CTRL", &query) } catch {
                if error.errno == EINVAL || error.errno == ENOTTY { break } // the end, or no controls at all
                throw Self.classify(error, path: path)
            }
            next = query.id | cv4l2_CTRL_FLAG_NEXT_CTRL | cv4l2_CTRL_FLAG_NEXT_COMPOUND
            var control = Self.describe(query)
            if control.kind == .menu || control.kind == .integerMenu {
                control.menu = menuItems(of: control)
            }
            control.value = try? value(of: control)
            controls.append(control)
        }
        return controls
    }

    static func describe(_ q: v4l2_query_ext_ctrl) -> DeviceControl {
        let name = withUnsafeBytes(of: q.name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        let kind: DeviceControl.Kind
        switch q.type {
        case V4L2_CTRL_TYPE_INTEGER.rawValue: kind = .integer
        case V4L2_CTRL_TYPE_BOOLEAN.rawValue: kind = .boolean
        case V4L2_CTRL_TYPE_MENU.rawValue: kind = .menu
        case V4L2_CTRL_TYPE_BUTTON.rawValue: kind = .button
        case V4L2_CTRL_TYPE_INTEGER64.rawValue: kind = .integer64
        case V4L2_CTRL_TYPE_CTRL_CLASS.rawValue: kind = .controlClass
        case V4L2_CTRL_TYPE_STRING.rawValue: kind = .string
        case V4L2_CTRL_TYPE_BITMASK.rawValue: kind = .bitmask
        case V4L2_CTRL_TYPE_INTEGER_MENU.rawValue: kind = .integerMenu
        default: kind = .compound
        }
        return DeviceControl(
            id: q.id, name: name, kind: kind, minimum: q.minimum, maximum: q.maximum,
            step: Int64(truncatingIfNeeded: q.step), defaultValue: q.default_value, value: nil,
            flags: DeviceControl.Flags(rawValue: q.flags), menu: [])
    }

    /// The items QUERYMENU answers for between the control's minimum and maximum.
    private func menuItems(of control: DeviceControl) -> [DeviceControl.MenuItem] {
        guard control.minimum >= 0, control.maximum >= control.minimum, control.maximum - control.minimum < 256 else { return [] }
        var items: [DeviceControl.MenuItem] = []
        var menu = [UInt8](repeating: 0, count: cv4l2_QUERYMENU_SIZE)
        for index in control.minimum...control.maximum {
            let ok = menu.withUnsafeMutableBytes { bytes -> Bool in
                cv4l2_querymenu_init(bytes.baseAddress!, control.id, UInt32(index))
                return (try? ioctl(cv4l2_VIDIOC_QUERYMENU, "VIDIOC_QUERYMENU", bytes: bytes.baseAddress!)) != nil
            }
            guard ok else { continue } // menus may skip indices
            menu.withUnsafeBytes { bytes in
                if control.kind == .integerMenu {
                    let number = cv4l2_querymenu_value(bytes.baseAddress!)
                    items.append(DeviceControl.MenuItem(index: index, name: String(number), value: number))
                } else {
                    var name = [CChar](repeating: 0, count: 32)
                    cv4l2_querymenu_name(bytes.baseAddress!, &name)
                    let text = name.withUnsafeBufferPointer { buffer in
                        String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    }
                    items.append(DeviceControl.MenuItem(index: index, name: text))
                }
            }
        }
        return items
    }

    /// The control's current value (G_EXT_CTRLS); nil for controls that have none to read.
    func value(of control: DeviceControl) throws(CaptureError) -> Int64? {
        guard Self.hasValue(control) else { return nil }
        return try exchange(control, value: 0, set: false)
    }

    /// Sets `value` (checked against the control's range, step and menu first) and returns the
    /// value the driver kept (read back: drivers clamp), or nil for buttons and write-only ones.
    func set(_ control: DeviceControl, to value: Int64) throws(CaptureError) -> Int64? {
        if let problem = control.problem(setting: value) { throw .controlRejected(control: control.key, reason: problem) }
        _ = try exchange(control, value: value, set: true)
        return try self.value(of: control)
    }

    static func hasValue(_ control: DeviceControl) -> Bool {
        switch control.kind {
        case .integer, .boolean, .menu, .integer64, .bitmask, .integerMenu: !control.flags.contains(.writeOnly)
        default: false
        }
    }

    private func exchange(_ control: DeviceControl, value: Int64, set: Bool) throws(CaptureError) -> Int64 {
        let is64: Int32 = control.kind == .integer64 ? 1 : 0
        var item = [UInt8](repeating: 0, count: cv4l2_EXT_CONTROL_SIZE)
        var request = [UInt8](repeating: 0, count: cv4l2_EXT_CONTROLS_SIZE)
        let name = set ? "VIDIOC_S_EXT_CTRLS" : "VIDIOC_G_EXT_CTRLS"
        let result: Result<Int64, SystemCallError> = item.withUnsafeMutableBytes { itemBytes in
            request.withUnsafeMutableBytes { requestBytes in
                cv4l2_ext_control_init(itemBytes.baseAddress!, control.id, value, is64)
                cv4l2_ext_controls_init(requestBytes.baseAddress!, 1, itemBytes.baseAddress!)
                do throws(SystemCallError) {
                    try ioctl(set ? cv4l2_VIDIOC_S_EXT_CTRLS : cv4l2_VIDIOC_G_EXT_CTRLS, name, bytes: requestBytes.baseAddress!)
                } catch { return .failure(error) }
                return .success(cv4l2_ext_control_value(itemBytes.baseAddress!, is64))
            }
        }
        switch result {
        case .success(let v): return v
        case .failure(let error):
            switch error.errno {
            case EACCES: throw .controlRejected(control: control.key, reason: set ? "it is read-only" : "it is write-only")
            case EBUSY:
                throw .controlRejected(control: control.key, reason: "it is grabbed by a running stream (stop capture to change it)")
            case ERANGE, EINVAL: throw .controlRejected(control: control.key, reason: "the driver refused \(value) (\(error))")
            default: throw Self.classify(error, path: path)
            }
        }
    }

    /// Subscribes to V4L2_EVENT_CTRL for `ids`; returns those the driver accepted.
    func subscribeControlEvents(_ ids: [UInt32]) -> [UInt32] {
        ids.filter { id in
            var sub = v4l2_event_subscription()
            sub.type = cv4l2_EVENT_CTRL
            sub.id = id
            return (try? rawErrnoIoctl(cv4l2_VIDIOC_SUBSCRIBE_EVENT, "VIDIOC_SUBSCRIBE_EVENT", &sub)) != nil
        }
    }

    /// The next pending control event, or nil when none is pending.
    func dequeueControlEvent() -> (id: UInt32, changes: UInt32, value: Int64, flags: UInt32)? {
        var event = v4l2_event()
        guard (try? rawErrnoIoctl(cv4l2_VIDIOC_DQEVENT, "VIDIOC_DQEVENT", &event)) != nil else { return nil }
        guard event.type == cv4l2_EVENT_CTRL else { return (event.id, 0, 0, 0) }
        let ctrl = event.u.ctrl
        let value = ctrl.type == V4L2_CTRL_TYPE_INTEGER64.rawValue ? ctrl.value64 : Int64(ctrl.value)
        return (event.id, ctrl.changes, value, ctrl.flags)
    }
}
