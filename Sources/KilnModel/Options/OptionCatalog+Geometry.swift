/// The steps that cut, extend, shape or turn the image: `trim`, `crop`, `cut`, `pad`, `circle`,
/// `rounded`, `rotate`, `flip`.
extension OptionCatalog {
    static let geometry: [OptionDeclaration] = [
        OptionDeclaration(
            "trim", aliases: ["t"], operation: "trim", table: .processors, changesSize: true, fuzz: ["t:10::1:1"],
            usages: [.init("trim:<threshold>[:<hex>[:<eh>:<ev>]]",
                           "cut uniform borders; always runs first, wherever it is written (see [Trim](#trim))",
                           ["/t:10/w:400/product.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...4)
            guard b.trim == nil else { throw a.invalid("given twice") }
            var trim = TrimOptions(threshold: try a.int(0, "threshold", 0...255))
            if a.count >= 2, !a[1].isEmpty { trim.color = try a.color(1) }
            if a.count >= 3 { trim.equalHorizontal = try a.flag(2, "equal_h") }
            if a.count >= 4 { trim.equalVertical = try a.flag(3, "equal_v") }
            b.trim = trim
        },
        OptionDeclaration(
            "crop", operation: "crop", table: .processors, changesSize: true, work: 1,
            usages: [
                .init("crop:<w>:<h>[:<gravity>]",
                      "cut a `w`×`h` window at the gravity (default `g:`, else centre); a window larger than the image is clamped to it",
                      ["/crop:600:400:ne/cat.jpg"]),
                .init("crop:<w>:<h>:<x>:<y>",
                      "cut the window whose top-left corner is at `x`,`y`; a corner outside the image is a 400",
                      ["/crop:200:200:50:80/cat.jpg"]),
            ]
        ) { (a, b, c) throws(SpecError) in
            try a.arity(2...5)
            let maxDimension = c.parser.maxDimension
            let w = try a.int(0, "width", 1...maxDimension), h = try a.int(1, "height", 1...maxDimension)
            if a.count == 4, a[2] != "fp" {
                b.append(.crop(CropOptions(width: w, height: h, x: try a.int(2, "x", c.dimensions), y: try a.int(3, "y", c.dimensions))))
            } else if a.count >= 3 {
                guard let g = Gravity.parse(a.args[2...]) else { throw a.invalid(SpecParser.gravityHelp) }
                b.append(.crop(CropOptions(width: w, height: h, gravity: g)))
            } else {
                b.appendCropWithRequestGravity(CropOptions(width: w, height: h))
            }
        },
        OptionDeclaration(
            "cut", operation: "crop", table: .processors, changesSize: true, work: 1,
            usages: [.init("cut:<top>:<right>:<bottom>:<left>[:<width>:<height>]",
                           "cut pixels off each edge, in the pixels of the image at this step (before a resize: the source's); `width`/`height` keep that much instead (0: the rest); nothing left is a 400",
                           ["/cut:20:0:20:0/w:300/cat.jpg"])]
        ) { (a, b, c) throws(SpecError) in
            try a.arity(4...6)
            guard a.count != 5 else { throw a.invalid("takes width and height together") }
            let edges = ["top", "right", "bottom", "left"]
            let v = try (0..<4).map { (i) throws(SpecError) in try a.int(i, edges[i], c.dimensions) }
            var cut = EdgeCut(top: v[0], right: v[1], bottom: v[2], left: v[3])
            if a.count == 6 {
                cut.width = try a.int(4, "width", c.dimensions)
                cut.height = try a.int(5, "height", c.dimensions)
                guard cut.width == 0 || cut.right == 0, cut.height == 0 || cut.bottom == 0 else {
                    throw a.invalid("a kept width or height replaces the right or bottom cut; give one of them")
                }
            }
            b.append(.crop(CropOptions(edges: cut)))
        },
        OptionDeclaration(
            "pad", aliases: ["padding"], operation: "pad", table: .processors, changesSize: true, work: 1,
            usages: [.init("pad:<t>:<r>:<b>:<l>",
                           "add borders (one value: all sides; two: vertical, horizontal), `bg:` colour or transparent",
                           ["/pad:20/bg:ffffff/cat.jpg"])]
        ) { (a, b, c) throws(SpecError) in
            try a.arity(1...4)
            let v = try (0..<a.count).map { (i) throws(SpecError) in try a.int(i, "padding", c.dimensions) }
            guard a.count != 3 else { throw a.invalid("takes 1, 2 or 4 values (all; vertical:horizontal; top:right:bottom:left)") }
            let (t, r, bo, l) = a.count == 1 ? (v[0], v[0], v[0], v[0]) : a.count == 2 ? (v[0], v[1], v[0], v[1]) : (v[0], v[1], v[2], v[3])
            b.append(.pad(Padding(top: t, right: r, bottom: bo, left: l)))
        },
        OptionDeclaration(
            "extend", aliases: ["ex"], operation: "pad", table: .processors, changesSize: true, work: 1,
            usages: [.init("extend:<w>:<h>[:<gravity>]",
                           "grow the canvas to at least `w`×`h` (`0`: that side as it is), the image at the gravity (a compass point or `fp:<x>:<y>`, default centre), "
                               + "the new pixels `bg:` or transparent; after `rs:` it makes every answer exactly the box (imgproxy's `extend`)",
                           ["/rs:300:300/extend:300:300/bg:ffffff/f:jpeg/cat.jpg"])]
        ) { (a, b, c) throws(SpecError) in
            try a.arity(2...5)
            let w = try a.int(0, "width", c.dimensions), h = try a.int(1, "height", c.dimensions)
            var gravity = Gravity.center
            if a.count > 2 {
                guard let g = Gravity.parse(a.args[2...]), g != .smart else { throw a.invalid("gravity must be a compass point or fp:<x>:<y>") }
                gravity = g
            }
            b.append(.extend(ExtendOptions(width: w, height: h, gravity: gravity)))
        },
        OptionDeclaration(
            "circle", operation: "circle", table: .processors, changesSize: true, work: 2,
            usages: [.init("circle[:<hex>]",
                           "crop the centred square and keep a disc with antialiased edges; outside is transparent (PNG, WebP) or the colour given, or `bg:` for JPEG",
                           ["/rs:200:200:fill/circle/f:png/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(0...1)
            b.append(.circle(background: a.count == 1 ? try a.color(0) : nil))
        },
        OptionDeclaration(
            "rounded", aliases: ["rc"], operation: "rounded", table: .processors, work: 2,
            usages: [.init("rounded:<radius>", "rounded corners with antialiased edges, transparent outside", ["/rs:300:200:fill/rc:24/f:webp/cat.jpg"])]
        ) { (a, b, c) throws(SpecError) in
            try a.arity(1...1)
            b.append(.rounded(radius: try a.int(0, "radius", 1...c.parser.maxDimension)))
        },
        OptionDeclaration(
            "rotate", aliases: ["rot"], operation: "rotate", table: .processors, changesSize: true, work: 1,
            usages: [.init("rotate:<90\\|180\\|270>", "rotate clockwise", ["/rot:90/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            guard let d = NumberGrammar.integer(a[0]), [0, 90, 180, 270, 360].contains(d) else { throw a.invalid("angle must be 90, 180 or 270") }
            if d % 360 != 0 { b.append(.rotate(degrees: d)) }
        },
        OptionDeclaration(
            "flip", operation: "flip", table: .processors, work: 1, fuzz: ["hv", "vh"],
            usages: [.init("flip:<h\\|v\\|hv>", "mirror left-right, top-bottom or both", ["/flip:h/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            guard let f = FlipDirection(rawValue: a[0] == "vh" ? "hv" : a[0]) else { throw a.invalid("direction must be h, v or hv") }
            b.append(.flip(f))
        },
    ]
}
