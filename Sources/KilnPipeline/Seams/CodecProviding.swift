import KilnModel

/// The decode stage: a decoder per sniffed format. Default: `CodecRegistry` (libjpeg-turbo,
/// libpng, libwebp).
public protocol ImageDecoderProviding {
    func decoder(for format: ImageFormat) -> any ImageDecoding
}

/// The encode stage: an encoder per output format. Default: `CodecRegistry`.
public protocol ImageEncoderProviding {
    func encoder(for format: ImageFormat) -> any ImageEncoding
    /// Whether `format` can be written here (its library is installed); `f:auto` skips formats
    /// that cannot. May load the library (AVIF's is loaded on first use).
    func canEncode(_ format: ImageFormat) -> Bool
}

extension ImageEncoderProviding {
    public func canEncode(_ format: ImageFormat) -> Bool { format.isEncodable }
}
