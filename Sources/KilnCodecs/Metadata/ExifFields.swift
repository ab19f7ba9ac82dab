/// The EXIF subset `f:json` reports (docs/url-api.md, "Image information and placeholders"):
/// camera, lens, date taken, exposure, and GPS when the configuration allows it. Read from the
/// TIFF bytes of an EXIF payload (IFD0, the Exif IFD at tag 0x8769, the GPS IFD at 0x8825);
/// every read is bounds-checked, a malformed field is left out, never fatal.
public struct ExifFields: Sendable, Equatable {
    /// IFD0 Make (0x010F) and Model (0x0110).
    public var make: String?
    public var model: String?
    /// Exif LensMake (0xA433) and LensModel (0xA434).
    public var lensMake: String?
    public var lensModel: String?
    /// Exif DateTimeOriginal (0x9003), else IFD0 DateTime (0x0132), as stored ("YYYY:MM:DD HH:MM:SS").
    public var dateTaken: String?
    /// ExposureTime (0x829A) in seconds, as the rational's numerator and denominator.
    public var exposureTime: (numerator: UInt32, denominator: UInt32)?
    /// FNumber (0x829D).
    public var fNumber: Double?
    /// ISOSpeedRatings / PhotographicSensitivity (0x8827).
    public var iso: Int?
    /// FocalLength (0x920A) in millimetres.
    public var focalLength: Double?
    /// Degrees, south and west negative (GPSLatitude/Ref, GPSLongitude/Ref), and metres above sea level.
    public var latitude: Double?
    public var longitude: Double?
    public var altitude: Double?

    public init() {}

    public static func == (a: ExifFields, b: ExifFields) -> Bool {
        a.make == b.make && a.model == b.model && a.lensMake == b.lensMake && a.lensModel == b.lensModel
            && a.dateTaken == b.dateTaken && a.exposureTime?.numerator == b.exposureTime?.numerator
            && a.exposureTime?.denominator == b.exposureTime?.denominator && a.fNumber == b.fNumber && a.iso == b.iso
            && a.focalLength == b.focalLength && a.latitude == b.latitude && a.longitude == b.longitude && a.altitude == b.altitude
    }

    /// The fields of `payload` (TIFF bytes, an "Exif\0\0" prefix tolerated); nil when it is no TIFF.
    public static func read(_ payload: [UInt8]) -> ExifFields? {
        var tiff = payload[...]
        if tiff.count >= 6, Array(tiff.prefix(6)) == [0x45, 0x78, 0x69, 0x66, 0, 0] { tiff = tiff.dropFirst(6) }
        guard let reader = TIFFReader(Array(tiff)), let ifd0 = reader.u32(at: 4) else { return nil }
        var fields = ExifFields()
        let main = reader.entries(at: Int(ifd0))
        fields.make = reader.ascii(main[0x010F])
        fields.model = reader.ascii(main[0x0110])
        let modified = reader.ascii(main[0x0132])
        if let pointer = main[0x8769].flatMap(reader.integer) {
            let exif = reader.entries(at: pointer)
            fields.dateTaken = reader.ascii(exif[0x9003])
            fields.lensMake = reader.ascii(exif[0xA433])
            fields.lensModel = reader.ascii(exif[0xA434])
            fields.exposureTime = exif[0x829A].flatMap { reader.rationals($0).first }
            fields.fNumber = exif[0x829D].flatMap { reader.rationals($0).first }.map(Self.value)
            fields.iso = exif[0x8827].flatMap(reader.integer)
            fields.focalLength = exif[0x920A].flatMap { reader.rationals($0).first }.map(Self.value)
        }
        fields.dateTaken = (fields.dateTaken ?? modified).flatMap(Self.possibleDate)
        if let pointer = main[0x8825].flatMap(reader.integer) {
            let gps = reader.entries(at: pointer)
            fields.latitude = degrees(reader, gps[0x0002], ref: reader.ascii(gps[0x0001]), negative: "S", limit: 90)
            fields.longitude = degrees(reader, gps[0x0004], ref: reader.ascii(gps[0x0003]), negative: "W", limit: 180)
            if let alt = gps[0x0006].flatMap({ reader.rationals($0).first }).map(Self.value), alt <= Self.maximumAltitude {
                fields.altitude = gps[0x0005].flatMap(reader.integer) == 1 ? -alt : alt
            }
        }
        return fields
    }

    /// Whether any GPS position is present.
    public var hasGPS: Bool { latitude != nil || longitude != nil }

    static func value(_ r: (numerator: UInt32, denominator: UInt32)) -> Double {
        r.denominator == 0 ? 0 : Double(r.numerator) / Double(r.denominator)
    }

    /// Metres above (or below) sea level beyond which an altitude is not a camera's: 100 km, the
    /// edge of space (the deepest trench is 11 km).
    static let maximumAltitude = 100_000.0

    /// Degrees, minutes and seconds as signed degrees; nil for an impossible position: minutes or
    /// seconds of 60 or more, or beyond `limit` degrees (90 for a latitude, 180 for a longitude).
    static func degrees(_ reader: TIFFReader, _ entry: TIFFReader.Entry?, ref: String?, negative: String, limit: Double) -> Double? {
        guard let entry else { return nil }
        let parts = reader.rationals(entry)
        guard parts.count == 3, parts.allSatisfy({ $0.denominator != 0 }) else { return nil }
        let minutes = value(parts[1]), seconds = value(parts[2])
        guard minutes < 60, seconds < 60 else { return nil }
        let d = value(parts[0]) + minutes / 60 + seconds / 3600
        guard d <= limit else { return nil }
        return ref == negative ? -d : d
    }

    /// `date` when it is a possible "YYYY:MM:DD HH:MM:SS" (EXIF's spelling; a year from 1800, a
    /// real day of the month, a leap second allowed); nil for anything else, such as
    /// "9999:99:99 99:99:99" or the blanks EXIF writes for an unknown date.
    public static func possibleDate(_ date: String) -> String? {
        let c = Array(date.utf8)
        guard c.count == 19, c[4] == UInt8(ascii: ":"), c[7] == UInt8(ascii: ":"), c[10] == UInt8(ascii: " "),
              c[13] == UInt8(ascii: ":"), c[16] == UInt8(ascii: ":") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var n = 0
            for i in range {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c[i]) else { return nil }
                n = n * 10 + Int(c[i] - UInt8(ascii: "0"))
            }
            return n
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
              let minute = number(14..<16), let second = number(17..<19),
              year >= 1800, (1...12).contains(month), hour < 24, minute < 60, second <= 60 else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day) ? date : nil
    }
}

/// Bounds-checked reads of a TIFF structure's IFD entries (types BYTE, ASCII, SHORT, LONG, RATIONAL).
struct TIFFReader {
    struct Entry {
        var type: Int
        var count: Int
        /// Where the value is: inside the entry (4 bytes or fewer) or at the offset it names.
        var valueOffset: Int
    }

    let bytes: [UInt8]
    let bigEndian: Bool

    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 8 else { return nil }
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: return nil
        }
        self.bytes = bytes
        guard u16(at: 2) == 42 else { return nil }
    }

    func u16(at offset: Int) -> Int? {
        guard offset >= 0, offset <= bytes.count - 2 else { return nil }
        let a = Int(bytes[offset]), b = Int(bytes[offset + 1])
        return bigEndian ? (a << 8 | b) : (b << 8 | a)
    }

    func u32(at offset: Int) -> UInt32? {
        guard let first = u16(at: offset), let second = u16(at: offset + 2) else { return nil }
        return bigEndian ? UInt32(first) << 16 | UInt32(second) : UInt32(second) << 16 | UInt32(first)
    }

    /// The entries of the IFD at `offset` by tag (at most 1000 read).
    func entries(at offset: Int) -> [Int: Entry] {
        guard let count = u16(at: offset) else { return [:] }
        var result: [Int: Entry] = [:]
        for index in 0..<min(count, 1000) {
            let at = offset + 2 + index * 12
            guard let tag = u16(at: at), let type = u16(at: at + 2), let n = u32(at: at + 4) else { break }
            let size = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1][type] ?? 0
            guard size > 0, n <= 1 << 20 else { continue }
            let valueOffset: Int
            if size * Int(n) <= 4 { valueOffset = at + 8 } else {
                guard let o = u32(at: at + 8) else { continue }
                valueOffset = Int(o)
            }
            guard valueOffset >= 0, valueOffset + size * Int(n) <= bytes.count else { continue }
            if result[tag] == nil { result[tag] = Entry(type: type, count: Int(n), valueOffset: valueOffset) }
        }
        return result
    }

    /// An ASCII value without its NUL and surrounding spaces; nil when empty or not ASCII.
    func ascii(_ entry: Entry?) -> String? {
        guard let entry, entry.type == 2 || entry.type == 7 else { return nil }
        var raw = bytes[entry.valueOffset..<entry.valueOffset + entry.count]
        if let nul = raw.firstIndex(of: 0) { raw = raw[..<nul] }
        guard raw.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        let text = String(decoding: raw, as: UTF8.self)
        let trimmed = text.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed()
        return trimmed.isEmpty ? nil : String(trimmed)
    }

    /// The first value of a BYTE, SHORT or LONG entry.
    func integer(_ entry: Entry) -> Int? {
        guard entry.count >= 1 else { return nil }
        switch entry.type {
        case 1: return Int(bytes[entry.valueOffset])
        case 3: return u16(at: entry.valueOffset)
        case 4: return u32(at: entry.valueOffset).map { Int($0) }
        default: return nil
        }
    }

    /// The values of a RATIONAL entry.
    func rationals(_ entry: Entry) -> [(numerator: UInt32, denominator: UInt32)] {
        guard entry.type == 5 else { return [] }
        return (0..<min(entry.count, 16)).compactMap { i in
            guard let n = u32(at: entry.valueOffset + 8 * i), let d = u32(at: entry.valueOffset + 8 * i + 4) else { return nil }
            return (n, d)
        }
    }
}
