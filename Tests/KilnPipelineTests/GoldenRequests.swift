/// The requests of the golden digest table (`GoldenDigestTests`): every input format Kiln reads,
/// every output it writes, the JPEG decode scales, each processor, animation, the documents, a
/// watermark, the byte budget and the encoder options.
///
/// `source` is a path under the test's root: `corpus/` is `shared/corpus`, `bench/` is
/// `shared/bench`, `golden/` is `Tests/KilnPipelineTests/Golden` (AVIF, HEIC and an animated GIF,
/// which the corpus lacks; made as `Golden/README.md` says). `accept` is the `Accept` header
/// (nil: none). Add rows freely: a new row only asks for a regeneration, not a version bump.
enum GoldenRequests {
    struct Row: Hashable, Sendable, CustomStringConvertible {
        /// The options, as written in the URL before the source path (`-`: none).
        var request: String
        var source: String
        var accept: String?

        /// The URL path the row renders.
        var path: String { "/\(request)/\(source)" }
        /// What identifies the row in the file (its first three columns).
        var key: String { "\(request)\t\(source)\t\(accept ?? "-")" }
        var description: String { accept.map { "\(path) (Accept: \($0))" } ?? path }
    }

    /// Browsers' `Accept` classes for `f:auto`.
    static let avifAndWebP = "image/avif,image/webp,*/*"
    static let webPOnly = "image/webp,*/*"
    static let anything = "*/*"

    static func row(_ request: String, _ source: String, accept: String? = nil) -> Row {
        Row(request: request, source: source, accept: accept)
    }

    static let hopper = "corpus/pillow_hopper.jpg"
    static let rocket = "corpus/skimage_rocket.jpg"
    static let alphaPNG = "bench/alpha_1920x1080.png"
    static let animatedGIF = "golden/golden_hopper_anim.gif"
    static let animatedWebP = "corpus/imagewebp_random_lossy_anim.webp"
    static let avif = "golden/golden_rocket.avif"
    static let heic = "golden/golden_rocket.heic"

    /// Every file a row reads, by its folder: what the test copies into its root.
    static var sources: [String] { Array(Set(rows.map(\.source))).sorted() }

    static let rows: [Row] = inputs + processors + animation + documents + budgets

    /// Input formats × output formats, the JPEG decode scales, colour, orientation, metadata.
    static let inputs: [Row] = [
        // JPEG, shrunk on load (1/8 of 7000×5600, 1/8 and 1/2 of the benchmark photos).
        row("w:200", "corpus/jpeg_large_valid_7000x5600.jpg"),
        row("w:200", "bench/photo_4000x3000.jpg"),
        row("rs:300:300:fit/q:80", "bench/photo_4000x3000.jpg"),
        row("w:800/q:80", "bench/photo_1920x1080.jpg"),
        row("w:800/q:80/f:webp", "bench/photo_1920x1080.jpg"),
        // CMYK with an ICC profile; RGB with one; progressive; grey; EXIF orientation.
        row("w:300/f:png", "corpus/coffee_cmyk_swop_icc.jpg"),
        row("w:300", rocket),
        row("w:240/f:avif", rocket),
        row("w:300/f:auto", "corpus/rocket_progressive.jpg", accept: avifAndWebP),
        row("w:300/f:auto", "corpus/rocket_progressive.jpg", accept: webPOnly),
        row("w:300/f:auto", "corpus/rocket_progressive.jpg", accept: anything),
        row("f:webp", "corpus/pillow_hopper_gray.jpg"),
        row("w:200", "corpus/exif_Portrait_6.jpg"),
        row("strip:0/w:200", "corpus/exif_Portrait_6.jpg"),
        row("-", "corpus/pillow_hopper_orientation_5.jpg"),
        row("ar:0/f:png", "corpus/pillow_hopper_orientation_5.jpg"),
        row("q:50/pg:1", rocket),
        row("pg:1/f:png", hopper),
        row("q:40/f:webp", rocket),
        row("w:100/dpr:2", hopper),
        row("el:1/w:300", hopper),
        // PNG with alpha (8-bit RGBA, 16-bit grey + alpha), an opaque PNG, an ICC one.
        row("w:400", alphaPNG),
        row("w:400/f:webp", alphaPNG),
        row("w:400/f:jpeg/bg:336699", alphaPNG),
        row("w:200/f:avif", alphaPNG),
        row("ll:1/f:webp", "corpus/pngsuite_basn4a16.png"),
        row("w:300/f:jpeg", "corpus/skimage_coffee.png"),
        row("f:png", "corpus/ljt_vgl_5674_0098.png"),
        // WebP: lossy, with alpha, with an ICC profile.
        row("w:800/q:80", "bench/photo_1920x1080.webp"),
        row("w:100/f:png", "corpus/pillow_transparent.webp"),
        row("f:jpeg", "corpus/pillow_flower2.webp"),
        // GIF (a still), AVIF, HEIC.
        row("f:png", "corpus/pillow_hopper.gif"),
        row("f:png", avif),
        row("w:160/f:webp", avif),
        row("-", heic),
        row("w:160/f:png", heic),
        row("w:160/f:avif", heic),
    ]

    /// One row per processor (and gravity), on small sources.
    static let processors: [Row] = [
        row("crop:200:150:ne/f:png", rocket),
        row("crop:64:64:10:20", hopper),
        row("pad:10:20/bg:ff8800", hopper),
        row("rs:100:100:fill/circle/f:png", hopper),
        row("rs:120:80:fill/rc:16/f:webp", rocket),
        row("w:200/bl:3", rocket),
        row("bl:1.2/f:png", hopper),
        row("w:200/sh:1", rocket),
        row("gs", hopper),
        row("sepia", hopper),
        row("tint:3366cc", hopper),
        row("br:20", hopper),
        row("co:30", hopper),
        row("sa:-50", hopper),
        row("rot:90", hopper),
        row("flip:hv", hopper),
        row("t:0/f:png", "corpus/pillow_transparent.webp"),
        row("rs:150:150:fill/g:smart", rocket),
        row("rs:150:150:fill/g:north", rocket),
        row("w:300/wm:logo:0.6:se:8:8:0.25", rocket),
        row("wm:logo:0.5:tile:4:4/f:png", hopper),
    ]

    /// Animated sources: to animated WebP, one frame as a still.
    static let animation: [Row] = [
        row("-", animatedGIF),
        row("w:96/f:webp", animatedGIF),
        row("frame:2/f:png", animatedGIF),
        row("w:64", animatedWebP),
        row("frame:1/f:jpeg", animatedWebP),
    ]

    /// Answers about the image instead of the image.
    static let documents: [Row] = [
        row("f:json", "corpus/exif_Portrait_6.jpg"),
        row("f:json/ph:1", rocket),
        row("f:blurhash", rocket),
        row("f:blurhash/bh:6:4", hopper),
        row("f:thumbhash", "corpus/pillow_transparent.webp"),
    ]

    /// `max_bytes`: the quality search.
    static let budgets: [Row] = [
        row("mb:15000/w:600", "bench/photo_1920x1080.jpg"),
        row("mb:8000/w:400/f:webp", "bench/photo_1920x1080.jpg"),
    ]
}
