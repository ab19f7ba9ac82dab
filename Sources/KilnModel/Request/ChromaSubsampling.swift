/// JPEG chroma subsampling: how many colour (Cb, Cr) samples the encoder keeps per luma sample.
///
/// - `4:2:0` (the default, `output.jpeg_subsampling`): one colour sample per 2×2 pixels, the
///   smallest files; fine edges of saturated colour (red text on blue) blur a little.
/// - `4:2:2`: one per 2×1 pixels, sharper horizontal colour edges.
/// - `4:4:4`: one per pixel, colour as sharp as the luma; files are larger (10 % on the 12 MP
///   bench photo at q80) and the encode takes about 1.3× as long (`EncoderCost`).
///
/// Written `subsampling:444` (`ss`) in URLs, `"4:4:4"` or `"444"` in settings. Other outputs do
/// not use it: WebP lossy is always 4:2:0, PNG and lossless formats keep every sample.
public enum ChromaSubsampling: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case s444 = "444"
    case s422 = "422"
    case s420 = "420"

    /// `444`, `4:4:4`, … (the colons are optional); nil for anything else.
    public init?(spelling: String) {
        let digits = spelling.filter { $0 != ":" }
        guard digits.count == 3 else { return nil }
        self.init(rawValue: digits)
    }

    /// `4:4:4`, as settings and docs write it.
    public var description: String {
        rawValue.map(String.init).joined(separator: ":")
    }
}
