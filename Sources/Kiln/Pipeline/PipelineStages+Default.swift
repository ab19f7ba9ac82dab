import KilnCodecs
import KilnCore
import KilnProcessing

extension PipelineStages {
    /// libmagic sniffing, libjpeg-turbo / libpng / libwebp codecs, liblcms2 conversion to sRGB
    /// (`SRGBConverter.shared`, one transform cache per process), the Lanczos-3 resampler and
    /// the processors of `KilnProcessing` (custom ones from `processors`' registry), reading from
    /// `source`.
    public static func standard(source: any SourceLoading,
                                processors: ProcessorFactory = ProcessorFactory()) -> PipelineStages {
        let sniffer = MagicSniffer()
        return PipelineStages(
            source: source,
            sniffer: sniffer,
            decoder: { Codecs.decoder(for: $0) },
            encoder: { Codecs.encoder(for: $0) },
            processor: { processors.processor(for: $0) },
            colorConverter: SRGBConverter.shared,
            orient: { image, exif in Orientation(exifValue: exif).apply(to: image) },
            flatten: { image, rgb in Flatten(red: rgb[0], green: rgb[1], blue: rgb[2]).apply(to: image) })
    }
}
