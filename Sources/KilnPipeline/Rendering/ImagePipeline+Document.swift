import KilnCodecs
import KilnModel
import KilnProcessing

/// `f:json`, `f:blurhash`, `f:thumbhash` (docs/url-api.md, "Image information and placeholders"):
/// answers about a source instead of an image, cached, keyed and timed like images.
///
/// Documents run the one render path (`RenderKind.document`). `f:json` alone reads the header and
/// the container's metadata (`SourceFacts`) and plans the result's size (`plannedOutputSize`): no
/// pixel is decoded. The placeholders (`f:json` with
/// `placeholders:1`, `f:blurhash`, `f:thumbhash`) come from one small decode: shrink-on-load
/// towards `placeholderSide` (JPEG DCT scaling, WebP scaled decoding, PNG's row shrinker), colour
/// converted to sRGB, oriented, then resized to fit `placeholderSide` × `placeholderSide`; that
/// decode is planned and refused by the request budgets like any render (`checkBudget`).
extension ImagePipeline {
    /// The longest side of the image the placeholders are computed from (ThumbHash's limit).
    static let placeholderSide = 100
    /// The longest side of `f:json`'s LQIP (a WebP data URL).
    static let lqipSide = 32

    /// The request whose plan the placeholders' small decode is budgeted and shrunk on load by.
    static let placeholderPlan = ImageRequest(sourcePath: "", operations: [.resize(ResizeOptions(width: placeholderSide, height: placeholderSide, mode: .fit))],
                                              output: OutputOptions(format: .format(.png)))

    /// Writes the document `kind` about the source (the write step of a document's render): from
    /// the header and the container's facts, and the small image the decode step kept when the
    /// placeholders need pixels.
    func writeDocument(_ job: RenderJob, kind: DocumentKind) throws {
        let request = job.request
        let small = job.picked
        let body: [UInt8]
        switch kind {
        case .blurhash:
            guard let small else { preconditionFailure("f:blurhash decodes") }
            body = Array(BlurHash.encode(small, components: request.output.blurhash ?? .standard).utf8)
        case .thumbhash:
            guard let small else { preconditionFailure("f:thumbhash decodes") }
            body = Array(Base64.encode(ThumbHash.encode(small)).utf8)
        case .json:
            let header = job.readHeader
            let facts = SourceFacts.read(job.data, format: job.format, header: header)
            var document = infoDocument(request, format: job.format, header: header, facts: facts, bytes: job.data.count)
            if let small {
                document["placeholders"] = try placeholderFields(PlaceholderImage(pixels: small), components: request.output.blurhash ?? .standard)
            }
            body = Array(JSONValue.object(document).text.utf8)
        }
        job.mark(.written)
        job.rendered = RenderedImage(data: body, document: kind, sourceFormat: job.format, sourceIdentity: job.opened.identity,
                                     timeline: job.timeline)
    }

    /// The source decoded small for the placeholders: sRGB, oriented, at most `placeholderSide` a side.
    struct PlaceholderImage {
        var pixels: PixelBuffer
    }

    /// `placeholders` of `f:json`: dominant colour, BlurHash, ThumbHash and the LQIP data URL.
    func placeholderFields(_ small: PlaceholderImage, components: BlurHashComponents) throws -> JSONValue {
        var fields: [String: JSONValue] = [
            "dominant_color": DominantColour.of(small.pixels).map { .string("#\($0)") } ?? .null,
            "blurhash": .string(BlurHash.encode(small.pixels, components: components)),
            "thumbhash": .string(Base64.encode(ThumbHash.encode(small.pixels))),
        ]
        let side = Self.lqipSide
        var tiny = small.pixels
        if tiny.width > side || tiny.height > side {
            let resize = Operation.resize(ResizeOptions(width: side, height: side, mode: .fit))
            tiny = try stages.processors.processor(for: resize)
                .process(tiny, context: ProcessingContext(logicalSize: tiny.size, maxOutputPixels: limits.maxOutputPixels))
        }
        try observer?.enter(.encode)
        let webp = try stages.encoders.encoder(for: .webp).encode(tiny, options: output.lqipOptions)
        fields["lqip"] = .string("data:image/webp;base64," + Base64.encode(webp))
        return .object(fields)
    }

    /// The fields of `f:json` that need no pixel: the source, the planned result and the EXIF subset.
    func infoDocument(_ request: ImageRequest, format: ImageFormat, header: ImageHeader, facts: SourceFacts,
                      bytes: Int) -> [String: JSONValue] {
        let displayed = header.displayedSize
        let sourceFields: [String: JSONValue] = [
            "format": .string(format.rawValue),
            "mime_type": .string(format.mimeType),
            "bytes": .int(bytes),
            "width": .int(header.width),
            "height": .int(header.height),
            "displayed_width": .int(displayed.width),
            "displayed_height": .int(displayed.height),
            "orientation": .int(header.orientation),
            "frames": .int(header.frameCount),
            "duration_ms": .int(facts.durationMilliseconds),
            "alpha": .bool(header.hasAlpha),
            "color_profile": .string(facts.colourProfile ?? "sRGB"),
        ]
        var result: JSONValue = .null
        if let size = request.plannedOutputSize(source: request.autorotate ? displayed : header.size) {
            result = .object(["width": .int(size.width), "height": .int(size.height)])
        }
        return ["source": .object(sourceFields), "result": result,
                "exif": .object(facts.exif.flatMap(ExifFields.read).map(exifFields) ?? [:])]
    }

    /// The documented EXIF subset; GPS only with `output.info_gps`.
    func exifFields(_ exif: ExifFields) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        fields["make"] = exif.make.map(JSONValue.string)
        fields["model"] = exif.model.map(JSONValue.string)
        fields["lens_make"] = exif.lensMake.map(JSONValue.string)
        fields["lens_model"] = exif.lensModel.map(JSONValue.string)
        fields["date_taken"] = exif.dateTaken.map { .string(Self.isoDate($0)) }
        if let t = exif.exposureTime, t.denominator != 0 {
            fields["exposure_time"] = .number(Double(t.numerator) / Double(t.denominator))
        }
        fields["f_number"] = exif.fNumber.map(JSONValue.number)
        fields["iso"] = exif.iso.map(JSONValue.int)
        fields["focal_length"] = exif.focalLength.map(JSONValue.number)
        if output.infoGPS, exif.hasGPS {
            var gps: [String: JSONValue] = [:]
            gps["latitude"] = exif.latitude.map(JSONValue.number)
            gps["longitude"] = exif.longitude.map(JSONValue.number)
            gps["altitude"] = exif.altitude.map(JSONValue.number)
            fields["gps"] = .object(gps)
        }
        return fields
    }

    /// EXIF's "YYYY:MM:DD HH:MM:SS" as "YYYY-MM-DDTHH:MM:SS" (no zone: EXIF stores local time).
    /// `ExifFields` keeps possible dates only (`ExifFields.possibleDate`).
    static func isoDate(_ exif: String) -> String {
        var chars = Array(exif)
        guard chars.count == 19 else { return exif }
        chars[4] = "-"
        chars[7] = "-"
        chars[10] = "T"
        return String(chars)
    }
}
