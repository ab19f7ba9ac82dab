import KilnCodecs
import KilnModel
import KilnProcessing

extension PipelineStages {
    /// libmagic sniffing, libjpeg-turbo / libpng / libwebp codecs (`CodecRegistry`), liblcms2
    /// conversion to sRGB (`SRGBConverter.shared`, one transform cache per process), the Lanczos-3
    /// resampler and the processors of `KilnProcessing` (custom ones from `processors`' registry),
    /// reading from `source`. Throws when libmagic's database does not load: a pipeline that
    /// cannot sniff would answer every request with 415.
    public static func standard(source: any SourceLoading,
                                processors: ProcessorFactory = ProcessorFactory()) throws(MagicSniffer.DatabaseError) -> PipelineStages {
        let codecs = CodecRegistry()
        return PipelineStages(source: source, sniffer: try MagicSniffer.load(), decoders: codecs, encoders: codecs,
                              processors: processors, colorConverter: SRGBConverter.shared,
                              orienter: ExifOrienter(), flattener: Flattener())
    }
}
