import KilnModel

/// The elements an SVG keeps after `SVGPolicy`, in document order (the root first), and their
/// serialisation: the only bytes librsvg parses.
struct SVGTree {
    enum Child {
        case element(Int)
        case text([UInt8])
    }

    struct Element {
        var name: String
        var attributes: [SVGAttribute]
        var children: [Child] = []
        var parent: Int?

        func attribute(_ name: String) -> String? {
            attributes.first { $0.name == name }?.value
        }
    }

    var elements: [Element] = []
    var embeddedPixels = 0

    /// Adds `name` under `parent` with the attributes the policy keeps; returns its index.
    mutating func add(_ name: String, _ attributes: [SVGAttribute], parent: Int?, removed: inout Int) throws(DecodeError) -> Int {
        var kept: [SVGAttribute] = []
        for attribute in attributes {
            switch SVGPolicy.rule(for: attribute.name) {
            case .drop:
                removed += 1
            case .reference:
                if SVGPolicy.isFragment(attribute.value) {
                    kept.append(SVGAttribute(name: "xlink:href", value: attribute.value.trimmingASCIIWhitespace()))
                } else if name == "image", let pixels = try SVGEmbeddedImage.pixels(attribute.value) {
                    embeddedPixels += pixels
                    guard embeddedPixels <= SVGSanitizer.maxEmbeddedPixels else {
                        throw .overLimit("SVG embeds images of more than \(SVGSanitizer.maxEmbeddedPixels) pixels")
                    }
                    kept.append(SVGAttribute(name: "xlink:href", value: attribute.value))
                } else {
                    removed += 1
                }
            case .keep:
                if attribute.name == "style" {
                    kept.append(SVGAttribute(name: "style", value: SVGPolicy.cleanCSS(attribute.value)))
                } else if SVGPolicy.hasExternalURL(attribute.value) {
                    removed += 1
                } else {
                    kept.append(attribute)
                }
            }
        }
        let index = elements.count
        elements.append(Element(name: name, attributes: kept, parent: parent))
        if let parent { elements[parent].children.append(.element(index)) }
        return index
    }

    /// Adds character data to `index`, joined to the text before it: CSS is cleaned whole, so a
    /// `url(` split over a CDATA boundary is still one `url(` to the cleaner.
    mutating func appendText(_ text: [UInt8], to index: Int) {
        if case .text(let before)? = elements[index].children.last {
            elements[index].children[elements[index].children.count - 1] = .text(before + text)
        } else {
            elements[index].children.append(.text(text))
        }
    }

    /// The filter primitives and the raster passes they make; kernels beyond what is priced are refused.
    func filterCost() throws(DecodeError) -> (primitives: Int, passes: Double) {
        var primitives = 0
        var passes = 0.0
        for element in elements where element.name.hasPrefix("fe") && element.name != "feFuncA" && element.name != "feFuncR"
            && element.name != "feFuncG" && element.name != "feFuncB" && !element.name.hasSuffix("Light") && element.name != "feMergeNode" {
            primitives += 1
            guard primitives <= SVGSanitizer.maxFilterPrimitives else {
                throw .overLimit("SVG has more than \(SVGSanitizer.maxFilterPrimitives) filter primitives")
            }
            let numbers = SVGNumbers.parse(element.attribute(Self.kernelAttribute[element.name] ?? "") ?? "")
            switch element.name {
            case "feConvolveMatrix":
                let order = Int(numbers.first ?? 3)
                guard order <= 9 else { throw .overLimit("SVG feConvolveMatrix of order \(order) (at most 9)") }
                passes += Double(order * order) / 2
            case "feMorphology":
                let radius = numbers.max() ?? 0
                guard radius <= 32 else { throw .overLimit("SVG feMorphology of radius \(Int(radius)) (at most 32)") }
                passes += (2 * radius + 1) * 2 / 4
            case "feTurbulence":
                let octaves = Int(numbers.first ?? 1)
                guard octaves <= 10 else { throw .overLimit("SVG feTurbulence of \(octaves) octaves (at most 10)") }
                passes += 4 * Double(max(octaves, 1))
            case "feGaussianBlur", "feDropShadow", "feDiffuseLighting", "feSpecularLighting":
                passes += 4
            default:
                passes += 2
            }
        }
        return (primitives, passes)
    }

    static let kernelAttribute = ["feConvolveMatrix": "order", "feMorphology": "radius", "feTurbulence": "numOctaves"]

    /// The document as XML: the root carries the SVG namespaces and its intrinsic size in pixels.
    func serialized(size: SVGIntrinsicSize) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        write(0, size: size, into: &out)
        return out
    }

    private func write(_ index: Int, size: SVGIntrinsicSize, into out: inout [UInt8]) {
        // Iterative: nesting is bounded by the sanitiser, but the stack of a worker thread is not
        // the place to find out how deep 256 levels of Swift frames go.
        enum Step {
            case open(Int)
            case close(String)
            case text([UInt8])
        }
        var steps: [Step] = [.open(index)]
        while let step = steps.popLast() {
            switch step {
            case .close(let name):
                out += Array("</\(name)>".utf8)
            case .text(let escaped):
                out += escaped
            case .open(let i):
                let element = elements[i]
                out += Array("<\(element.name)".utf8)
                var attributes = element.attributes
                if i == 0 {
                    attributes.removeAll { $0.name == "width" || $0.name == "height" }
                    attributes = [SVGAttribute(name: "xmlns", value: "http://www.w3.org/2000/svg"),
                                  SVGAttribute(name: "xmlns:xlink", value: "http://www.w3.org/1999/xlink"),
                                  SVGAttribute(name: "width", value: SVGNumbers.format(size.width)),
                                  SVGAttribute(name: "height", value: SVGNumbers.format(size.height))] + attributes
                }
                for attribute in attributes {
                    out += Array(" \(attribute.name)=\"".utf8)
                    Self.escape(Array(attribute.value.utf8), into: &out)
                    out.append(UInt8(ascii: "\""))
                }
                // Children as written (text escaped, CSS cleaned); an element whose text comes out empty
                // is written empty, as it reads back (the sanitised document is a fixed point).
                let children: [Step] = element.children.compactMap { child in
                    switch child {
                    case .element(let c): return .open(c)
                    case .text(let text):
                        var escaped: [UInt8] = []
                        let content = element.name == "style" ? Array(SVGPolicy.cleanCSS(String(decoding: text, as: UTF8.self)).utf8) : text
                        Self.escape(content, into: &escaped)
                        return escaped.isEmpty ? nil : .text(escaped)
                    }
                }
                guard !children.isEmpty else { out += Array("/>".utf8); continue }
                out.append(UInt8(ascii: ">"))
                steps.append(.close(element.name))
                steps += children.reversed()
            }
        }
    }

    /// `&`, `<`, `>` and `"` as references.
    static func escape(_ bytes: [UInt8], into out: inout [UInt8]) {
        for c in bytes {
            switch c {
            case UInt8(ascii: "&"): out += Array("&amp;".utf8)
            case UInt8(ascii: "<"): out += Array("&lt;".utf8)
            case UInt8(ascii: ">"): out += Array("&gt;".utf8)
            case UInt8(ascii: "\""): out += Array("&quot;".utf8)
            default: out.append(c)
            }
        }
    }
}
