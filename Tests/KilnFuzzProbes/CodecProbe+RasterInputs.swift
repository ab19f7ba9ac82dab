import KilnCodecs
import KilnModel

extension CodecProbe {
    /// The decoders of issue 38's raster inputs on bytes (Fuzz/Sources/FuzzRasterInputs): the
    /// first byte picks `TIFFDecoder`, `BMPDecoder`, `ICODecoder` or `JXLDecoder` (its value mod 4)
    /// and, for a file of several pages, the page (its value / 4, mod the page count); the rest is
    /// the file. readHeader, the page's header, then decode under `limits`. The decoded image must
    /// be the size its header says, RGB or RGBA as `hasAlpha` says. nil for an input of one byte.
    public static func rasterInput(_ input: [UInt8], limits: DecodeLimits) throws(DecodeError) -> Summary? {
        guard let selector = input.first.map(Int.init), input.count > 1 else { return nil }
        let data = Array(input.dropFirst())
        let decoders: [any ImageDecoding] = [TIFFDecoder(), BMPDecoder(), ICODecoder(), JXLDecoder()]
        let decoder = decoders[selector % 4]
        var header = try decoder.readHeader(data)
        precondition(header.pageCount >= 1 && header.pageCount <= 1024, "page count \(header.pageCount)")
        var page: Int?
        if header.pageCount > 1, let paged = decoder as? any PagedDecoding {
            page = (selector / 4) % header.pageCount
            header = try paged.readHeader(data, page: page ?? 0)
        }
        let decoded = try decoder.decode(data, options: DecodeOptions(limits: limits, page: page))
        let buffer = decoded.buffer
        precondition(buffer.pixels.count == buffer.width * buffer.height * buffer.channels, "pixel count mismatch")
        precondition(buffer.size == header.size && decoded.header.size == header.size, "decoded \(buffer.size), header \(header.size)")
        precondition(buffer.channels == (decoded.header.hasAlpha ? 4 : 3), "channels disagree with hasAlpha")
        return Summary(orientation: header.orientation, iccProfileBytes: decoded.iccProfile?.count ?? 0, header: header)
    }
}
