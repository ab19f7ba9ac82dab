@testable import KilnCodecs
import Testing

@Suite struct ExifOrientationTests {
    /// A TIFF with IFD0 holding `entries` (tag, type, value) in the given byte order.
    private func tiff(bigEndian: Bool, entries: [(UInt16, UInt16, UInt16)], exifPrefix: Bool = false) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] { bigEndian ? u16(UInt16(v >> 16)) + u16(UInt16(v & 0xFFFF)) : u16(UInt16(v & 0xFFFF)) + u16(UInt16(v >> 16)) }
        var bytes: [UInt8] = (bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + u16(42) + u32(8)
        bytes += u16(UInt16(entries.count))
        for (tag, type, value) in entries { bytes += u16(tag) + u16(type) + u32(1) + u16(value) + [0, 0] }
        bytes += u32(0)
        return exifPrefix ? Array("Exif".utf8) + [0, 0] + bytes : bytes
    }

    @Test(arguments: [false, true])
    func readsBothByteOrders(_ bigEndian: Bool) {
        for value in UInt16(1)...8 {
            let bytes = tiff(bigEndian: bigEndian, entries: [(0x010F, 2, 0), (0x0112, 3, value), (0x011A, 5, 0)])
            #expect(ExifOrientation.read(bytes) == Int(value))
            #expect(ExifOrientation.read(tiff(bigEndian: bigEndian, entries: [(0x0112, 3, value)], exifPrefix: true)) == Int(value))
        }
    }

    @Test func malformedPayloadsGiveOne() {
        let good = tiff(bigEndian: false, entries: [(0x0112, 3, 6)])
        #expect(ExifOrientation.read(good) == 6)
        for cut in 0..<(good.count - 6) { #expect(ExifOrientation.read(Array(good[0..<cut])) == 1) }   // truncated: never reads past the end
        #expect(ExifOrientation.read(tiff(bigEndian: false, entries: [(0x0112, 3, 9)])) == 1)        // out of range
        #expect(ExifOrientation.read(tiff(bigEndian: true, entries: [(0x0112, 4, 6)])) == 1)         // wrong type
        #expect(ExifOrientation.read(tiff(bigEndian: true, entries: [(0x0110, 3, 6)])) == 1)         // other tag only
        var badOffset = good
        badOffset[4] = 0xFF; badOffset[5] = 0xFF; badOffset[6] = 0xFF; badOffset[7] = 0x7F
        #expect(ExifOrientation.read(badOffset) == 1)
        #expect(ExifOrientation.read(Array("not a tiff at all".utf8)) == 1)
    }
}
