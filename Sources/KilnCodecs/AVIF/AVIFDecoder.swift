import CAvif
import KilnModel

/// Decodes AVIF still images (the primary item; of an image sequence, the first frame) with
/// libavif 0.11 and dav1d, one thread.
///
/// - Header: `avifDecoderParse` reads the boxes only (no AV1 data is decoded): size (`ispe`),
///   alpha, bit depth, the `irot`/`imir` transforms, ICC profile, nclx, EXIF and XMP. The size is
///   checked against `DecodeLimits` before anything is decoded, and the same pixel limit is then
///   handed to libavif (`imageSizeLimit`, which dav1d also enforces), so an AV1 frame larger than
///   the header announced is refused as well.
/// - Orientation: libavif leaves `irot`/`imir` to the caller; they are mapped to the EXIF
///   orientation 1...8 of the header (`orientation(angle:mirror:)`) and applied by the pipeline
///   like EXIF. A file without either transform uses its EXIF orientation, if any; a file with
///   transforms ignores EXIF's (MIAF makes the boxes authoritative; avifenc writes both in agreement).
///   `clap` (clean aperture) and `pasp` are not applied.
/// - Colour: an ICC profile goes to the pipeline's colour conversion; nclx is handled by `CICPColour`.
///   10- and 12-bit images are converted to 8 bits by libavif (`avifImageYUVToRGB`); alpha is
///   returned unpremultiplied (RGBA), opaque images as RGB.
public struct AVIFDecoder: ImageDecoding, Sendable {
    public init() {}

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        try withParsed(data, limits: nil) { decoder, header, _ throws(DecodeError) in header }
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        guard let lib = AVIFLibrary.functions else { throw .unsupported(AVIFLibrary.missing) }
        return try withParsed(data, limits: options.limits) { decoder, header, extras throws(DecodeError) in
            let next = lib.avifDecoderNextImage(decoder)
            guard next == AVIF_RESULT_OK, let image = decoder.pointee.image else {
                throw .corrupt("AVIF decode failed: \(AVIFEncoder.describe(next))")
            }
            return DecodedImage(buffer: try Self.rgb(of: image, header: header, lib: lib), header: header,
                                iccProfile: extras.icc, metadata: extras.metadata)
        }
    }

    /// A decoded frame (`decoder.image`) as 8-bit RGB or RGBA, straight alpha; it must be the
    /// header's size.
    static func rgb(of image: UnsafeMutablePointer<avifImage>, header: ImageHeader, lib: kiln_avif_api) throws(DecodeError) -> PixelBuffer {
        guard Int(image.pointee.width) == header.width, Int(image.pointee.height) == header.height else {
            throw .corrupt("AVIF frame is \(image.pointee.width)x\(image.pointee.height), its header says \(header.width)x\(header.height)")
        }
        let channels = header.hasAlpha ? 4 : 3
        var rgb = avifRGBImage()
        lib.avifRGBImageSetDefaults(&rgb, image)
        rgb.depth = 8
        rgb.format = header.hasAlpha ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB
        rgb.alphaPremultiplied = AVIF_FALSE
        let rowBytes = header.width * channels
        rgb.rowBytes = UInt32(rowBytes)
        var result = AVIF_RESULT_OK
        let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * header.height) { buffer, initialized in
            rgb.pixels = buffer.baseAddress
            result = lib.avifImageYUVToRGB(image, &rgb)
            rgb.pixels = nil
            initialized = result == AVIF_RESULT_OK ? buffer.count : 0
        }
        guard result == AVIF_RESULT_OK else { throw .corrupt("AVIF colour conversion failed: \(AVIFEncoder.describe(result))") }
        return PixelBuffer(width: header.width, height: header.height, channels: channels, pixels: pixels)
    }

    /// Frames a sequence may announce before libavif refuses it (`limits.max_animation_frames`
    /// refuses far fewer for an animated render; a still render decodes the first alone).
    static let maxFrames: UInt32 = 100_000

    struct Extras {
        var icc: [UInt8]?
        var metadata: ImageMetadata?
    }

    /// Parses `data` (boxes only), builds the header, checks `limits` when given, then calls `body`
    /// with the parsed decoder (valid only inside `body`).
    func withParsed<T>(_ data: [UInt8], limits: DecodeLimits?,
                               _ body: (UnsafeMutablePointer<avifDecoder>, ImageHeader, Extras) throws(DecodeError) -> T) throws(DecodeError) -> T {
        guard !data.isEmpty else { throw .corrupt("empty AVIF data") }
        guard let lib = AVIFLibrary.functions else { throw .unsupported(AVIFLibrary.missing) }
        guard let decoder = lib.avifDecoderCreate() else { throw .corrupt("AVIF decoder could not be created (out of memory)") }
        defer { lib.avifDecoderDestroy(decoder) }
        decoder.pointee.maxThreads = 1
        decoder.pointee.codecChoice = AVIF_CODEC_CHOICE_AUTO   // dav1d first in Debian's build
        decoder.pointee.strictFlags = UInt32(AVIF_STRICT_DISABLED.rawValue)   // files without pixi / with odd clap still decode
        decoder.pointee.imageDimensionLimit = UInt32(ImageFormat.avif.maxDimension) * 2
        decoder.pointee.imageCountLimit = Self.maxFrames
        return try data.withUnsafeBufferPointer { bytes in Result { () throws(DecodeError) -> T in
            let io = lib.avifDecoderSetIOMemory(decoder, bytes.baseAddress, bytes.count)
            guard io == AVIF_RESULT_OK else { throw .corrupt("AVIF: \(AVIFEncoder.describe(io))") }
            let parsed = lib.avifDecoderParse(decoder)
            guard parsed == AVIF_RESULT_OK, let image = decoder.pointee.image else {
                throw Self.parseError(parsed)
            }
            let av = image.pointee
            var extras = Extras()
            var exif: [UInt8]?
            if av.exif.size > 0, let p = av.exif.data { exif = Self.tiff(Array(UnsafeBufferPointer(start: p, count: av.exif.size))) }
            var xmp: [UInt8]?
            if av.xmp.size > 0, let p = av.xmp.data { xmp = Array(UnsafeBufferPointer(start: p, count: av.xmp.size)) }
            let flags = av.transformFlags
            let hasRotation = flags & UInt32(AVIF_TRANSFORM_IROT.rawValue) != 0
            let hasMirror = flags & UInt32(AVIF_TRANSFORM_IMIR.rawValue) != 0
            let orientation = hasRotation || hasMirror
                ? Self.orientation(angle: hasRotation ? Int(av.irot.angle) : 0, mirror: hasMirror ? Int(av.imir.mode) : nil)
                : exif.map { ExifOrientation.read($0) } ?? 1
            extras.metadata = ImageMetadata(exif: exif.map { ExifOrientation.resettingOrientation($0) }, xmp: xmp).nonEmpty
            if av.icc.size > 0, let p = av.icc.data {
                extras.icc = Array(UnsafeBufferPointer(start: p, count: av.icc.size))
            } else {
                extras.icc = CICPColour.profile(primaries: Int(av.colorPrimaries), transfer: Int(av.transferCharacteristics))
            }
            let header = ImageHeader(format: .avif, width: Int(av.width), height: Int(av.height),
                                     frameCount: max(1, Int(decoder.pointee.imageCount)),
                                     orientation: orientation, hasAlpha: decoder.pointee.alphaPresent != AVIF_FALSE)
            if let limits {
                try limits.check(header)
                // Every grid's descriptor must match its ispe (`CodedLayout`); each AV1 frame must
                // fit its item's ispe: dav1d's frame size limit, libavif's imageSizeLimit, set after
                // the parse (libavif checks the grid's output size against it too), whatever the
                // boxes said.
                let layout = try CodedLayout.read(data, format: .avif)
                let frameLimit = layout?.largestCodedPixels ?? header.width * header.height
                decoder.pointee.imageSizeLimit = UInt32(clamping: min(frameLimit, limits.maxPixels, Int(AVIF_DEFAULT_IMAGE_SIZE_LIMIT)))
            }
            return try body(decoder, header, extras)
        } }.get()
    }

    /// An `irot` angle (0...3, anticlockwise quarter turns) followed by an `imir` mode (0: top and
    /// bottom exchanged, 1: left and right; nil: none) as the EXIF orientation that displays the
    /// same (HEIF applies the rotation first, then the mirror). Inverse of libavif's
    /// `avifImageExtractExifOrientationToIrotImir`.
    static func orientation(angle: Int, mirror: Int?) -> Int {
        switch (angle & 3, mirror) {
        case (0, nil): 1
        case (0, 1?), (2, 0?): 2
        case (2, nil): 3
        case (0, _?), (2, _?): 4          // mode 0 at angle 0; mode 1 at angle 2
        case (1, 0?), (3, 1?): 5
        case (3, nil): 6
        case (3, _?), (1, _?): 7          // mode 0 at angle 3; mode 1 at angle 1
        default: 8                        // (1, nil)
        }
    }

    /// EXIF as libavif returns it: TIFF bytes, possibly behind ISO BMFF's 4-byte offset to the
    /// TIFF header (or "Exif\0\0", which `ExifOrientation` skips itself).
    static func tiff(_ payload: [UInt8]) -> [UInt8] {
        let starts = { (b: ArraySlice<UInt8>) in
            b.starts(with: [0x49, 0x49, 0x2A, 0x00]) || b.starts(with: [0x4D, 0x4D, 0x00, 0x2A])
        }
        if starts(payload[...]) { return payload }
        if payload.count > 8 {
            let offset = Int(payload[0]) << 24 | Int(payload[1]) << 16 | Int(payload[2]) << 8 | Int(payload[3])
            if offset < payload.count - 4, starts(payload[(4 + offset)...]) { return Array(payload[(4 + offset)...]) }
        }
        return payload.count > 6 && payload.starts(with: Array("Exif".utf8) + [0, 0]) ? Array(payload[6...]) : payload
    }

    private static func parseError(_ result: avifResult) -> DecodeError {
        switch result {
        case AVIF_RESULT_INVALID_FTYP, AVIF_RESULT_NOT_IMPLEMENTED:
            .unsupported("AVIF: \(AVIFEncoder.describe(result))")
        default:
            .corrupt("AVIF header: \(AVIFEncoder.describe(result))")
        }
    }
}
