import KilnModel

/// An SVG's own size in CSS pixels, from its root's `width`, `height` and `viewBox`, as a
/// browser sizes an `<img>` of it: absolute lengths (`px`, `pt`, `pc`, `mm`, `cm`, `in`, and
/// `em`/`ex` at 16/8 px) win; a missing or relative one (`%`) comes from the viewBox's aspect
/// ratio, or the viewBox's own size; without either, 300 × 150 (CSS's default object size).
///
/// The sanitised document's root carries this size in pixels, so librsvg and the cost planner
/// agree on it.
struct SVGIntrinsicSize: Equatable {
    var width: Double
    var height: Double

    init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    init(root: SVGTree.Element) {
        let w = root.attribute("width").flatMap(Self.length)
        let h = root.attribute("height").flatMap(Self.length)
        let box = root.attribute("viewBox").map(SVGNumbers.parse)
        let viewBox: (w: Double, h: Double)? = box.flatMap { $0.count == 4 && $0[2] > 0 && $0[3] > 0 ? ($0[2], $0[3]) : nil }
        switch (w, h, viewBox) {
        case let (w?, h?, _): self.init(width: w, height: h)
        case let (w?, nil, box?): self.init(width: w, height: w * box.h / box.w)
        case let (nil, h?, box?): self.init(width: h * box.w / box.h, height: h)
        case let (nil, nil, box?): self.init(width: box.w, height: box.h)
        case let (w, h, nil): self.init(width: w ?? 300, height: h ?? 150)
        }
    }

    /// A length in CSS pixels; nil for a relative, empty, non-positive or malformed one.
    static func length(_ text: String) -> Double? {
        let t = text.trimmingASCIIWhitespace()
        let digits = t.prefix { ($0 >= "0" && $0 <= "9") || $0 == "." || $0 == "-" || $0 == "+" || $0 == "e" || $0 == "E" }
        // An exponent letter followed by no digit is the start of a unit ("em", "ex").
        var number = Substring(digits)
        var unit = t.dropFirst(digits.count)
        if let last = number.last, last == "e" || last == "E" {
            number = number.dropLast()
            unit = t.dropFirst(number.count)
        }
        guard let value = Double(number), value.isFinite, value > 0 else { return nil }
        let scale: Double? = switch unit.lowercased() {
        case "", "px": 1
        case "pt": 4.0 / 3
        case "pc": 16
        case "mm": 96 / 25.4
        case "cm": 96 / 2.54
        case "in": 96
        case "em": 16
        case "ex": 8
        default: nil
        }
        return scale.map { value * $0 }
    }
}

/// Number lists of SVG attributes (`viewBox`, `radius`, `order`), and numbers written back.
enum SVGNumbers {
    /// The numbers of a comma- or space-separated list; a malformed item ends the list.
    static func parse(_ text: String) -> [Double] {
        var numbers: [Double] = []
        for item in text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" || $0 == "\r" }) {
            guard let value = Double(item), value.isFinite else { break }
            numbers.append(value)
            if numbers.count >= 64 { break }
        }
        return numbers
    }

    /// `value` without a needless fraction (`300`, `377.953`).
    static func format(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int(rounded)) : String(rounded)
    }
}
