/// The steps that change pixels in place: blur, sharpen, the colour filters and watermarks.
extension OptionCatalog {
    static let filters: [OptionDeclaration] = [
        OptionDeclaration(
            "blur", aliases: ["bl"], operation: "blur", table: .processors,
            usages: [.init("blur:<sigma>",
                           "Gaussian blur, sigma in pixels (above 0, at most `limits.max_blur_sigma`, 50): the exact separable kernel "
                               + "below sigma 2, three box passes from 2 up (the same cost for every sigma); transparent images are filtered "
                               + "premultiplied. A sigma below 0.1 changes no pixel: the step is dropped (the URL shares the cache entry "
                               + "of the URL without it), so no sigma darkens the picture",
                           ["/w:800/bl:4/cat.jpg"])]
        ) { (a, b, c) throws(SpecError) in
            try a.arity(1...1)
            let sigma = try a.sigma(0, max: c.parser.maxSigma)
            if sigma >= SpecParser.minimumSigma { b.append(.blur(sigma: sigma)) }
        },
        OptionDeclaration(
            "sharpen", aliases: ["sh"], operation: "sharpen", table: .processors,
            usages: [.init("sharpen:<sigma>",
                           "unsharp mask: v + 1.0 × (v − blur(v, sigma)); sigma as for `blur` (below 0.1 the step is dropped)",
                           ["/w:800/sh:1/cat.jpg"])]
        ) { (a, b, c) throws(SpecError) in
            try a.arity(1...1)
            let sigma = try a.sigma(0, max: c.parser.maxSigma)
            if sigma >= SpecParser.minimumSigma { b.append(.sharpen(sigma: sigma)) }
        },
        OptionDeclaration(
            "grayscale", aliases: ["greyscale", "gs"], operation: "grayscale", table: .processors, work: 1,
            usages: [.init("grayscale", "Rec. 709 luma, R = G = B", ["/gs/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(0...0)
            b.append(.grayscale)
        },
        OptionDeclaration(
            "sepia", operation: "sepia", table: .processors, work: 1,
            usages: [.init("sepia", "the classic sepia matrix", ["/sepia/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(0...0)
            b.append(.sepia)
        },
        OptionDeclaration(
            "tint", operation: "tint", table: .processors, work: 1,
            usages: [.init("tint:<hex>", "Rec. 709 luma × the colour / 255", ["/tint:3366cc/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.append(.tint(try a.color(0)))
        },
        OptionDeclaration(
            "brightness", aliases: ["br"], operation: "brightness", table: .processors, work: 1,
            usages: [.init("brightness:<-100..100>", "v + 2.55 k; 0 changes nothing", ["/br:20/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.append(.brightness(try a.int(0, "brightness", -100...100)))
        },
        OptionDeclaration(
            "contrast", aliases: ["co"], operation: "contrast", table: .processors, work: 1,
            usages: [.init("contrast:<-100..100>", "128 + f (v − 128), f = 1 + k/100 for k ≤ 0, 1 + 3k/100 above", ["/co:30/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.append(.contrast(try a.int(0, "contrast", -100...100)))
        },
        OptionDeclaration(
            "saturation", aliases: ["sa"], operation: "saturation", table: .processors, work: 1,
            usages: [.init("saturation:<-100..100>",
                           "L + (1 + k/100)(v − L) with L the luma: -100 is grey, 100 twice as saturated", ["/sa:-50/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.append(.saturation(try a.int(0, "saturation", -100...100)))
        },
        OptionDeclaration(
            "watermark", aliases: ["wm"], operation: "watermark", table: .processors,
            fuzz: ["logo", "stamp", "tile", "re", "se", "branded"],
            usages: [.init("watermark:<name>…",
                           "blend a configured watermark image on the final image (see [Watermarks](#watermarks))",
                           ["/w:800/wm:logo:0.6:se:16:16:0.2/cat.jpg"])]
        ) { (a, b, c) throws(SpecError) in
            try a.arity(1...6)
            let watermarks = c.parser.watermarks
            guard watermarks.contains(a[0]) else {
                throw a.invalid(watermarks.isEmpty ? "no watermarks are configured ([watermarks])" : "no watermark named \"\(a[0])\"")
            }
            var w = WatermarkOptions(name: a[0])
            if a.count > 1 { w.opacity = SpecParser.quantized(try a.double(1, "opacity", 0...1)) }
            if a.count > 2 {
                guard let p = WatermarkOptions.position(a[2]) else {
                    throw a.invalid("position must be center, north, south, east, west, ne, nw, se, sw or tile")
                }
                w.position = p
            }
            guard a.count != 4 else { throw a.invalid("takes x and y together") }
            if a.count > 4 {
                let maxDimension = c.parser.maxDimension
                let offsets = w.position == .tile ? c.dimensions : -maxDimension...maxDimension
                w.x = try a.int(3, "x", offsets)
                w.y = try a.int(4, "y", offsets)
            }
            if a.count > 5 { w.scale = SpecParser.quantized(try a.double(5, "scale", 0...1)) }
            b.appendWatermark(w)
        },
    ]
}
