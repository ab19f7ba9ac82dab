import KilnModel

/// Makes an SVG safe to draw before librsvg sees it, and says what drawing it will cost.
///
/// The document is read by `SVGTokenizer` (no DTD, no entity expansion, nothing fetched) into
/// the elements `SVGPolicy` keeps, and written out again as plain XML: librsvg only ever parses
/// the sanitised bytes, with no base URL (so it would refuse a file or network reference even
/// if one were left). Limits, each a 413 before anything is drawn:
/// - nesting deeper than `maxDepth`, more than `maxElements` elements;
/// - more than `maxInstances` elements drawn once `<use>` and markers are expanded (the
///   billion-laughs of SVG: ten `<use>` of ten `<use>` …), and any `<use>` loop (a 422);
/// - more than `maxFilterPrimitives` filter primitives, and kernels beyond what is priced
///   (`feConvolveMatrix` order, `feMorphology` radius, `feTurbulence` octaves);
/// - embedded `data:` images over `maxEmbeddedPixels` in all.
/// The rest is priced by the cost planner from `VectorFacts` (raster passes and instances).
public struct SVGSanitizer {
    static let maxDepth = 256
    static let maxElements = 50_000
    static let maxAttributes = 256
    static let maxInstances = 250_000
    static let maxFilterPrimitives = 100
    static let maxEmbeddedPixels = 25_000_000

    /// The sanitised document and its facts.
    public struct Result: Sendable {
        public var document: [UInt8]
        public var facts: VectorFacts
        /// References, scripts and foreign content removed (for the tests and the log).
        public var removed: Int
    }

    public static func sanitize(_ data: [UInt8]) throws(DecodeError) -> Result {
        var tree = SVGTree()
        var tokenizer = SVGTokenizer(data)
        // Open elements: the kept element's index, or nil inside a dropped subtree.
        var stack: [(name: String, kept: Int?)] = []
        var sawRoot = false
        var removed = 0
        while let token = try tokenizer.next() {
            switch token {
            case .ignored:
                continue
            case .text(let text):
                if let open = stack.last, let kept = open.kept, SVGPolicy.textElements.contains(tree.elements[kept].name) {
                    tree.appendText(text, to: kept)
                } else if stack.isEmpty, text.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
                    throw .corrupt("SVG has text outside its root element")
                }
            case let .start(name, attributes, selfClosing):
                guard stack.count < maxDepth else { throw .overLimit("SVG nests deeper than \(maxDepth) elements") }
                var kept: Int?
                if stack.isEmpty {
                    guard !sawRoot else { throw .corrupt("SVG has more than one root element") }
                    guard SVGPolicy.localName(name) == "svg" else { throw .unsupported("not an SVG document: the root element is <\(name.prefix(40))>") }
                    sawRoot = true
                    kept = try tree.add("svg", attributes, parent: nil, removed: &removed)
                } else if let parent = stack.last?.kept, let local = SVGPolicy.localName(name), SVGPolicy.elements.contains(local) {
                    kept = try tree.add(local, attributes, parent: parent, removed: &removed)
                } else if stack.last?.kept != nil {
                    removed += 1
                }
                if tree.elements.count > maxElements { throw .overLimit("SVG has more than \(maxElements) elements") }
                if !selfClosing { stack.append((name, kept)) }
            case .end(let name):
                guard let open = stack.popLast(), open.name == name else { throw .corrupt("SVG is not well-formed: unexpected </\(name.prefix(40))>") }
            }
        }
        guard sawRoot else { throw .unsupported("not an SVG document: no <svg> element") }
        guard stack.isEmpty else { throw .corrupt("SVG is truncated: <\(stack.last!.name.prefix(40))> is not closed") }
        let size = SVGIntrinsicSize(root: tree.elements[0])
        let instances = try SVGReferenceGraph(tree).instances()
        guard instances <= maxInstances else {
            throw .overLimit("SVG draws \(instances) elements once <use> and markers are expanded (at most \(maxInstances))")
        }
        let filters = try tree.filterCost()
        let facts = VectorFacts(intrinsicWidth: size.width, intrinsicHeight: size.height, elements: tree.elements.count,
                                instances: instances, filterPrimitives: filters.primitives, filterPasses: filters.passes,
                                embeddedPixels: tree.embeddedPixels)
        return Result(document: tree.serialized(size: size), facts: facts, removed: removed)
    }
}
