import Glibc
import KilnModel

/// BlurHash (Wolt, https://blurha.sh; the reference TypeScript encoder's algorithm): the
/// image's DCT components in linear light, `x` × `y` of them, written in base 83. Alpha is
/// ignored, as in the reference: a transparent pixel counts with its stored colour. Meant for a
/// small image (`Placeholders` hands it at most 100 × 100 pixels).
public enum BlurHash {
    static let characters = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    /// The hash of `image` with `components` (1...9 per axis).
    public static func encode(_ image: PixelBuffer, components: BlurHashComponents = .standard) -> String {
        let w = image.width, h = image.height, ch = image.channels
        let linear = (0..<256).map { sRGBToLinear(Double($0)) }
        let cosX = (0..<components.x).map { i in (0..<w).map { x in cos(Double.pi * Double(i) * Double(x) / Double(w)) } }
        let cosY = (0..<components.y).map { j in (0..<h).map { y in cos(Double.pi * Double(j) * Double(y) / Double(h)) } }
        var factors: [(Double, Double, Double)] = []
        for j in 0..<components.y {
            for i in 0..<components.x {
                let normalisation = i == 0 && j == 0 ? 1.0 : 2.0
                var r = 0.0, g = 0.0, b = 0.0
                for y in 0..<h {
                    let fy = cosY[j][y]
                    var o = y * w * ch
                    for x in 0..<w {
                        let basis = fy * cosX[i][x]
                        r += basis * linear[Int(image.pixels[o])]
                        g += basis * linear[Int(image.pixels[o + 1])]
                        b += basis * linear[Int(image.pixels[o + 2])]
                        o += ch
                    }
                }
                let scale = normalisation / Double(w * h)
                factors.append((r * scale, g * scale, b * scale))
            }
        }
        var hash = encode83((components.x - 1) + (components.y - 1) * 9, length: 1)
        let ac = factors.dropFirst()
        var maximumValue = 1.0
        if ac.isEmpty {
            hash += encode83(0, length: 1)
        } else {
            let actualMax = ac.map { max(abs($0.0), abs($0.1), abs($0.2)) }.max() ?? 0
            let quantised = max(0, min(82, Int((actualMax * 166 - 0.5).rounded(.down))))
            maximumValue = Double(quantised + 1) / 166
            hash += encode83(quantised, length: 1)
        }
        let dc = factors[0]
        hash += encode83((linearToSRGB(dc.0) << 16) + (linearToSRGB(dc.1) << 8) + linearToSRGB(dc.2), length: 4)
        for f in ac {
            func q(_ v: Double) -> Int { max(0, min(18, Int((signPow(v / maximumValue, 0.5) * 9 + 9.5).rounded(.down)))) }
            hash += encode83(q(f.0) * 19 * 19 + q(f.1) * 19 + q(f.2), length: 2)
        }
        return hash
    }

    static func encode83(_ value: Int, length: Int) -> String {
        var result = ""
        var divisor = 1
        for _ in 1..<max(length, 1) { divisor *= 83 }
        for _ in 0..<length {
            result.append(characters[(value / divisor) % 83])
            divisor /= 83
        }
        return result
    }

    static func sRGBToLinear(_ value: Double) -> Double {
        let v = value / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    static func linearToSRGB(_ value: Double) -> Int {
        let v = max(0, min(1, value))
        return v <= 0.0031308 ? Int(v * 12.92 * 255 + 0.5) : Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    static func signPow(_ value: Double, _ exponent: Double) -> Double {
        (value < 0 ? -1 : 1) * pow(abs(value), exponent)
    }
}
