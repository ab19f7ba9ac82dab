/// An opaque RGB colour from the URL or the configuration: `ff8800` or `#ff8800`.
public struct RGBColor: Sendable, Hashable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    public static let white = RGBColor(red: 255, green: 255, blue: 255)
    public static let black = RGBColor(red: 0, green: 0, blue: 0)

    /// Six hex digits, with or without a leading `#`; nil otherwise.
    public init?(hex text: String) {
        let hex = text.hasPrefix("#") ? text.dropFirst() : Substring(text)
        guard hex.count == 6, hex.allSatisfy(\.isHexDigit), let v = UInt32(hex, radix: 16) else { return nil }
        self.init(red: UInt8(v >> 16 & 0xff), green: UInt8(v >> 8 & 0xff), blue: UInt8(v & 0xff))
    }

    public var bytes: [UInt8] { [red, green, blue] }

    /// Lower-case hex without `#`: the canonical form.
    public var description: String {
        Hex.lowercase([red, green, blue])
    }
}
