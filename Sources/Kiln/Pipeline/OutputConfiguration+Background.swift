import KilnCore

extension OutputConfiguration {
    /// `background` as a colour (the stored field keeps its byte form for the configuration
    /// loader; a malformed one, which the loader refuses, reads as white).
    public var backgroundColor: RGBColor {
        guard background.count == 3 else { return .white }
        return RGBColor(red: background[0], green: background[1], blue: background[2])
    }
}
