import KilnCore

/// The decode stage: a decoder per sniffed format. Default: `CodecRegistry` (libjpeg-turbo,
/// libpng, libwebp).
public protocol ImageDecoderProviding {
    func decoder(for format: ImageFormat) -> any ImageDecoding
}

/// The encode stage: an encoder per output format. Default: `CodecRegistry`.
public protocol ImageEncoderProviding {
    func encoder(for format: ImageFormat) -> any ImageEncoding
}
