import CTurboJPEG
import KilnModel

/// Decodes JPEG with libjpeg-turbo's TurboJPEG API (v2, libjpeg-turbo 2.1), and with libjpeg's
/// own API the colour files whose sampling factors TurboJPEG cannot classify (`LibJPEGFallback`).
///
/// - Strict policy: every libjpeg warning ("Premature end of JPEG file", "Corrupt JPEG data: …",
///   "Inconsistent progression sequence …") is a `DecodeError.corrupt` carrying libjpeg's message,
///   and TurboJPEG's scan limit refuses progressive scan bombs.
/// - Shrink-on-load: the smallest DCT scaling factor M/8 whose output still covers
///   `DecodeOptions.minimumSize`; the header keeps the full size. A progressive file decoded
///   scaled first loses the scans that decode does not read (`ProgressiveScanPruner`).
/// - Output is RGB. Grey expands to RGB. CMYK and YCCK are decoded to raw CMYK (TurboJPEG
///   converts YCCK) and converted to sRGB through their embedded CMYK profile with lcms2
///   (`colorConverter`; Adobe APP14 files store inverted CMYK and are read as `TYPE_CMYK_8_REV`);
///   without a usable CMYK profile, with the naive formula (`CMYKConversion`).
/// - EXIF orientation, the ICC profile, EXIF and XMP come from a Swift scan of the marker segments.
public struct JPEGDecoder: ImageDecoding, Sendable {
    /// Converts CMYK through an embedded CMYK profile; nil: always the naive formula.
    public var colorConverter: SRGBConverter?
    /// Drops the scans of a progressive file that a scaled decode does not read (same pixels);
    /// false decodes every scan (tests compare the two).
    public var prunesProgressiveScans: Bool

    public init(colorConverter: SRGBConverter? = .shared, prunesProgressiveScans: Bool = true) {
        self.colorConverter = colorConverter
        self.prunesProgressiveScans = prunesProgressiveScans
    }

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        try data.withUnsafeBytes { bytes in
            Result { () throws(DecodeError) -> ImageHeader in
                let handle = try Self.makeHandle()
                return try Self.header(bytes, handle: handle).header
            }
        }.get()
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        try data.withUnsafeBytes { bytes in
            Result { () throws(DecodeError) -> DecodedImage in
                try Self.decode(bytes, options: options, colorConverter: colorConverter, prunes: prunesProgressiveScans)
            }
        }.get()
    }

    // MARK: - Implementation

    private struct HeaderInfo {
        var header: ImageHeader
        var isCMYK: Bool
        /// Sampling TurboJPEG cannot classify: decoded through libjpeg's API (`LibJPEGFallback`).
        var fallback: LibJPEGFallback.Info?
    }

    private static func makeHandle() throws(DecodeError) -> TurboJPEGHandle {
        guard let handle = TurboJPEGHandle.decompressor() else {
            throw .corrupt("TurboJPEG could not create a decompressor")
        }
        return handle
    }

    /// Reads the frame header with TurboJPEG (no pixels) and the orientation from the markers.
    private static func header(_ bytes: UnsafeRawBufferPointer, handle: TurboJPEGHandle) throws(DecodeError) -> HeaderInfo {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw .corrupt("empty JPEG data") }
        let markers = JPEGMarkers.scan(bytes, collectPayloads: false)
        if markers.hasTooManySegments {
            throw .corrupt("more than \(JPEGMarkers.maxSegments) marker segments before the first scan")
        }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let rc = tjDecompressHeader3(handle.raw, base.assumingMemoryBound(to: UInt8.self), UInt(bytes.count),
                                     &width, &height, &subsampling, &colorspace)
        guard rc == 0 else {
            guard LibJPEGFallback.applies(to: handle.errorMessage) else { throw handle.decodeError }
            let info = try LibJPEGFallback.header(bytes)
            var header = ImageHeader(format: .jpeg, width: info.width, height: info.height,
                                     frameCount: 1, orientation: markers.orientation, hasAlpha: false)
            header.hasColourProfile = markers.hasICCSegment
            return HeaderInfo(header: header, isCMYK: info.isCMYK, fallback: info)
        }
        var header = ImageHeader(format: .jpeg, width: Int(width), height: Int(height),
                                 frameCount: 1, orientation: markers.orientation, hasAlpha: false)
        header.hasColourProfile = markers.hasICCSegment
        let isCMYK = colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue)
        return HeaderInfo(header: header, isCMYK: isCMYK, fallback: nil)
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions,
                               colorConverter: SRGBConverter?, prunes: Bool) throws(DecodeError) -> DecodedImage {
        let handle = try makeHandle()
        let info = try header(bytes, handle: handle)
        try options.limits.check(info.header)

        let factor = TurboJPEGHandle.factor(for: info.header.size, minimum: options.minimumSize)
        var width = TurboJPEGHandle.scaled(info.header.width, factor)
        var height = TurboJPEGHandle.scaled(info.header.height, factor)
        let isCMYK = info.isCMYK
        let decoded: [UInt8]
        if prunes, factor.num < factor.denom, let pruned = ProgressiveScanPruner.prune(bytes, factor: factor) {
            (decoded, width, height) = try pruned.withUnsafeBytes { prunedBytes in
                Result { () throws(DecodeError) -> ([UInt8], Int, Int) in
                    try pixels(prunedBytes, info: info, factor: factor, width: width, height: height, handle: handle)
                }
            }.get()
        } else {
            (decoded, width, height) = try pixels(bytes, info: info, factor: factor, width: width, height: height, handle: handle)
        }

        let markers = JPEGMarkers.scan(bytes, collectPayloads: true)
        let rgb = isCMYK ? cmykToRGB(decoded, markers: markers, colorConverter: colorConverter) : decoded
        let buffer = PixelBuffer(width: width, height: height, channels: 3, pixels: rgb)
        return DecodedImage(buffer: buffer, header: info.header, iccProfile: markers.iccProfile,
                            metadata: markers.metadata)
    }

    /// The decoded pixels (RGB, or CMYK for CMYK files) at `factor`, `width`×`height` as planned.
    private static func pixels(_ bytes: UnsafeRawBufferPointer, info: HeaderInfo, factor: (num: Int, denom: Int),
                               width: Int, height: Int,
                               handle: TurboJPEGHandle) throws(DecodeError) -> ([UInt8], Int, Int) {
        if let fallback = info.fallback {
            return try LibJPEGFallback.decode(bytes, info: fallback, factor: factor)
        }
        let pixelFormat = info.isCMYK ? TJPF_CMYK : TJPF_RGB
        let channels = info.isCMYK ? 4 : 3
        let flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS
        var failed = false
        let decoded = [UInt8](unsafeUninitializedCapacity: width * height * channels) { buffer, initialized in
            let rc = tjDecompress2(handle.raw, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                   UInt(bytes.count), buffer.baseAddress, Int32(width), Int32(width * channels),
                                   Int32(height), pixelFormat.rawValue, flags)
            failed = rc != 0
            initialized = failed ? 0 : width * height * channels
        }
        guard !failed else { throw handle.decodeError }
        return (decoded, width, height)
    }

    /// Through the embedded CMYK profile when there is a usable one, else the naive formula.
    private static func cmykToRGB(_ cmyk: [UInt8], markers: JPEGMarkers, colorConverter: SRGBConverter?) -> [UInt8] {
        if let colorConverter, let profile = markers.iccProfile,
           let managed = colorConverter.convertCMYK(cmyk, inverted: markers.hasAdobeMarker, profile: profile) {
            return managed
        }
        return CMYKConversion.rgb(fromCMYK: cmyk, inverted: markers.hasAdobeMarker)
    }
}
