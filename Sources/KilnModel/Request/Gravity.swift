/// Where a crop (or the crop of a `fill` resize) is anchored: `g:<gravity>`, or the third
/// argument of `crop`.
public enum Gravity: Sendable, Hashable {
    case center
    case north, south, east, west
    case northEast, northWest, southEast, southWest
    /// A focal point: `fp:<x>:<y>`, each 0...1 of the width and height; the crop is centred on it
    /// as far as the image allows.
    case focalPoint(x: Double, y: Double)
    /// The most detailed region (edge energy), chosen by the processor.
    case smart

    /// The canonical spelling, e.g. `north`, `ne`, `fp:0.25:0.75`, `smart`.
    public var canonical: String {
        switch self {
        case .center: "center"
        case .north: "north"
        case .south: "south"
        case .east: "east"
        case .west: "west"
        case .northEast: "ne"
        case .northWest: "nw"
        case .southEast: "se"
        case .southWest: "sw"
        case .focalPoint(let x, let y): "fp:\(Gravity.format(x)):\(Gravity.format(y))"
        case .smart: "smart"
        }
    }

    /// Parses `name` (and, for `fp`, two more arguments). Nil when the name is no gravity or the
    /// focal point is not two numbers in 0...1.
    public static func parse(_ fields: ArraySlice<String>) -> Gravity? {
        guard let name = fields.first else { return nil }
        let rest = fields.dropFirst()
        if name == "fp" {
            guard rest.count == 2, let x = NumberGrammar.decimal(rest[rest.startIndex]), let y = NumberGrammar.decimal(rest[rest.startIndex + 1]),
                  (0...1).contains(x), (0...1).contains(y) else { return nil }
            return .focalPoint(x: x, y: y)
        }
        guard rest.isEmpty else { return nil }
        switch name {
        case "center", "centre", "ce": return .center
        case "north", "no", "n": return .north
        case "south", "so", "s": return .south
        case "east", "ea", "e": return .east
        case "west", "we", "w": return .west
        case "ne", "northeast": return .northEast
        case "nw", "northwest": return .northWest
        case "se", "southeast": return .southEast
        case "sw", "southwest": return .southWest
        case "smart", "sm": return .smart
        default: return nil
        }
    }

    /// The anchor of a compass gravity as fractions of the free space (0 = left/top, 1 = right/bottom).
    /// Nil for `smart`, which needs the pixels.
    public var anchor: (x: Double, y: Double)? {
        switch self {
        case .center: (0.5, 0.5)
        case .north: (0.5, 0)
        case .south: (0.5, 1)
        case .east: (1, 0.5)
        case .west: (0, 0.5)
        case .northEast: (1, 0)
        case .northWest: (0, 0)
        case .southEast: (1, 1)
        case .southWest: (0, 1)
        case .focalPoint(let x, let y): (x, y)
        case .smart: nil
        }
    }

    /// The origin of a `size` window inside `extent` (one axis) for this gravity's anchor `a`:
    /// compass anchors align edges; a focal point centres the window on it, clamped to the image.
    public func origin(extent: Double, window: Double, anchor a: Double) -> Double {
        let free = max(0, extent - window)
        if case .focalPoint = self {
            return min(free, max(0, a * extent - window / 2))
        }
        return free * a
    }

    /// A short decimal form for focal points: up to four decimals, no trailing zeros.
    static func format(_ v: Double) -> String {
        let scaled = (v * 10_000).rounded()
        let whole = Int(scaled) / 10_000
        var frac = String(Int(scaled) % 10_000)
        while frac.count < 4 { frac = "0" + frac }
        while frac.hasSuffix("0") { frac.removeLast() }
        return frac.isEmpty ? "\(whole)" : "\(whole).\(frac)"
    }
}
