/// Facts read from an ICC profile's 128-byte header.
enum ICCProfileInfo {
    /// True when the profile's data colour space (header bytes 16-19) is 'RGB '. Encoders embed only
    /// such profiles: a CMYK profile from a CMYK JPEG no longer describes the RGB pixels it decoded to.
    static func isRGB(_ profile: [UInt8]) -> Bool {
        profile.count >= 128 && profile[16] == 0x52 && profile[17] == 0x47 && profile[18] == 0x42 && profile[19] == 0x20
    }
}
