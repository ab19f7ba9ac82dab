import CGif
import KilnModel

/// The GIF canvas: draws frames at their offsets with their palette and transparent index, and
/// applies each frame's disposal after it was shown. Pure Swift over an RGBA canvas; memory is
/// the canvas plus, for "restore to previous" frames, a copy of the frame's rectangle.
struct GIFCompositor {
    /// A Graphic Control Extension: applies to the next image only.
    struct Control: Equatable {
        var disposal = 0
        var transparentIndex: Int?
        var delayCentiseconds = 0
    }

    struct Rect: Equatable {
        var left: Int, top: Int, width: Int, height: Int
    }

    let width: Int
    let height: Int
    let hasAlpha: Bool
    private(set) var canvas: [UInt8]
    private var rect = Rect(left: 0, top: 0, width: 0, height: 0)
    private var disposal = 0
    /// The rectangle before the current frame (disposal 3), rows of the clipped rectangle.
    private var saved: [UInt8] = []

    init(canvas size: PixelSize, hasAlpha: Bool) {
        width = size.width
        height = size.height
        self.hasAlpha = hasAlpha
        canvas = [UInt8](repeating: 0, count: size.width * size.height * 4)
    }

    /// RGBA for each of the 256 indices; indices beyond the table are opaque black.
    static func palette(_ colors: UnsafeBufferPointer<GifColorType>) -> [UInt8] {
        var table = [UInt8](repeating: 0, count: 256 * 4)
        for i in 0..<256 { table[i * 4 + 3] = 255 }
        for (i, c) in colors.prefix(256).enumerated() {
            table[i * 4] = c.Red
            table[i * 4 + 1] = c.Green
            table[i * 4 + 2] = c.Blue
        }
        return table
    }

    /// The canvas row of the `stored`-th row of an interlaced frame (passes: every 8th row from
    /// 0, every 8th from 4, every 4th from 2, every 2nd from 1).
    static func interlacedRow(_ stored: Int, height: Int) -> Int {
        var n = stored
        for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
            let rows = start < height ? (height - start + step - 1) / step : 0
            if n < rows { return start + n * step }
            n -= rows
        }
        return stored
    }

    /// The part of `rect` on the canvas.
    private func clipped(_ r: Rect) -> (x0: Int, y0: Int, x1: Int, y1: Int) {
        (max(r.left, 0), max(r.top, 0), min(r.left + r.width, width), min(r.top + r.height, height))
    }

    /// Starts a frame: remembers its rectangle and disposal, and saves what it covers when it
    /// will be restored.
    mutating func begin(_ rect: Rect, control: Control) {
        self.rect = rect
        disposal = control.disposal
        saved.removeAll(keepingCapacity: true)
        guard disposal == 3 else { return }
        let c = clipped(rect)
        guard c.x1 > c.x0, c.y1 > c.y0 else { return }
        for y in c.y0..<c.y1 {
            saved.append(contentsOf: canvas[(y * width + c.x0) * 4..<(y * width + c.x1) * 4])
        }
    }

    /// Draws row `y` of the current frame (frame coordinates) from palette indices.
    mutating func draw(row: [UInt8], y: Int, palette: [UInt8], transparentIndex: Int?) {
        let cy = rect.top + y
        guard cy >= 0, cy < height else { return }
        let c = clipped(rect)
        guard c.x1 > c.x0 else { return }
        let transparent = transparentIndex ?? -1
        for cx in c.x0..<c.x1 {
            let index = Int(row[cx - rect.left])
            if index == transparent { continue }
            let o = (cy * width + cx) * 4
            canvas[o] = palette[index * 4]
            canvas[o + 1] = palette[index * 4 + 1]
            canvas[o + 2] = palette[index * 4 + 2]
            canvas[o + 3] = 255
        }
    }

    /// The frame as shown: a copy of the canvas, RGB when the animation has no alpha.
    func snapshot() -> PixelBuffer {
        if hasAlpha { return PixelBuffer(width: width, height: height, channels: 4, pixels: canvas) }
        let count = width * height
        let rgb = [UInt8](unsafeUninitializedCapacity: count * 3) { buffer, initialized in
            for i in 0..<count {
                buffer[i * 3] = canvas[i * 4]
                buffer[i * 3 + 1] = canvas[i * 4 + 1]
                buffer[i * 3 + 2] = canvas[i * 4 + 2]
            }
            initialized = count * 3
        }
        return PixelBuffer(width: width, height: height, channels: 3, pixels: rgb)
    }

    /// Applies the shown frame's disposal: 2 clears its rectangle, 3 restores it.
    mutating func dispose() {
        let c = clipped(rect)
        guard c.x1 > c.x0, c.y1 > c.y0 else { return }
        let rowBytes = (c.x1 - c.x0) * 4
        switch disposal {
        case 2:
            for y in c.y0..<c.y1 {
                let o = (y * width + c.x0) * 4
                for i in o..<o + rowBytes { canvas[i] = 0 }
            }
        case 3 where saved.count == rowBytes * (c.y1 - c.y0):
            for (n, y) in (c.y0..<c.y1).enumerated() {
                let o = (y * width + c.x0) * 4
                canvas.replaceSubrange(o..<o + rowBytes, with: saved[n * rowBytes..<(n + 1) * rowBytes])
            }
        default:
            break
        }
    }
}
