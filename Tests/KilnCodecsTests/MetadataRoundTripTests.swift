import KilnModel
@testable import KilnCodecs
import Testing

/// EXIF and XMP (`strip:0`): decoders expose them with the orientation tag rewritten to 1, and
/// every encoder writes them back where its format keeps them.
@Suite struct MetadataRoundTripTests {
    /// A TIFF block with IFD0 holding Make ("Kiln test", stored after the IFD) and Orientation.
    static func tiff(orientation: UInt16, bigEndian: Bool = false) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] { bigEndian ? u16(UInt16(v >> 16)) + u16(UInt16(v & 0xFFFF)) : u16(UInt16(v & 0xFFFF)) + u16(UInt16(v >> 16)) }
        let make = Array("Kiln test".utf8) + [0]
        var bytes: [UInt8] = (bigEndian ? Array("MM".utf8) : Array("II".utf8)) + u16(42) + u32(8)
        bytes += u16(2)                                                          // two entries
        bytes += u16(0x010F) + u16(2) + u32(UInt32(make.count)) + u32(8 + 2 + 24 + 4)
        bytes += u16(0x0112) + u16(3) + u32(1) + u16(orientation) + u16(0)
        bytes += u32(0)                                                          // no IFD1
        return bytes + make
    }

    static let xmp = Array("""
        <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">\
        <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" \
        xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:creator>Kiln – test</dc:creator></rdf:Description>\
        </rdf:RDF></x:xmpmeta><?xpacket end="w"?>
        """.utf8)

    let image = PixelHelpers.gradient(width: 40, height: 24, channels: 3)

    @Test func orientationIsRewrittenToOneInBothByteOrders() {
        for bigEndian in [false, true] {
            let original = Self.tiff(orientation: 6, bigEndian: bigEndian)
            #expect(ExifOrientation.read(original) == 6)
            let reset = ExifOrientation.resettingOrientation(original)
            #expect(ExifOrientation.read(reset) == 1)
            #expect(reset == Self.tiff(orientation: 1, bigEndian: bigEndian))   // nothing else changed
        }
        let junk: [UInt8] = [1, 2, 3, 4, 5]
        #expect(ExifOrientation.resettingOrientation(junk) == junk)
    }

    // GIF and ICO carry no EXIF or XMP (Kiln writes none into them).
    @Test(arguments: ImageFormat.allCases.filter { $0.isEncodable && $0 != .gif && $0 != .ico })
    func metadataRoundTrips(_ format: ImageFormat) throws {
        let metadata = ImageMetadata(exif: Self.tiff(orientation: 8), xmp: Self.xmp)
        let data = try Codecs.encoder(for: format).encode(image, options: EncodeOptions(format: format, metadata: metadata))
        let decoder = Codecs.decoder(for: format)
        // The stored tag still says 8 (pixels as given), the decoded metadata says 1.
        #expect(try decoder.readHeader(data).orientation == 8)
        let back = try decoder.decode(data, options: DecodeOptions())
        #expect(back.metadata?.exif == Self.tiff(orientation: 1))
        #expect(back.metadata?.xmp == Self.xmp)
        #expect(back.buffer.size == image.size)
    }

    // GIF and ICO carry no EXIF or XMP (Kiln writes none into them).
    @Test(arguments: ImageFormat.allCases.filter { $0.isEncodable && $0 != .gif && $0 != .ico })
    func noMetadataMeansNone(_ format: ImageFormat) throws {
        let data = try Codecs.encoder(for: format).encode(image, options: EncodeOptions(format: format))
        #expect(try Codecs.decoder(for: format).decode(data, options: DecodeOptions()).metadata == nil)
        let exifOnly = try Codecs.encoder(for: format).encode(image, options: EncodeOptions(format: format, metadata: ImageMetadata(exif: Self.tiff(orientation: 1))))
        let back = try Codecs.decoder(for: format).decode(exifOnly, options: DecodeOptions()).metadata
        #expect(back == ImageMetadata(exif: Self.tiff(orientation: 1)))
    }

    @Test func cameraJPEGExposesExifWithOrientationOne() throws {
        let decoded = try JPEGDecoder().decode(Corpus.data("exif_Portrait_6.jpg"), options: DecodeOptions(minimumSize: PixelSize(width: 100, height: 100)))
        #expect(decoded.header.orientation == 6)
        let exif = try #require(decoded.metadata?.exif)
        #expect(exif.starts(with: Array("II".utf8)) || exif.starts(with: Array("MM".utf8)))
        #expect(ExifOrientation.read(exif) == 1)
    }

    @Test func webpExifWithIdentifierPrefixIsNormalised() throws {
        let prefixed = JPEGMetadata.exifSignature + Self.tiff(orientation: 3)
        // The muxer writes the chunk as given; the decoder drops the "Exif\0\0" some writers add.
        let data = try WebPEncoder().encode(image, options: EncodeOptions(format: .webp, metadata: ImageMetadata(exif: prefixed)))
        #expect(try WebPDecoder().readHeader(data).orientation == 3)
        #expect(try WebPDecoder().decode(data, options: DecodeOptions()).metadata?.exif == Self.tiff(orientation: 1))
    }

    @Test func oversizedJPEGExifIsLeftOutNotFatal() throws {
        let huge = Self.tiff(orientation: 1) + [UInt8](repeating: 0, count: 70_000)
        let data = try JPEGEncoder().encode(image, options: EncodeOptions(format: .jpeg, metadata: ImageMetadata(exif: huge, xmp: Self.xmp)))
        let back = try JPEGDecoder().decode(data, options: DecodeOptions())
        #expect(back.metadata == ImageMetadata(xmp: Self.xmp))
    }

    @Test func compressedOrForeignITXtIsNotXMP() {
        let keyword = PNGMetadata.xmpKeyword
        let plain = keyword + [0, 0, 0] + Array("en".utf8) + [0, 0] + Array("<x/>".utf8)
        let compressed = keyword + [0, 1, 0, 0, 0] + [0x78, 0x9C]
        let other = Array("Comment".utf8) + [0, 0, 0, 0, 0] + Array("<x/>".utf8)
        #expect(plain.withUnsafeBytes { PNGMetadata.xmpPacket($0) } == Array("<x/>".utf8))
        #expect(compressed.withUnsafeBytes { PNGMetadata.xmpPacket($0) } == nil)
        #expect(other.withUnsafeBytes { PNGMetadata.xmpPacket($0) } == nil)
    }
}
