import CAvif
import KilnModel

/// Encodes AVIF with libavif 0.11 and libaom (Debian 12's build also links rav1e and SVT-AV1;
/// `AVIFEncoder.availableCodecs` says what is there at runtime).
///
/// - Quality: `options.quality` 1...100 is mapped to one AV1 quantizer 0...63 as libavif 1.0 maps
///   its `quality` (`(100 - q) * 63 / 100`, rounded), for colour and alpha alike; `lossless:1`
///   is quantizer 0 with 4:4:4 and the identity matrix. Lossy output is 8-bit 4:2:0, full range,
///   BT.601 matrix, tagged sRGB (nclx: BT.709 primaries, sRGB transfer), like the pixels it gets.
/// - Speed: `options.avifSpeed` 0 (slowest, smallest) ... 10 (fastest). Default 9.
/// - Threads: one (`maxThreads = 1`): a Kiln worker is one single-threaded process per core.
/// - EXIF and XMP (`strip:0`) are written as items; an RGB ICC profile (`icc:keep`) as the colour
///   box; without one the pixels are sRGB (the pipeline converts them).
///
/// Measured (2026-11-24, this machine, shared with two builds): CPU ms of `avifenc -j 1` (libavif
/// 0.11.1) and `cwebp` (median of 3 for WebP and the 1080p row), bytes, and SSIM against the
/// source (Tests/integration/imagemetrics.py). WebP is Kiln's default (q 80, method 2); each AVIF
/// column is at the quantizer whose SSIM is nearest WebP's (Q22 is Kiln's default quality 65):
///
///     image             WebP q80 m2            aom s9 (default)        aom s8                  aom s6                  rav1e s10
///     coffee 600x400    39062 B .9256  28 ms   34769 B .9253  36 ms    30788 B .9305 107 ms    30174 B .9365 269 ms    43583 B .9349 229 ms
///                                              (Q24, -11 %)            (Q24)                   (Q24)                   (Q24)
///     rocket 640x427    24376 B .9324  24 ms   26329 B .9307  33 ms    23244 B .9333  72 ms    -                       39181 B .9317 194 ms
///                                              (Q20, +8 %)             (Q20, -5 %)                                     (Q20)
///     photo 1920x1080   461414 B .9289 237 ms  435927 B .9314 230 ms   430325 B .9381 550 ms   -                       495146 B .9426 1435 ms
///                                              (Q22, -6 %)             (Q22)                                           (Q24)
///
/// Speed 10 gives the same bytes as 9 with libaom 3.6. SVT-AV1 (1.4) pays ~400 ms of start-up per
/// image, refuses odd sizes and maps libavif 0.11's quantizers differently (coffee at Q40: 38352 B,
/// .9474, 442 ms); rav1e is 5-6x slower than aom s9 for more bytes. So: aom at speed 9 matches
/// WebP's SSIM in about the same CPU and 6-11 % fewer bytes on two photos of three (8 % more on
/// the small rocket); speed 8 saves about 5 % more for 2.3-3x the CPU, speed 6 for 8x. Two
/// threads (`avifenc -j 2`, 1080p) gave the same wall time as one: libavif 0.11 encodes one tile,
/// so `maxThreads` stays 1 (and a worker is one core by design).
public struct AVIFEncoder: ImageEncoding, Sendable {
    /// The AV1 encoder libavif is asked for. aom: the measured best speed/size trade-off.
    public static let codec = AVIF_CODEC_CHOICE_AOM

    public init() {}

    /// The AV1 codecs libavif was built with, e.g. `dav1d [dec]:1.0.0, aom [enc/dec]:3.6.0, ...`.
    public static var availableCodecs: String {
        guard let lib = AVIFLibrary.functions else { return AVIFLibrary.missing }
        var buffer = [CChar](repeating: 0, count: 256)
        lib.avifCodecVersions(&buffer)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// libavif 1.0's quality → quantizer mapping (quality 100 is lossless-grade quantizer 0).
    public static func quantizer(quality: Int) -> Int32 {
        let q = min(max(quality, 0), 100)
        return Int32(((100 - q) * 63 + 50) / 100)
    }

    public func encode(_ image: PixelBuffer, options: EncodeOptions) throws(EncodeError) -> [UInt8] {
        guard let lib = AVIFLibrary.functions else { throw .failed(AVIFLibrary.missing) }
        let avif = try Self.makeImage(image, options: options, lib: lib)
        defer { lib.avifImageDestroy(avif) }
        if let exif = options.metadata?.exif, !exif.isEmpty { lib.avifImageSetMetadataExif(avif, exif, exif.count) }
        if let xmp = options.metadata?.xmp, !xmp.isEmpty { lib.avifImageSetMetadataXMP(avif, xmp, xmp.count) }
        if let profile = options.iccProfile, ICCProfile.isRGB(profile) { lib.avifImageSetProfileICC(avif, profile, profile.count) }
        let encoder = try Self.makeEncoder(options: options, lib: lib)
        defer { lib.avifEncoderDestroy(encoder) }
        var output = avifRWData()
        defer { lib.avifRWDataFree(&output) }
        let written = lib.avifEncoderWrite(encoder, avif, &output)
        guard written == AVIF_RESULT_OK, let data = output.data, output.size > 0 else {
            throw .failed("AVIF encode failed: \(Self.describe(written))")
        }
        return Array(UnsafeBufferPointer(start: data, count: output.size))
    }

    /// `image` as an 8-bit YUV `avifImage` (4:2:0, or 4:4:4 identity for `lossless`), full range,
    /// tagged sRGB; the caller destroys it.
    static func makeImage(_ image: PixelBuffer, options: EncodeOptions, lib: kiln_avif_api) throws(EncodeError) -> UnsafeMutablePointer<avifImage> {
        guard image.channels == 3 || image.channels == 4, image.width > 0, image.height > 0,
              image.width <= ImageFormat.avif.maxDimension, image.height <= ImageFormat.avif.maxDimension,
              image.pixels.count == image.width * image.height * image.channels else {
            throw .failed("AVIF encoder needs a non-empty RGB or RGBA buffer of at most \(ImageFormat.avif.maxDimension) pixels a side")
        }
        guard lib.avifCodecName(Self.codec, avifCodecFlags(AVIF_CODEC_FLAG_CAN_ENCODE.rawValue)) != nil else {
            throw .failed("libavif has no aom encoder (codecs: \(Self.availableCodecs))")
        }
        let yuv = options.lossless ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420
        guard let avif = lib.avifImageCreate(UInt32(image.width), UInt32(image.height), 8, yuv) else {
            throw .failed("AVIF encode failed: out of memory")
        }
        avif.pointee.yuvRange = AVIF_RANGE_FULL
        avif.pointee.colorPrimaries = UInt16(AVIF_COLOR_PRIMARIES_BT709)
        avif.pointee.transferCharacteristics = UInt16(AVIF_TRANSFER_CHARACTERISTICS_SRGB)
        avif.pointee.matrixCoefficients = UInt16(options.lossless ? AVIF_MATRIX_COEFFICIENTS_IDENTITY
                                                                  : AVIF_MATRIX_COEFFICIENTS_BT601)
        var rgb = avifRGBImage()
        lib.avifRGBImageSetDefaults(&rgb, avif)
        rgb.depth = 8
        rgb.format = image.channels == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB
        rgb.rowBytes = UInt32(image.rowBytes)
        var pixels = image.pixels
        let converted = pixels.withUnsafeMutableBufferPointer { buffer in
            rgb.pixels = buffer.baseAddress
            defer { rgb.pixels = nil }
            return lib.avifImageRGBToYUV(avif, &rgb)   // allocates the YUV (and alpha) planes
        }
        guard converted == AVIF_RESULT_OK else {
            lib.avifImageDestroy(avif)
            throw .failed("AVIF encode failed: \(Self.describe(converted))")
        }
        return avif
    }

    /// An aom encoder at the options' speed and quality, one thread; the caller destroys it.
    static func makeEncoder(options: EncodeOptions, lib: kiln_avif_api) throws(EncodeError) -> UnsafeMutablePointer<avifEncoder> {
        guard let encoder = lib.avifEncoderCreate() else { throw .failed("AVIF encoder could not be created") }
        encoder.pointee.codecChoice = Self.codec
        encoder.pointee.maxThreads = 1
        encoder.pointee.speed = Int32(min(max(options.avifSpeed, 0), 10))
        let quantizer = options.lossless ? 0 : Self.quantizer(quality: options.quality)
        encoder.pointee.minQuantizer = quantizer
        encoder.pointee.maxQuantizer = quantizer
        encoder.pointee.minQuantizerAlpha = quantizer
        encoder.pointee.maxQuantizerAlpha = quantizer
        return encoder
    }

    static func describe(_ result: avifResult) -> String {
        guard let lib = AVIFLibrary.functions, let text = lib.avifResultToString(result) else { return "result \(result.rawValue)" }
        return String(cString: text)
    }
}
