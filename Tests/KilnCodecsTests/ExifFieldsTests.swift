import KilnModel
import Testing
@testable import KilnCodecs

/// The EXIF subset of `f:json`, on a payload Pillow wrote (big-endian TIFF with an Exif IFD and a
/// GPS IFD; the values below are the ones it was given), and on broken payloads.
@Suite struct ExifFieldsTests {
    static let pillowExif: [UInt8] = hex("4578696600004d4d002a000000080005010f00020000000f0000004a01100002000000044b2d310001320002000000140000005a87690004"
        + "000000010000006e8825000400000001000000f8000000004b696c6e2043616d65726120436f0000323032303a30313a30322030333a3034"
        + "3a3035000006829a000500000001000000bc829d000500000001000000c48827000300000001019000009003000200000014000000cc920a"
        + "000500000001000000e0a43400020000000f000000e80000000000000001000000fa0000000e00000005323031393a30363a30372030383a"
        + "30393a31300000000032000000014b696c6e2035306d6d2046312e3800000006000100020000000253000000000200050000000300000146"
        + "00030002000000024500000000040005000000030000015e0005000100000001000000000006000500000001000001760000000000000021"
        + "000000010000003300000001000002640000001900000097000000010000000c0000000100000003000000010000003a00000001")

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var chars = Array(text.utf8)[...]
        while chars.count >= 2 {
            bytes.append(UInt8(String(decoding: chars.prefix(2), as: UTF8.self), radix: 16)!)
            chars = chars.dropFirst(2)
        }
        return bytes
    }

    @Test func readsTheSubset() throws {
        let f = try #require(ExifFields.read(Self.pillowExif))
        #expect(f.make == "Kiln Camera Co" && f.model == "K-1")
        #expect(f.lensModel == "Kiln 50mm F1.8" && f.lensMake == nil)
        #expect(f.dateTaken == "2019:06:07 08:09:10", "DateTimeOriginal wins over IFD0 DateTime")
        #expect(f.exposureTime?.numerator == 1 && f.exposureTime?.denominator == 250)
        #expect(f.fNumber == 2.8 && f.iso == 400 && f.focalLength == 50)
        let lat = try #require(f.latitude), lon = try #require(f.longitude)
        #expect(abs(lat - -(33 + 51.0 / 60 + 24.48 / 3600)) < 1e-9)
        #expect(abs(lon - (151 + 12.0 / 60 + 3.0 / 3600)) < 1e-9)
        #expect(f.altitude == 58)
    }

    @Test func withoutTheIdentifierToo() {
        #expect(ExifFields.read(Array(Self.pillowExif.dropFirst(6))) == ExifFields.read(Self.pillowExif))
    }

    @Test func brokenPayloadsReadNothingAndNeverTrap() {
        #expect(ExifFields.read([]) == nil)
        #expect(ExifFields.read(Array("II*".utf8)) == nil)
        // Every truncation of a real payload reads without trapping.
        for n in stride(from: 0, to: Self.pillowExif.count, by: 7) { _ = ExifFields.read(Array(Self.pillowExif.prefix(n))) }
        // Offsets pointing anywhere.
        var corrupted = Self.pillowExif
        for i in stride(from: 10, to: corrupted.count, by: 5) { corrupted[i] = 0xFF }
        _ = ExifFields.read(corrupted)
    }

    @Test func onlyPossibleDatesAreKept() {
        for good in ["2019:06:07 08:09:10", "2024:02:29 23:59:60", "1800:01:01 00:00:00", "2000:02:29 12:00:00"] {
            #expect(ExifFields.possibleDate(good) == good)
        }
        for bad in ["9999:99:99 99:99:99", "    :  :     :  :  ", "2023:02:29 12:00:00", "1900:02:29 12:00:00", "2019:04:31 08:09:10",
                    "2019:13:07 08:09:10", "2019:06:07 24:00:00", "2019:06:07 08:60:10", "1799:12:31 23:59:59", "2019-06-07 08:09:10",
                    "2019:06:07T08:09:10", "2019:06:07 08:09:1", "２019:06:07 08:09:10", ""] {
            #expect(ExifFields.possibleDate(bad) == nil, "\(bad)")
        }
    }

    @Test func iccDescriptions() {
        // A v2 'desc' tag: header (128), tag count 1, the entry, then the tag.
        var profile = [UInt8](repeating: 0, count: 128) + [0, 0, 0, 1] + Array("desc".utf8) + [0, 0, 0, 144, 0, 0, 0, 26]
        profile += Array("desc".utf8) + [0, 0, 0, 0] + [0, 0, 0, 10] + Array("Kiln RGB\0\0".utf8) + [0, 0, 0, 0]
        #expect(SourceFacts.describe(profile) == "Kiln RGB")
        #expect(SourceFacts.describe([1, 2, 3]) == "embedded")
    }
}
