import CHeif
import KilnModel

/// Decodes HEIC/HEIF still images (the primary image) with libheif 1.15 and libde265.
///
/// - Header: `heif_context_read_from_memory_without_copy` parses the boxes only; the stored size
///   (`ispe`) is checked against `DecodeLimits` before anything is decoded. libde265 allocates
///   what the sequence parameter sets say, whatever `ispe` says: `CodedLayout` holds every coded
///   item's SPS (and every grid's descriptor) to its `ispe` first, so a lying file is a 422
///   before any pixel is allocated. Files whose `ispe` is
///   over libheif's own security limit are refused by libheif at that point (also a 413).
/// - Orientation: libheif applies `irot`, `imir` and `clap` while decoding, so a file with `irot`
///   or `imir` gets the displayed size and orientation 1: its EXIF orientation is not applied
///   again (iPhones write both in agreement; HEIF makes the boxes authoritative). A file with
///   neither (libheif 1.15's `heif-enc` keeps a JPEG's EXIF orientation 6 and writes no `irot`)
///   uses its EXIF orientation, like every other format (`HEIFBoxes.hasTransforms`). EXIF is kept
///   for `strip:0` with its orientation reset to 1.
/// - Colour: an ICC profile (`prof`/`rICC`) goes to the pipeline's colour conversion; nclx is
///   handled by `CICPColour`. 10-bit images are converted to 8 bits by libheif; alpha is returned
///   unpremultiplied (RGBA), opaque images as RGB.
/// - Strict decoding (`strict_decoding`): a truncated or damaged file is refused (422), not decoded
///   with grey gaps. Tiles are decoded in the calling thread (`max_decoding_threads` 0).
public struct HEIFDecoder: ImageDecoding, Sendable {
    public init() {}

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        try withHandle(data) { handle throws(DecodeError) in try Self.header(handle, data: data).header }
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        guard let lib = HEIFLibrary.functions else { throw .unsupported(HEIFLibrary.missing) }
        return try withHandle(data) { handle throws(DecodeError) in
            let (header, exif) = try Self.header(handle, data: data)
            // The stored size is the one decoded (before irot), so it is what the limit checks.
            var stored = header
            stored.width = Int(lib.heif_image_handle_get_ispe_width(handle))
            stored.height = Int(lib.heif_image_handle_get_ispe_height(handle))
            try options.limits.check(stored)
            try options.limits.check(header)
            // libheif and libde265 trust ispe; a coded size that differs is refused before decoding.
            _ = try CodedLayout.read(data, format: .heic)

            guard let decodingOptions = lib.heif_decoding_options_alloc() else { throw .corrupt("HEIF: out of memory") }
            defer { lib.heif_decoding_options_free(decodingOptions) }
            if decodingOptions.pointee.version >= 3 { decodingOptions.pointee.strict_decoding = 1 }
            if decodingOptions.pointee.version >= 2 { decodingOptions.pointee.convert_hdr_to_8bit = 1 }
            var image: OpaquePointer?
            let chroma = header.hasAlpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB
            try Self.check(lib.heif_decode_image(handle, &image, heif_colorspace_RGB, chroma, decodingOptions), "decode")
            guard let image else { throw .corrupt("HEIF decode gave no image") }
            defer { lib.heif_image_release(image) }
            let width = Int(lib.heif_image_get_width(image, heif_channel_interleaved))
            let height = Int(lib.heif_image_get_height(image, heif_channel_interleaved))
            guard width == header.width, height == header.height,
                  lib.heif_image_get_bits_per_pixel_range(image, heif_channel_interleaved) == 8 else {
                throw .corrupt("HEIF image is \(width)x\(height), its header says \(header.width)x\(header.height)")
            }
            var stride: Int32 = 0
            guard let plane = lib.heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride) else {
                throw .corrupt("HEIF decode gave no pixels")
            }
            let channels = header.hasAlpha ? 4 : 3
            let rowBytes = width * channels
            guard Int(stride) >= rowBytes else { throw .corrupt("HEIF image rows are too short") }
            let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * height) { buffer, initialized in
                guard let dst = buffer.baseAddress else { return }
                for y in 0..<height {
                    (dst + y * rowBytes).update(from: plane + y * Int(stride), count: rowBytes)
                }
                initialized = rowBytes * height
            }
            return DecodedImage(buffer: PixelBuffer(width: width, height: height, channels: channels, pixels: pixels),
                                header: header, iccProfile: Self.iccProfile(handle),
                                metadata: ImageMetadata(exif: exif.exif.map { ExifOrientation.resettingOrientation($0) },
                                                        xmp: exif.xmp).nonEmpty)
        }
    }

    // MARK: - Handle

    private func withHandle<T>(_ data: [UInt8], _ body: (OpaquePointer) throws(DecodeError) -> T) throws(DecodeError) -> T {
        guard !data.isEmpty else { throw .corrupt("empty HEIF data") }
        guard let lib = HEIFLibrary.functions else { throw .unsupported(HEIFLibrary.missing) }
        guard let context = lib.heif_context_alloc() else { throw .corrupt("HEIF: out of memory") }
        defer { lib.heif_context_free(context) }
        lib.heif_context_set_max_decoding_threads(context, 0)
        return try data.withUnsafeBytes { bytes in
            Result { () throws(DecodeError) -> T in
                try Self.check(lib.heif_context_read_from_memory_without_copy(context, bytes.baseAddress, bytes.count, nil), "header")
                var handle: OpaquePointer?
                try Self.check(lib.heif_context_get_primary_image_handle(context, &handle), "primary image")
                guard let handle else { throw .corrupt("HEIF file has no primary image") }
                defer { lib.heif_image_handle_release(handle) }
                return try body(handle)
            }
        }.get()
    }

    /// The header and the metadata as stored (EXIF orientation not yet reset).
    private static func header(_ handle: OpaquePointer, data: [UInt8]) throws(DecodeError) -> (header: ImageHeader, exif: ImageMetadata) {
        guard let lib = HEIFLibrary.functions else { throw .unsupported(HEIFLibrary.missing) }
        let width = Int(lib.heif_image_handle_get_width(handle)), height = Int(lib.heif_image_handle_get_height(handle))
        guard width > 0, height > 0 else { throw .corrupt("HEIF image has no size") }
        let metadata = Self.metadata(handle)
        let orientation = HEIFBoxes.hasTransforms(data) ? 1 : metadata.exif.map { ExifOrientation.read($0) } ?? 1
        return (ImageHeader(format: .heic, width: width, height: height, frameCount: 1, orientation: orientation,
                            hasAlpha: lib.heif_image_handle_has_alpha_channel(handle) != 0), metadata)
    }

    private static func iccProfile(_ handle: OpaquePointer) -> [UInt8]? {
        guard let lib = HEIFLibrary.functions else { return nil }
        let type = lib.heif_image_handle_get_color_profile_type(handle)
        if type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC {
            let size = lib.heif_image_handle_get_raw_color_profile_size(handle)
            guard size > 0 else { return nil }
            var bytes = [UInt8](repeating: 0, count: size)
            return lib.heif_image_handle_get_raw_color_profile(handle, &bytes).code == heif_error_Ok ? bytes : nil
        }
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        guard lib.heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok, let nclx else { return nil }
        defer { lib.heif_nclx_color_profile_free(nclx) }
        return CICPColour.profile(primaries: Int(nclx.pointee.color_primaries.rawValue),
                                  transfer: Int(nclx.pointee.transfer_characteristics.rawValue))
    }

    /// EXIF (TIFF bytes, as stored) and XMP, if present.
    private static func metadata(_ handle: OpaquePointer) -> ImageMetadata {
        guard let lib = HEIFLibrary.functions else { return ImageMetadata() }
        var exif: [UInt8]?
        var xmp: [UInt8]?
        let count = Int(lib.heif_image_handle_get_number_of_metadata_blocks(handle, nil))
        guard count > 0 else { return ImageMetadata() }
        var ids = [heif_item_id](repeating: 0, count: count)
        let got = Int(lib.heif_image_handle_get_list_of_metadata_block_IDs(handle, nil, &ids, Int32(count)))
        for id in ids.prefix(got) {
            let size = lib.heif_image_handle_get_metadata_size(handle, id)
            guard size > 0, size <= 16 << 20 else { continue }
            var bytes = [UInt8](repeating: 0, count: size)
            guard lib.heif_image_handle_get_metadata(handle, id, &bytes).code == heif_error_Ok else { continue }
            let type = lib.heif_image_handle_get_metadata_type(handle, id).map { String(cString: $0) } ?? ""
            let contentType = lib.heif_image_handle_get_metadata_content_type(handle, id).map { String(cString: $0) } ?? ""
            if type == "Exif" {
                exif = AVIFDecoder.tiff(bytes)
            } else if type == "mime" && contentType == "application/rdf+xml" {
                xmp = bytes
            }
        }
        return ImageMetadata(exif: exif, xmp: xmp)
    }

    private static func check(_ error: heif_error, _ step: String) throws(DecodeError) {
        guard error.code != heif_error_Ok else { return }
        let message = error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)"
        if error.subcode == heif_suberror_Security_limit_exceeded {
            throw .overLimit("HEIF \(step): \(message)")
        }
        switch error.code {
        case heif_error_Unsupported_filetype, heif_error_Unsupported_feature:
            throw .unsupported("HEIF \(step): \(message)")
        default:
            throw .corrupt("HEIF \(step): \(message)")
        }
    }
}

/// HEIC is input only: `Codecs.encoder(for: .heic)` gives this, which refuses every image. The
/// pipeline never asks for it (no `f:heic`; `f:auto` never picks HEIC; a HEIC source without
/// `f:` is written as JPEG or PNG by `OutputOptions.resolvedFormat`).
public struct HEICUnsupportedEncoder: ImageEncoding, Sendable {
    public init() {}

    public func encode(_ image: PixelBuffer, options: EncodeOptions) throws(EncodeError) -> [UInt8] {
        throw .failed("HEIC output is not supported")
    }
}
