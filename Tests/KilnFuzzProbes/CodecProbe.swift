import KilnCodecs
import KilnModel

/// The codecs' own parsers over arbitrary bytes, for the libFuzzer harnesses (`Fuzz/`) and the
/// unit test that replays their findings (`Tests/fuzz-regressions/`). Not part of the shipped
/// targets: this target (`KilnFuzzProbes`) is linked by the tests and the harnesses only.
///
/// The parsers are `package` in KilnCodecs (seen by the targets of Kiln's package, not by its
/// users); each probe runs one of them the way the decoders do and returns a small summary, so a
/// harness built against the release library (no `@testable`) exercises the same code. Every probe must return or throw `DecodeError` for any input: a trap,
/// a hang or a huge allocation is a bug.
public enum CodecProbe {
    /// What a probe saw, for the regression test's assertions.
    public struct Summary: Equatable, Sendable {
        public var orientation = 1
        public var iccProfileBytes = 0
        public var exifBytes = 0
        public var xmpBytes = 0
        public var header: ImageHeader?
    }

    /// The JPEG marker scan (headers and payloads), then TurboJPEG's header read.
    public static func jpegMarkers(_ data: [UInt8]) throws(DecodeError) -> Summary {
        var summary = data.withUnsafeBytes { bytes in
            let markers = JPEGMarkers.scan(bytes, collectPayloads: true)
            let light = JPEGMarkers.scan(bytes, collectPayloads: false)
            precondition(light.orientation == markers.orientation, "marker scans disagree")
            return Summary(orientation: markers.orientation, iccProfileBytes: markers.iccProfile?.count ?? 0,
                           exifBytes: markers.metadata?.exif?.count ?? 0, xmpBytes: markers.metadata?.xmp?.count ?? 0)
        }
        summary.header = try JPEGDecoder(colorConverter: nil).readHeader(data)
        return summary
    }

    /// The PNG chunk walk, eXIf / iTXt metadata, the iCCP read (libpng's low-level API), the
    /// header through libpng's simplified API, then the fast decode path against libpng's.
    public static func pngChunks(_ data: [UInt8]) throws(DecodeError) -> Summary {
        var summary = try data.withUnsafeBytes { bytes in
            Result { () throws(DecodeError) -> Summary in
                let chunks = try PNGChunks.scan(bytes)
                let metadata = PNGMetadata.read(bytes, chunks: chunks)
                let icc = chunks.hasICCProfile
                    ? try chunks.withLibpngBytes(bytes) { (shown: UnsafeRawBufferPointer) throws(DecodeError) -> [UInt8]? in
                        PNGDecoder.readICC(shown)
                    }
                    : nil
                return Summary(orientation: chunks.orientation(in: bytes), iccProfileBytes: icc?.count ?? 0,
                               exifBytes: metadata?.exif?.count ?? 0, xmpBytes: metadata?.xmp?.count ?? 0)
            }
        }.get()
        summary.header = try PNGDecoder().readHeader(data)
        data.withUnsafeBytes { pngFastPathAgrees($0) }
        return summary
    }

    /// The fast decode path (`PNGFastDecode`) against libpng's, for images up to 1 MP: where the
    /// fast path accepts the bytes, libpng must decode them too, to the same pixels.
    static func pngFastPathAgrees(_ bytes: UnsafeRawBufferPointer) {
        guard let chunks = try? PNGChunks.scan(bytes), let ihdr = chunks.ihdr,
              ihdr.width <= 1 << 20, ihdr.height <= 1 << 20, ihdr.width * ihdr.height <= 1 << 20,
              let fast = PNGFastDecode.decode(bytes, chunks: chunks) else { return }
        do throws(DecodeError) {
            let libpng = try PNGDecoder.decode(bytes, options: DecodeOptions(), fastPath: false).buffer
            precondition(libpng == fast, "the PNG fast path decoded other pixels than libpng")
        } catch {
            preconditionFailure("the PNG fast path decoded a file libpng refuses: \(error)")
        }
    }

    /// libwebp's demuxer over the RIFF container (canvas, frames, EXIF, ICCP, XMP), then the header.
    public static func webpContainer(_ data: [UInt8]) throws(DecodeError) -> Summary {
        var summary = data.withUnsafeBytes { bytes -> Summary in
            guard let container = WebPContainer(bytes) else { return Summary() }
            _ = (container.canvasWidth, container.canvasHeight, container.frameCount)
            let metadata = container.metadata
            return Summary(orientation: container.orientation, iccProfileBytes: container.iccProfile?.count ?? 0,
                           exifBytes: metadata?.exif?.count ?? 0, xmpBytes: metadata?.xmp?.count ?? 0)
        }
        summary.header = try WebPDecoder().readHeader(data)
        return summary
    }

    /// The EXIF reader: the orientation of a payload (TIFF bytes, optionally after "Exif\0\0"), and
    /// the copy with the orientation reset, which must keep the size and read back as 1 (or absent).
    public static func exif(_ data: [UInt8]) -> Summary {
        let orientation = ExifOrientation.read(data)
        let tiff = data.withUnsafeBytes { ExifOrientation.hasExifIdentifier($0) } ? Array(data[6...]) : data
        let reset = ExifOrientation.resettingOrientation(tiff)
        precondition(reset.count == tiff.count, "resetting the orientation changed the size")
        let nested = reset.withUnsafeBytes { ExifOrientation.hasExifIdentifier($0) }
        precondition(nested || ExifOrientation.read(reset) == 1, "the orientation reads \(ExifOrientation.read(reset)) after a reset")
        _ = ExifFields.read(data)   // f:json's EXIF subset: never traps on any bytes
        return Summary(orientation: orientation, exifBytes: reset.count)
    }

    /// An ICC profile through lcms2 as the colour conversion uses it: open, classify, sRGB check,
    /// and the transforms for RGB, RGBA and CMYK pixels applied to a few pixels.
    public static func iccProfile(_ data: [UInt8]) -> Summary {
        let converter = SRGBConverter(cacheCapacity: 1)
        let rgb = PixelBuffer(width: 4, height: 1, channels: 3, pixels: [0, 0, 0, 255, 255, 255, 255, 0, 0, 12, 200, 90])
        let rgba = PixelBuffer(width: 2, height: 1, channels: 4, pixels: [0, 0, 0, 0, 255, 128, 7, 255])
        let converted = converter.convertToSRGB(rgb, profile: data)
        let convertedAlpha = converter.convertToSRGB(rgba, profile: data)
        precondition(converted.pixels.count == rgb.pixels.count && convertedAlpha.pixels.count == rgba.pixels.count,
                     "colour conversion changed the pixel count")
        _ = converter.isIdentity(data)
        _ = SourceFacts.describe(data)   // f:json's colour profile name
        for inverted in [false, true] {
            if let cmyk = converter.convertCMYK([0, 0, 0, 0, 255, 255, 255, 255, 10, 200, 30, 0], inverted: inverted, profile: data) {
                precondition(cmyk.count == 9, "CMYK conversion gave \(cmyk.count) bytes for 3 pixels")
            }
        }
        return Summary(iccProfileBytes: data.count)
    }

    /// The whole decode path as the pipeline runs it: sniff, header, limits, decode (shrink-on-load
    /// when `minimumSize` is given), conversion to sRGB through the ICC profile. nil when the bytes
    /// are no image Kiln decodes; throws `DecodeError` as the pipeline would see it.
    public static func decodePath(_ data: [UInt8], sniffer: MagicSniffer, limits: DecodeLimits,
                                  minimumSize: PixelSize?, converter: SRGBConverter) throws(DecodeError) -> Summary? {
        guard let format = sniffer.sniff(data).format else { return nil }
        let decoder = Codecs.decoder(for: format)
        let header = try decoder.readHeader(data)
        try limits.check(header)
        let decoded = try decoder.decode(data, options: DecodeOptions(minimumSize: minimumSize, limits: limits))
        let buffer = decoded.buffer
        precondition(buffer.pixels.count == buffer.width * buffer.height * buffer.channels, "pixel count mismatch")
        precondition(buffer.width <= header.width && buffer.height <= header.height, "decoded larger than the header")
        if let profile = decoded.iccProfile {
            let converted = converter.convertToSRGB(buffer, profile: profile)
            precondition(converted.pixels.count == buffer.pixels.count, "colour conversion changed the size")
        }
        return Summary(orientation: header.orientation, iccProfileBytes: decoded.iccProfile?.count ?? 0,
                       exifBytes: decoded.metadata?.exif?.count ?? 0, xmpBytes: decoded.metadata?.xmp?.count ?? 0,
                       header: header)
    }
}
