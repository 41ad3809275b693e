/// One control of a device — brightness, exposure time, white balance, zoom, or a driver's own —
/// as V4L2 describes it (VIDIOC_QUERY_EXT_CTRL): its range, step, default, menu and state.
///
/// ``CaptureDevice/controls()`` lists them with their current values; the device's exposure,
/// focus, white-balance and zoom properties are built on them.
public struct DeviceControl: Sendable, Equatable, Identifiable, CustomStringConvertible {
    /// What kind of value the control takes (V4L2's control types; the raw values are
    /// v4l2-ctl's names for them).
    public enum Kind: String, Sendable, Equatable, Codable {
        case integer = "int"
        case boolean = "bool"
        case menu, button
        case integer64 = "int64"
        case string = "str"
        case bitmask
        /// A menu whose items are numbers (V4L2_CTRL_TYPE_INTEGER_MENU).
        case integerMenu = "intmenu"
        /// A heading grouping the controls after it ("User Controls", "Camera Controls").
        case controlClass = "class"
        /// Arrays and structures (codec parameters): listed, not settable through FrameKit.
        case compound
    }

    /// V4L2's control flags.
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let disabled = Flags(rawValue: 0x0001)
        /// Held by a running stream (a format-changing control while streaming): setting it is refused.
        public static let grabbed = Flags(rawValue: 0x0002)
        public static let readOnly = Flags(rawValue: 0x0004)
        public static let update = Flags(rawValue: 0x0008)
        /// Has no effect now (a manual value while its automatic mode is on).
        public static let inactive = Flags(rawValue: 0x0010)
        public static let slider = Flags(rawValue: 0x0020)
        public static let writeOnly = Flags(rawValue: 0x0040)
        /// Changes by itself (a gain under automatic gain): read it again for the current value.
        public static let volatile = Flags(rawValue: 0x0080)
        public static let hasPayload = Flags(rawValue: 0x0100)
        public static let executeOnWrite = Flags(rawValue: 0x0200)
        public static let modifyLayout = Flags(rawValue: 0x0400)

        /// The names v4l2-ctl prints, in its order.
        public var names: [String] {
            let all: [(Flags, String)] = [
                (.disabled, "disabled"), (.grabbed, "grabbed"), (.readOnly, "read-only"), (.update, "update"),
                (.inactive, "inactive"), (.slider, "slider"), (.writeOnly, "write-only"), (.volatile, "volatile"),
                (.hasPayload, "has-payload"), (.executeOnWrite, "execute-on-write"), (.modifyLayout, "modify-layout")
            ]
            return all.filter { contains($0.0) }.map(\.1)
        }
    }

    /// One item of a menu control: its index (the value to set) and its name or number.
    public struct MenuItem: Sendable, Equatable {
        public var index: Int64
        /// The item's name; for integer menus, the number as text.
        public var name: String
        /// The item's number (integer menus only).
        public var value: Int64?
        public init(index: Int64, name: String, value: Int64? = nil) {
            self.index = index
            self.name = name
            self.value = value
        }
    }

    /// The V4L2 control ID (V4L2_CID_*), or a driver-private one.
    public var id: UInt32
    /// The driver's name for it ("White Balance Temperature").
    public var name: String
    /// The name as v4l2-ctl and FrameKit's `--control` take it: lower case, words joined by `_`
    /// ("white_balance_temperature").
    public var key: String
    public var kind: Kind
    public var minimum: Int64
    public var maximum: Int64
    public var step: Int64
    public var defaultValue: Int64
    /// The value when the controls were read; nil for buttons, classes, compound and
    /// write-only controls (which have none to read).
    public var value: Int64?
    public var flags: Flags
    /// Menu items the driver offers (menus skip indices they do not have).
    public var menu: [MenuItem]

    public init(
        id: UInt32, name: String, kind: Kind, minimum: Int64, maximum: Int64, step: Int64, defaultValue: Int64,
        value: Int64?, flags: Flags = [], menu: [MenuItem] = []
    ) {
        self.id = id
        self.name = name
        self.key = Self.key(for: name)
        self.kind = kind
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.defaultValue = defaultValue
        self.value = value
        self.flags = flags
        self.menu = menu
    }

    /// The V4L2 control class (ID & 0x0fff0000): user, camera, flash…
    public var controlClass: UInt32 { id & 0x0fff_0000 }

    /// Whether a value can be set at all (not a class heading, compound, read-only or disabled).
    public var isSettable: Bool {
        kind != .controlClass && kind != .compound && kind != .string && !flags.contains(.readOnly) && !flags.contains(.disabled)
    }

    /// Why `value` cannot be set on this control, or nil when it can: out of range, off the
    /// step, not a menu item, read-only. Checked before any ioctl.
    public func problem(setting value: Int64) -> String? {
        if !isSettable {
            return flags.contains(.readOnly) ? "\(key) is read-only" : "\(key) cannot be set (\(kind.rawValue))"
        }
        switch kind {
        case .button: return nil
        case .menu, .integerMenu:
            guard menu.contains(where: { $0.index == value }) else {
                return "\(key) has no menu item \(value) (items: \(menu.map { "\($0.index) \($0.name)" }.joined(separator: ", ")))"
            }
            return nil
        case .bitmask:
            return UInt64(truncatingIfNeeded: value) & ~UInt64(truncatingIfNeeded: maximum) == 0
                ? nil : "\(key) takes bits of \(String(maximum, radix: 16)), got \(String(value, radix: 16))"
        default:
            guard value >= minimum, value <= maximum else { return "\(key) must be in \(minimum)…\(maximum), got \(value)" }
            if step > 1, (value - minimum) % step != 0 {
                let below = value - (value - minimum) % step
                return "\(key) moves in steps of \(step) from \(minimum): \(below) or \(min(maximum, below + step)), not \(value)"
            }
            return nil
        }
    }

    /// The value a user wrote (`42`, `true`/`false`, a menu item's name or index) for this control.
    public func parse(_ text: String) -> Int64? {
        if let number = Int64(text) { return number }
        let lowered = text.lowercased()
        switch kind {
        case .boolean:
            if ["true", "on", "yes"].contains(lowered) { return 1 }
            if ["false", "off", "no"].contains(lowered) { return 0 }
            return nil
        case .menu, .integerMenu:
            return menu.first { Self.key(for: $0.name) == Self.key(for: text) }?.index
        default:
            return nil
        }
    }

    /// `name` as v4l2-ctl spells a control: lower case, every run of other characters one `_`,
    /// none at the ends ("Exposure Time, Absolute" → "exposure_time_absolute").
    public static func key(for name: String) -> String {
        var key = ""
        var gap = false
        for scalar in name.lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                if gap && !key.isEmpty { key.append("_") }
                key.unicodeScalars.append(scalar)
                gap = false
            } else {
                gap = true
            }
        }
        return key
    }

    /// One line as `v4l2-ctl --list-ctrls-menus` prints it.
    public var description: String {
        if kind == .controlClass { return "\n\(name)\n" }
        var text = "\(key) 0x\(String(id, radix: 16, uppercase: false)) (\(kind.rawValue))"
        switch kind {
        case .integer, .integer64: text += " : min=\(minimum) max=\(maximum) step=\(step) default=\(defaultValue)"
        case .boolean: text += " : default=\(defaultValue)"
        case .menu, .integerMenu: text += " : min=\(minimum) max=\(maximum) default=\(defaultValue)"
        case .bitmask: text += " : max=0x\(String(maximum, radix: 16)) default=0x\(String(defaultValue, radix: 16))"
        default: text += " :"
        }
        if let value { text += " value=\(value)" }
        if !flags.isEmpty { text += " flags=\(flags.names.joined(separator: ", "))" }
        for item in menu { text += "\n\t\(item.index): \(item.name)" }
        return text
    }

    /// What changed in a control, as V4L2_EVENT_CTRL reports it (or the virtual camera does).
    public struct Change: Sendable, Equatable {
        /// The device's ``CaptureDevice/uniqueID``.
        public var device: String
        public var id: UInt32
        public var key: String
        /// The new value (for a value change).
        public var value: Int64
        public var flags: Flags
        public var valueChanged: Bool
        public var flagsChanged: Bool
        public var rangeChanged: Bool
        public init(
            device: String, id: UInt32, key: String, value: Int64, flags: Flags, valueChanged: Bool, flagsChanged: Bool,
            rangeChanged: Bool
        ) {
            self.device = device
            self.id = id
            self.key = key
            self.value = value
            self.flags = flags
            self.valueChanged = valueChanged
            self.flagsChanged = flagsChanged
            self.rangeChanged = rangeChanged
        }
    }
}
