import KilnModel
import KilnPOSIX

/// Test instrumentation, off by default (`debug.sleep_decode`): a decode stage that blocks inside
/// the decode of a still image (or before the first frame of an animation, `SleepingAnimations`)
/// for as long as the source asks, then decodes it as the wrapped decoder does. A source asks with
/// the ASCII text `kiln-sleep-decode=<milliseconds>` (0...60000) in its first 64 KiB (a PNG `tEXt`
/// chunk, a JPEG or GIF comment), so the slowness belongs to the source
/// and not to the URL: the integration tests make a decode that runs into the render deadline
/// without depending on CPU speed. Never enable it in production: anyone who can place a file
/// could hold a worker for a minute.
public struct SleepingDecoders: ImageDecoderProviding {
    public static let marker = Array("kiln-sleep-decode=".utf8)
    public let wrapped: any ImageDecoderProviding

    public init(wrapping wrapped: any ImageDecoderProviding) {
        self.wrapped = wrapped
    }

    public func decoder(for format: ImageFormat) -> any ImageDecoding {
        SleepingDecoder(wrapped: wrapped.decoder(for: format))
    }

    /// The milliseconds `data` asks to sleep for, nil when it does not.
    public static func requestedSleep(_ data: [UInt8]) -> Int? {
        let end = min(data.count, 1 << 16)
        let m = marker
        guard end >= m.count else { return nil }
        var i = 0
        while i + m.count <= end {
            if data[i] == m[0] && data[i..<(i + m.count)].elementsEqual(m) {
                let digits = data[(i + m.count)...].prefix { $0 >= 0x30 && $0 <= 0x39 }.prefix(5)
                guard let ms = Int(String(decoding: digits, as: UTF8.self)) else { return nil }
                return min(ms, 60_000)
            }
            i += 1
        }
        return nil
    }
}

struct SleepingDecoder: ImageDecoding {
    let wrapped: any ImageDecoding

    func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        try wrapped.readHeader(data)
    }

    func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        if let ms = SleepingDecoders.requestedSleep(data) { Sleep.milliseconds(ms) }
        return try wrapped.decode(data, options: options)
    }
}

/// `SleepingDecoders` for the animation decoders (GIF, animated WebP): the sleep comes before the
/// first frame, inside `decodeFrames`.
public struct SleepingAnimations: AnimationCodecProviding {
    public let wrapped: any AnimationCodecProviding

    public init(wrapping wrapped: any AnimationCodecProviding) {
        self.wrapped = wrapped
    }

    public func animationDecoder(for format: ImageFormat) -> (any AnimationDecoding)? {
        wrapped.animationDecoder(for: format).map { SleepingAnimationDecoder(wrapped: $0) }
    }

    public func animationEncoder(for format: ImageFormat) -> (any AnimationEncoding)? {
        wrapped.animationEncoder(for: format)
    }
}

struct SleepingAnimationDecoder: AnimationDecoding {
    let wrapped: any AnimationDecoding

    func readAnimation(_ data: [UInt8]) throws(DecodeError) -> AnimationInfo {
        try wrapped.readAnimation(data)
    }

    func decodeFrames(_ data: [UInt8], _ body: (AnimationFrame) throws -> Bool) throws {
        if let ms = SleepingDecoders.requestedSleep(data) { Sleep.milliseconds(ms) }
        try wrapped.decodeFrames(data, body)
    }
}
