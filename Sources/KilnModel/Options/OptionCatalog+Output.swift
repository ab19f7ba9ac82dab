/// The output options: format, quality and the encoder's switches, the documents (`f:json`,
/// `ph:`, `bh:`), `frame:`, `page:` and `max_bytes:`.
extension OptionCatalog {
    static let output: [OptionDeclaration] = [
        OptionDeclaration(
            "format", aliases: ["f", "ext"], varies: [.accept],
            fuzz: ["jpeg", "jpg", "png", "webp", "avif", "gif", "heic", "auto", "json", "blurhash", "thumbhash"],
            usages: [.init("format:<jpeg\\|png\\|webp\\|avif\\|gif\\|ico\\|auto>",
                           "output format; default: the source's format (WebP for GIF sources, JPEG or PNG for HEIC ones). `auto`: "
                               + "the first of `http.auto_formats` (AVIF, then WebP) that the request's `Accept` allows and that holds "
                               + "the result, else the source's format (see [Content negotiation](#content-negotiation)); the answer carries "
                               + "`Vary: Accept`. An explicit format that cannot hold the result (WebP beyond 16383 px, JPEG beyond 65535 "
                               + "px; also the source's format without `f:`) is a 413 naming the limit. `json`, `blurhash`, `thumbhash`: "
                               + "an answer about the image instead of the image (see [Image information and placeholders](#image-information-and-placeholders))",
                           ["/f:webp/cat.jpg", "/f:auto/cat.jpg", "/f:json/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.output.document = nil
            switch a[0] {
            case "auto": b.output.format = .auto
            case "jpg": b.output.format = .format(.jpeg)
            case "json", "blurhash", "thumbhash":
                b.output.format = .source
                b.output.document = DocumentKind(rawValue: a[0])
            default:
                guard let f = ImageFormat(rawValue: a[0]) else { throw a.invalid("format must be jpeg, png, webp, avif, gif, ico, auto, json, blurhash or thumbhash") }
                guard f.isEncodable else {
                    throw a.invalid("Kiln reads \(f.displayName) but does not write it; use jpeg, png, webp, avif, gif or ico")
                }
                b.output.format = .format(f)
            }
        },
        OptionDeclaration(
            "quality", aliases: ["q"],
            usages: [.init("quality:<1-100>",
                           "JPEG/WebP/AVIF quality (defaults: `output.jpeg_quality`, `output.webp_quality` 80, `output.avif_quality` 65); without it, `Save-Data` may lower the quality (see [Client Hints and Save-Data](#client-hints-and-save-data))",
                           ["/q:60/w:800/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.output.quality = try a.int(0, "quality", 1...100)
        },
        OptionDeclaration(
            "format_quality", aliases: ["fq"], fuzz: ["fq:avif:50:webp:70", "fq:jpg:85"],
            usages: [.init("format_quality:<format>:<q>[:<format>:<q>…]",
                           "the quality of each lossy output format (imgproxy's `fq`), for when the format is the browser's choice (`f:auto`): `fq:avif:50:webp:70`; `q:` wins over it, and formats it does not name keep `output.*_quality`",
                           ["/fq:avif:50:webp:70/f:auto/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            guard a.count >= 2, a.count.isMultiple(of: 2) else { throw a.invalid("takes pairs of a format and a quality") }
            var qualities: [ImageFormat: Int] = [:]
            for i in stride(from: 0, to: a.count, by: 2) {
                guard let format = ImageFormat(rawValue: a[i] == "jpg" ? "jpeg" : a[i]), [.jpeg, .webp, .avif].contains(format) else {
                    throw a.invalid("format must be jpeg, webp or avif (the formats with a quality)")
                }
                guard qualities[format] == nil else { throw a.invalid("\(format.rawValue) given twice") }
                qualities[format] = try a.int(i + 1, "quality", 1...100)
            }
            b.output.formatQualities = qualities
        },
        OptionDeclaration(
            "background", aliases: ["bg"],
            usages: [.init("background:<hex>",
                           "colour for `pad` and for flattening transparent pixels when the output has no alpha (JPEG); default `output.background` (white) for JPEG, transparent for `pad`",
                           ["/bg:ff8800/f:jpeg/logo.png"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.output.background = try a.color(0)
        },
        OptionDeclaration(
            "autorotate", aliases: ["ar"], changesSize: true,
            usages: [.init("autorotate:0", "do not apply the EXIF orientation (it is applied by default, for JPEG and WebP)", ["/ar:0/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.autorotate = try a.flag(0, "autorotate")
        },
        OptionDeclaration(
            "progressive", aliases: ["pg"],
            usages: [.init("progressive:<0\\|1>", "progressive JPEG / interlaced (Adam7) PNG; default `output.progressive` (off)", ["/pg:1/f:jpeg/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.output.progressive = try a.flag(0, "progressive")
        },
        OptionDeclaration(
            "subsampling", aliases: ["ss"], fuzz: ["444", "422", "420", "4:4:4"],
            usages: [.init("subsampling:<444\\|422\\|420>",
                           "JPEG chroma subsampling: `444` keeps colour at full resolution (sharp coloured text and edges, larger files), `422` halves it across, `420` both ways; default `output.jpeg_subsampling` (`420`); other formats ignore it",
                           ["/ss:444/f:jpeg/logo.png"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...3)   // `444` or `4:4:4`
            guard a.count != 2, let value = ChromaSubsampling(spelling: a.args.joined(separator: ":")) else {
                throw a.invalid("must be 444, 422 or 420 (or 4:4:4, 4:2:2, 4:2:0)")
            }
            b.output.subsampling = value
        },
        OptionDeclaration(
            "lossless", aliases: ["ll"],
            usages: [.init("lossless:1", "lossless WebP (and AVIF)", ["/ll:1/f:webp/logo.png"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.output.lossless = try a.flag(0, "lossless")
        },
        OptionDeclaration(
            "strip", privacy: .keepsMetadata, fuzz: ["strip:copyright", "strip:keep_copyright"],
            usages: [.init("strip:<1\\|copyright\\|0>",
                           "what the output keeps of the source's EXIF and XMP: `1` (`all`) nothing; `copyright` (`keep_copyright`) the Copyright and "
                               + "Artist tags and XMP's rights and creator only; `0` (`none`) all of it (orientation reset to 1) but the GPS position, unless "
                               + "`output.info_gps` allows it. Default: `output.strip` (`output.strip_signed` for signed and trusted URLs), `all` unless set "
                               + "(colour: see [Colour](#colour))",
                           ["/strip:0/w:800/cat.jpg", "/strip:copyright/w:800/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            guard let policy = MetadataPolicy(spelling: a[0]) else { throw a.invalid("strip must be 1 (all), copyright (keep_copyright) or 0 (none)") }
            b.output.strip = policy
        },
        OptionDeclaration(
            "icc", fuzz: ["icc:keep", "icc:srgb"],
            usages: [.init("icc:<keep\\|srgb>",
                           "`keep`: a source's RGB colour profile (Display P3, Adobe RGB) and its pixel values are kept and the output carries the profile, for wide-gamut screens; `srgb`: converted to sRGB, untagged. Default `output.colour_profile` (`srgb`) (see [Colour](#colour))",
                           ["/icc:keep/w:800/photo-p3.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            guard let policy = ColourProfilePolicy(rawValue: a[0]) else { throw a.invalid("icc must be keep or srgb") }
            b.output.colourProfile = policy
        },
        OptionDeclaration(
            "frame",
            usages: [.init("frame:<n>",
                           "the frame `n` (0-based) of an animated source (GIF, animated WebP), written as a still in any format; out of range is a 400 (see [Animation](#animation))",
                           ["/frame:3/f:png/spinner.gif"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.output.frame = try a.int(0, "frame", 0...1_000_000)
        },
        OptionDeclaration(
            "page",
            usages: [.init("page:<n>",
                           "the image `n` (0-based) of a file of several: a TIFF's page, an ICO's entry; default the first page of a TIFF and the largest entry of an ICO; out of range (or beyond 0 for any other source) is a 400",
                           ["/page:1/f:png/scan.tiff"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.output.page = try a.int(0, "page", 0...65_535)
        },
        OptionDeclaration(
            "max_bytes", aliases: ["mb"], fuzz: ["mb:20000"],
            usages: [.init("max_bytes:<n>",
                           "answer at most `n` bytes (1 to 100000000): JPEG, WebP and AVIF lower their quality to fit, searching at most 6 encodes; `Kiln-Max-Bytes: fit` or `exceeded` on the answer (see [Byte budget](#byte-budget))",
                           ["/mb:30000/w:800/f:webp/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.output.maxBytes = try a.int(0, "max_bytes", 1...SpecParser.maxBytesLimit)
        },
        OptionDeclaration(
            "placeholders", aliases: ["ph"],
            usages: [.init("placeholders:1",
                           "with `f:json`: add the dominant colour, BlurHash, ThumbHash and an LQIP data URL (a small decode); elsewhere a 400",
                           ["/f:json/ph:1/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.output.placeholders = try a.flag(0, "placeholders")
        },
        OptionDeclaration(
            "blurhash", aliases: ["bh"],
            usages: [.init("blurhash:<x>:<y>",
                           "BlurHash components (1–9 each, default 4×3) for `f:blurhash` and `f:json/ph:1`; elsewhere a 400",
                           ["/f:blurhash/bh:6:4/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(2...2)
            let c = BlurHashComponents(x: try a.int(0, "x components", 1...9), y: try a.int(1, "y components", 1...9))
            b.output.blurhash = c == .standard ? nil : c
        },
    ]
}
