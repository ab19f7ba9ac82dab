import KilnCodecs
import KilnModel
import KilnProcessing

/// What a request will cost, planned from the source's header before anything is decoded
/// (issue 14, "budgets before work"): the largest set of buffers alive at once (`peakBytes`)
/// and the CPU work (`work`, in megapixel-passes), step by step as the render runs them.
///
/// A step's live set is its input, its output and its scratch; the input of the next step is
/// this step's output. The sizes follow the code that allocates them (8-bit `PixelBuffer`s of
/// 3 or 4 channels; `FloatImage`s of 4 bytes per sample):
///
/// | step | live set |
/// | --- | --- |
/// | decode | the file's bytes + the decoded buffer (after shrink-on-load) + the decoder's working set (`DecodePlan`) |
/// | ICC conversion, orientation, crop, pad, flip, rotate, colour filters, circle, rounded, flatten | input + output |
/// | resize | input + output + the ring of `taps` float rows + the weight tables |
/// | blur | input + output + a float strip and its scratch (`FloatStrips`: vertical strips of at most 16 MiB of floats plus the halo) |
/// | sharpen | input + output + a float strip, its unblurred copy and the blur's scratch |
/// | watermark | input + output + the watermark resized for `scale` from its own pixels (and the resize's scratch) |
/// | trim | input + output; work: a scan and a copy (2 passes, the worst case) |
/// | encode | input + the encoder's working set and output (`EncoderCost`, by format, quality and effort); `max_bytes` counts the work `ByteBudget.maximumEncodes` times |
///
/// Calibrated with peak RSS of `kiln process` (release build, minus the 27 MB of a process that
/// renders a tiny thumbnail) on the 12 MP bench photo (36 MB RGB): `bl:5` 99 MB (model 106; 313 MB
/// before the strips), `sh:5` 116 MB (model 122; 454 MB before), `bl:50` 100 MB (model 106),
/// `f:png` 78 MB (model 90), `f:webp` 60 MB (model 72), `f:webp/ll:1` 380 MB (model 396),
/// `el:1/w:6000` 113 MB (model 118); a 50 MP PNG to 300 px 25 MB in all (row by row).
///
/// Work is counted in megapixel-passes: one pass of a simple 8-bit operation (a copy, a colour
/// matrix) over one million pixels, about 10 ms on the reference machine. A step's weight is its
/// measured time per megapixel in those units (blur 5, sharpen 8, PNG encode 40, lossless WebP
/// encode 150, AVIF and lossy WebP by quality and effort: `EncoderCost`; a resize counts its
/// multiply-adds, 20 million to the unit).
public struct RequestCost: Sendable, Equatable {
    /// One step of the plan.
    public struct Step: Sendable, Equatable {
        public var name: String
        /// Bytes alive while the step runs.
        public var bytes: Int
        /// Megapixel-passes.
        public var work: Double
    }

    public var steps: [Step] = []

    /// The largest live set of any step.
    public var peakBytes: Int { steps.map(\.bytes).max() ?? 0 }
    /// The step with the largest live set.
    public var peakStep: Step? { steps.max { $0.bytes < $1.bytes } }
    /// The sum of the steps' work.
    public var work: Double { steps.reduce(0) { $0 + $1.work } }

    /// Plans `request` for a source of `format` whose bytes are `data` and header `header`
    /// (orientation already cleared when the request does not autorotate); `accept` picks `f:auto`.
    public static func plan(_ request: ImageRequest, format: ImageFormat, data: [UInt8], header: ImageHeader,
                            accepted: FormatNegotiation, output: OutputConfiguration,
                            marks: WatermarkLibrary = WatermarkLibrary()) -> RequestCost {
        var cost = RequestCost()
        let minimum = ImagePipeline.minimumDecodeSize(for: request, header: header)
        let (decoding, decode) = RequestCost.decodeStep(format: format, data: data, header: header, minimum: minimum)
        cost.steps.append(decoding)

        var size = decode.size
        var channels = decode.channels
        var bytes = decode.bufferBytes
        if header.hasColourProfile ?? hasICCProfile(data, format: format) {
            cost.add("colour", 2 * bytes, 3 * megapixels(size))
        }
        if request.autorotate && header.orientation != 1 {
            cost.add("orient", 2 * bytes, megapixels(size))
            if header.orientation >= 5 { size = size.transposed }
        }
        // The size the request sees (a shrunk decode is resampled from its logical size).
        var logical = header.displayedSize
        for operation in request.operations {
            guard logical.width > 0, logical.height > 0 else { break }
            let next = ImageRequest.plannedSize(of: operation, input: logical) ?? logical
            let (outSize, outChannels) = outputShape(of: operation, input: size, logicalOut: next, channels: channels)
            let outBytes = outSize.width * outSize.height * outChannels
            // A resize by its kind (`resize to 300x200`): the URL may have written it as `w:300`,
            // `h:`, `dpr:` or `el:`, never as its canonical `rs:300:0:fit`, which a refusal would
            // then quote. Other steps are written one option each (`sharpen:50` for `sh:50`).
            var kind = operation.canonical
            if case .resize = operation { kind = "resize" }
            let name = kind + " to \(outSize.width)x\(outSize.height)"
            let mp = megapixels(size), outMP = megapixels(outSize)
            switch operation {
            case .resize:
                let (scratch, macs) = resizeScratch(input: size, output: outSize, channels: channels)
                cost.add(name, bytes + outBytes + scratch, Double(macs) / 20e6 + outMP)
            case .blur(let sigma), .sharpen(let sigma):
                // Vertical strips of floats (`FloatStrips`): blur holds the strip and the blur's
                // scratch, sharpen also the strip's unblurred copy.
                var isBlur = false
                if case .blur = operation { isBlur = true }
                let strip = GaussianBlur.stripBytes(size, channels: channels, sigma: sigma)
                let live = sigma >= SpecParser.minimumSigma ? bytes + outBytes + (isBlur ? 2 : 3) * strip : bytes
                cost.add(name, live, (isBlur ? 5 : 8) * mp)
            case .trim:
                // Worst case: the scan reads every pixel (an image that is border all over),
                // then the crop copies the box (at most the input).
                cost.add(name, 2 * bytes, 2 * mp)
            case .watermark(let w):
                // The blend is float math per covered pixel (a tile covers them all, one mark at
                // most all of them); a `scale` resamples the mark from its own pixels (per frame of
                // an animation: the animation's plan counts this step once a frame), at most to the
                // output's size in RGBA.
                var scaled = 0, resample = 0.0
                if w.scale > 0 {
                    let source = marks[w.name]?.pixels.size ?? outSize
                    let drawn = Watermark.drawnSize(of: source, scale: w.scale, canvas: outSize)
                    let (scratch, macs) = resizeScratch(input: source, output: drawn, channels: 4)
                    scaled = 4 * drawn.width * drawn.height + scratch
                    resample = Double(macs) / 20e6 + megapixels(drawn)
                }
                cost.add(name, bytes + outBytes + scaled, 3 * outMP + resample)
            case .crop, .pad, .extend, .circle, .rounded, .grayscale, .sepia, .tint, .brightness, .contrast, .saturation,
                 .rotate, .flip, .custom:
                // One pass over input and output: the option's declared weight (`OptionDeclaration.work`;
                // a custom processor counts as one simple pass).
                let weight = OptionCatalog.declaration(of: operation)?.work ?? 1
                cost.add(name, bytes + outBytes, weight * max(mp, outMP))
            }
            size = outSize
            channels = outChannels
            bytes = outBytes
            logical = next
        }

        let outputFormat = request.output.resolvedFormat(source: format, accepted: accepted, size: size,
                                                         hasAlpha: channels == 4)
        if channels == 4 && !outputFormat.supportsAlpha {
            cost.add("flatten", bytes + bytes / 4 * 3, megapixels(size))
            channels = 3
            bytes = bytes / 4 * 3
        }
        let lossless = request.output.lossless
        let encoding = output.encodeOptions(format: outputFormat, request: request.output)
        let working = EncoderCost.bytesPerPixel(encoding, channels: channels) * Double(size.width * size.height)
        // max_bytes: up to `ByteBudget.maximumEncodes` encodes, one at a time (`ByteBudget`).
        let encodes = request.output.maxBytes != nil && ByteBudget.searches(outputFormat, lossless: lossless)
            ? ByteBudget.maximumEncodes : 1
        cost.add("encode \(outputFormat.displayName)" + (encodes > 1 ? " x\(encodes) (max_bytes)" : ""), bytes + Int(working),
                 Double(encodes) * EncoderCost.work(encoding) * megapixels(size))
        return cost
    }

    /// The decode step of a plan whose decode keeps at least `minimum` pixels (nil: full size),
    /// and the decode plan it comes from.
    static func decodeStep(format: ImageFormat, data: [UInt8], header: ImageHeader,
                           minimum: PixelSize?) -> (Step, DecodePlan) {
        let decode = DecodePlan.plan(format: format, data: data, header: header, minimum: minimum)
        let fullMP = megapixels(header.size)
        let decodeWork: Double = switch format {
        case .jpeg: 1.5 * fullMP
        case .png: 3 * fullMP
        case .webp: (DecodePlan.isLossless(data) ? 5 : 2) * fullMP
        case .gif: 2 * fullMP
        // dav1d / libde265 on one thread plus the YUV → RGB conversion: the 12 MP bench photo took
        // about 0.3 s (AVIF) and 1.2 s (HEIC, libheif's grid and colour conversion) of CPU.
        // A grid is priced by its tiles (`DecodePlan.codedPixels`), which may be more than its output.
        case .avif: 3 * max(fullMP, Double(decode.codedPixels) / 1e6)
        case .heic: 10 * max(fullMP, Double(decode.codedPixels) / 1e6)
        // The raster's pixels times its passes (`VectorFacts`), plus 1 per 10,000 instances drawn.
        case .svg: 3 * fullMP * (header.vector?.rasterPasses ?? 1) + Double(header.vector?.instances ?? 0) / 10_000
        case .tiff, .bmp, .ico: 2 * fullMP
        // djxl: 0.76 s of CPU for a 2 MP VarDCT picture on one thread (docs/url-api.md, Formats).
        case .jxl: 38 * fullMP
        }
        return (Step(name: "decode", bytes: data.count + decode.bufferBytes + decode.scratchBytes, work: decodeWork), decode)
    }

    mutating func add(_ name: String, _ bytes: Int, _ work: Double) {
        steps.append(Step(name: name, bytes: bytes, work: work))
    }

    static func megapixels(_ size: PixelSize) -> Double { Double(size.width) * Double(size.height) / 1e6 }

    /// The buffer a step leaves: sizes in the buffer's own pixels (a shrunk decode keeps its
    /// ratio to the logical size until the first resize), channels as the processors make them
    /// (`pad`, `circle` and `rounded` add alpha).
    static func outputShape(of operation: Operation, input: PixelSize, logicalOut: PixelSize,
                            channels: Int) -> (PixelSize, Int) {
        switch operation {
        case .resize, .crop, .pad, .extend, .circle:
            let c = channels == 4 ? 4 : (operation.addsAlpha ? 4 : 3)
            return (logicalOut, c)
        case .rotate(let degrees):
            return (degrees % 180 == 0 ? input : input.transposed, channels)
        case .rounded:
            return (input, 4)
        case .trim, .blur, .sharpen, .grayscale, .sepia, .tint, .brightness, .contrast, .saturation, .flip,
             .custom, .watermark:
            // Trim is planned at its worst case (nothing cut); the others keep the size.
            return (input, channels)
        }
    }

    /// The resampler's scratch (float ring of `taps` output rows, weight tables) and its
    /// multiply-adds.
    static func resizeScratch(input: PixelSize, output: PixelSize, channels: Int) -> (bytes: Int, macs: Int) {
        func taps(_ from: Int, _ to: Int) -> Int {
            Int((6 * max(1, Double(from) / Double(max(to, 1)))).rounded(.up)) + 1
        }
        let th = min(taps(input.width, output.width), input.width)
        let tv = min(taps(input.height, output.height), input.height)
        let ring = tv * output.width * channels * 4
        let tables = (output.width * th + output.height * tv) * 4 + (output.width + output.height) * 8
        let rowsRead = min(input.height, output.height * tv)
        let macs = (rowsRead * output.width * th + output.height * output.width * tv) * channels
        return (ring + tables, macs)
    }

    /// True when the bytes carry an ICC profile (the decode is then converted to sRGB, a copy).
    /// Looks for the profile's container near the start; a false positive only over-counts.
    static func hasICCProfile(_ data: [UInt8], format: ImageFormat) -> Bool {
        let tag: [UInt8] = switch format {
        case .jpeg: Array("ICC_PROFILE".utf8)
        case .png: Array("iCCP".utf8)
        case .webp: Array("ICCP".utf8)
        // TIFF and JPEG XL: their decoders say (`ImageHeader.hasColourProfile`).
        case .gif, .svg, .bmp, .ico, .tiff, .jxl: []
        case .avif, .heic: Array("colr".utf8)   // ICC or nclx (P3 and BT.2020 nclx are converted too)
        }
        let end = min(data.count, 1 << 18)
        guard !tag.isEmpty, end >= tag.count else { return false }
        var i = 0
        while i + tag.count <= end {
            if data[i] == tag[0] && data[i + 1] == tag[1] && data[i + 2] == tag[2] && data[i + 3] == tag[3]
                && data[i..<(i + tag.count)].elementsEqual(tag) { return true }
            i += 1
        }
        return false
    }
}

extension Operation {
    /// True for the steps that make an RGB image RGBA when they have no background colour.
    var addsAlpha: Bool {
        switch self {
        case .pad(let p): p.background == nil
        case .extend(let e): e.background == nil
        case .circle(let bg): bg == nil
        case .rounded: true
        case .trim, .resize, .crop, .blur, .sharpen, .grayscale, .sepia, .tint, .brightness, .contrast, .saturation,
             .rotate, .flip, .custom, .watermark: false
        }
    }
}
