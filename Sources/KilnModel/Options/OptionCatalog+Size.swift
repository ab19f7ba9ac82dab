/// The resize family and the request-wide options that shape it: `rs`, `w`, `h`, `el`, `g`,
/// `dpr`, `ch`.
extension OptionCatalog {
    static let size: [OptionDeclaration] = [
        OptionDeclaration(
            "resize", aliases: ["rs"], operation: "resize", changesSize: true, fuzz: ["fit", "fill", "force", "auto"],
            usages: [.init("resize:<w>:<h>[:<mode>]",
                           "resize into a `w`×`h` box. `fit` (default): keep the aspect ratio inside the box; `fill`: cover the box and crop at `g:` (the centre by default); `force`: exactly `w`×`h`, aspect ignored; "
                               + "`auto`: `fill` when the image and the box are both landscape (or square) or both portrait, else `fit` (imgproxy's `auto`). `0` for either side means \"from the aspect ratio\"",
                           ["/rs:300:200:fill/cat.jpg"])]
        ) { (a, b, c) throws(SpecError) in
            try a.arity(2...3)
            var mode = ResizeMode.fit
            if a.count == 3 {
                guard let m = ResizeMode(rawValue: a[2]) else { throw a.invalid("mode must be fit, fill, force or auto") }
                mode = m
            }
            b.setResize(width: try a.int(0, "width", c.dimensions), height: try a.int(1, "height", c.dimensions), mode: mode)
            b.autoWidth = false
        },
        OptionDeclaration(
            "width", aliases: ["w"], operation: "resize", changesSize: true,
            varies: [.width, .viewportWidth, .dpr, .saveData], fuzz: ["auto"],
            usages: [.init("width:<w>",
                           "width `w`, height from the aspect ratio; `w:auto`: the device's width from Client Hints (implies `ch:1`, see [Client Hints and Save-Data](#client-hints-and-save-data))",
                           ["/w:800/cat.jpg", "/w:auto/cat.jpg"])]
        ) { (a, b, c) throws(SpecError) in
            try a.arity(1...1)
            if a[0] == "auto" {
                // The width of the device's slot (Client Hints); implies `ch:1`.
                b.setResize(width: 0, height: nil, mode: nil)
                b.autoWidth = true
            } else {
                b.setResize(width: try a.int(0, "width", c.dimensions), height: nil, mode: nil)
                b.autoWidth = false
            }
        },
        OptionDeclaration(
            "height", aliases: ["h"], operation: "resize", changesSize: true,
            usages: [.init("height:<h>", "height `h`, width from the aspect ratio", ["/h:400/cat.jpg"])]
        ) { (a, b, c) throws(SpecError) in
            try a.arity(1...1)
            b.setResize(width: nil, height: try a.int(0, "height", c.dimensions), mode: nil)
        },
        OptionDeclaration(
            "enlarge", aliases: ["el"], changesSize: true,
            usages: [.init("enlarge:<0\\|1>",
                           "allow making an image larger than its source (off by default: a 640 px source asked for `w:1000` stays 640 px)",
                           ["/el:1/w:1000/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.enlarge = try a.flag(0, "enlarge")
        },
        OptionDeclaration(
            "gravity", aliases: ["g"], fuzz: ["center", "north", "south", "east", "west", "ne", "nw", "se", "sw", "smart", "fp"],
            usages: [.init("gravity:<g>",
                           "where `fill` (and `crop` without its own gravity) cuts: `center`, `north`, `south`, `east`, `west`, `ne`, `nw`, `se`, `sw`, `fp:<x>:<y>` (focal point, 0–1 of width and height), `smart` (the most detailed region)",
                           ["/rs:300:300:fill/g:north/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            guard let g = Gravity.parse(a.args[...]) else { throw a.invalid(SpecParser.gravityHelp) }
            b.gravity = g
        },
        OptionDeclaration(
            "dpr", identity: .resolved, changesSize: true,
            usages: [.init("dpr:<1-4>",
                           "multiplies the sizes of `rs`, `w`, `h`, `pad`, `rounded` and watermark offsets (device pixel ratio; fractions allowed); resolved into those sizes, which are the cache key",
                           ["/w:300/dpr:2/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.dpr = try a.double(0, "dpr", 1...4)
            b.dprGiven = true
        },
        OptionDeclaration(
            "clienthints", aliases: ["ch"], identity: .resolved, changesSize: true, varies: [.dpr, .saveData],
            usages: [.init("clienthints:<0\\|1>",
                           "take the device's pixel ratio (`Sec-CH-DPR`, when the URL has no `dpr:`) and data saving (`Save-Data`, "
                               + "when it has no `q:`) from the request's headers; not part of the cache key itself (the resolved sizes "
                               + "and quality are). See [Client Hints and Save-Data](#client-hints-and-save-data)",
                           ["/ch:1/w:300/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.clientHints = try a.flag(0, "clienthints")
        },
    ]
}
