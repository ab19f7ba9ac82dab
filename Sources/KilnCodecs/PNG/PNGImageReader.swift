import CPNG
import KilnModel

/// One read through libpng's simplified API, from `png_image_begin_read_from_memory` to
/// `png_image_finish_read`.
///
/// libpng keeps the address of the `png_image` (its error handler finds the setjmp buffer
/// through it), so the struct lives on the heap at a fixed address rather than in a Swift
/// variable that may be copied or moved between the two calls. The bytes passed to `init`
/// must stay valid until `finishRead` returns.
final class PNGImageReader {
    private let image: UnsafeMutablePointer<png_image>

    /// Reads the chunks before the image data: size and format, no pixels.
    init(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw .corrupt("empty PNG data") }
        let image = UnsafeMutablePointer<png_image>.allocate(capacity: 1)
        image.initialize(to: png_image())
        image.pointee.version = UInt32(PNG_IMAGE_VERSION)
        image.pointee.opaque = nil
        guard png_image_begin_read_from_memory(image, base, bytes.count) != 0 else {
            let text = Self.message(of: image)
            png_image_free(image)
            image.deallocate()
            throw .corrupt(text)
        }
        self.image = image   // only now owned: deinit frees it
    }

    deinit {
        png_image_free(image)
        image.deallocate()
    }

    var width: Int { Int(image.pointee.width) }
    var height: Int { Int(image.pointee.height) }
    /// True when the file has an alpha channel or a tRNS chunk.
    var hasAlpha: Bool { image.pointee.format & UInt32(PNG_FORMAT_FLAG_ALPHA) != 0 }

    /// Decodes to 8-bit RGB or RGBA rows of `width * channels` bytes. 16-bit files without gAMA are
    /// taken as sRGB-encoded, not linear (`PNG_IMAGE_FLAG_16BIT_sRGB`).
    func finishRead(channels: Int) throws(DecodeError) -> [UInt8] {
        image.pointee.format = channels == 4
            ? UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA) : UInt32(PNG_FORMAT_FLAG_COLOR)
        image.pointee.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
        let rowBytes = width * channels
        var failed = false
        let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * height) { buffer, initialized in
            failed = png_image_finish_read(image, nil, buffer.baseAddress, Int32(rowBytes), nil) == 0
            initialized = failed ? 0 : rowBytes * height
        }
        guard !failed else { throw .corrupt(Self.message(of: image)) }
        return pixels
    }

    /// libpng's message for the last failure.
    private static func message(of image: UnsafeMutablePointer<png_image>) -> String {
        let text = withUnsafeBytes(of: &image.pointee.message) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return text.isEmpty ? "libpng could not read the image" : text
    }
}
