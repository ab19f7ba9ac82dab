import KilnModel

/// The XML tokens of an SVG document, read from its bytes without any XML library: no DTD is
/// loaded, no entity other than XML's five and character references is expanded, and nothing
/// outside the bytes is ever read (`SVGSanitizer` decides what is kept).
///
/// A document that is not well-formed at this level (an unclosed tag, comment or quote, a name
/// that is not ASCII, an undeclared entity) is `DecodeError.corrupt`. A DOCTYPE that declares
/// entities (`<!ENTITY`, the billion laughs and XXE) is `DecodeError.unsupported`: nothing in it
/// is expanded or fetched.
struct SVGTokenizer {
    enum Token: Equatable {
        case start(name: String, attributes: [SVGAttribute], selfClosing: Bool)
        case end(name: String)
        /// Character data (entities decoded) or a CDATA section.
        case text([UInt8])
        /// A processing instruction, the XML declaration, a comment or a DOCTYPE without entities:
        /// all dropped.
        case ignored
    }

    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        // A UTF-8 byte order mark.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// True when the document's first element is `<svg>` (tokens before it: the XML declaration,
    /// instructions, comments, a DOCTYPE, whitespace), within the first 64 tokens.
    static func hasSVGRoot(_ bytes: [UInt8]) -> Bool {
        var tokenizer = SVGTokenizer(bytes)
        for _ in 0..<64 {
            switch try? tokenizer.next() {
            case .ignored?: continue
            case .text(let text)?: if text.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) { return false }
            case .start(let name, _, _)?: return SVGPolicy.localName(name) == "svg"
            default: return false
            }
        }
        return false
    }

    /// The next token, nil at the end of the bytes.
    mutating func next() throws(DecodeError) -> Token? {
        guard position < bytes.count else { return nil }
        guard bytes[position] == UInt8(ascii: "<") else {
            let end = find([UInt8(ascii: "<")], from: position) ?? bytes.count
            let text = try Self.decodeReferences(bytes[position..<end])
            position = end
            return .text(text)
        }
        if matches("<!--") {
            guard let end = find(Array("-->".utf8), from: position + 4) else { throw .corrupt("SVG has an unclosed comment") }
            position = end + 3
            return .ignored
        }
        if matches("<![CDATA[") {
            guard let end = find(Array("]]>".utf8), from: position + 9) else { throw .corrupt("SVG has an unclosed CDATA section") }
            let text = Array(bytes[(position + 9)..<end])
            position = end + 3
            return .text(text)
        }
        if matches("<!DOCTYPE") { return try doctype() }
        if matches("<?") {
            guard let end = find(Array("?>".utf8), from: position + 2) else { throw .corrupt("SVG has an unclosed processing instruction") }
            position = end + 2
            return .ignored
        }
        if matches("</") {
            position += 2
            let name = try readName()
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ">") else { throw .corrupt("SVG has a malformed end tag </\(name)") }
            position += 1
            return .end(name: name)
        }
        if matches("<!") { throw .corrupt("SVG has an unknown declaration") }
        position += 1
        return try startTag()
    }

    private mutating func startTag() throws(DecodeError) -> Token {
        let name = try readName()
        var attributes: [SVGAttribute] = []
        while true {
            let before = position
            skipSpace()
            guard position < bytes.count else { throw .corrupt("SVG ends inside the tag <\(name)>") }
            if bytes[position] == UInt8(ascii: ">") {
                position += 1
                return .start(name: name, attributes: attributes, selfClosing: false)
            }
            if matches("/>") {
                position += 2
                return .start(name: name, attributes: attributes, selfClosing: true)
            }
            guard position > before else { throw .corrupt("SVG has attributes without space between them in <\(name)>") }
            let attribute = try readName()
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else { throw .corrupt("SVG attribute \(attribute) has no value") }
            position += 1
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'") else {
                throw .corrupt("SVG attribute \(attribute) is not quoted")
            }
            let quote = bytes[position]
            guard let end = find([quote], from: position + 1) else { throw .corrupt("SVG attribute \(attribute) is not closed") }
            let value = try Self.decodeReferences(bytes[(position + 1)..<end])
            position = end + 1
            guard attributes.count < SVGSanitizer.maxAttributes else {
                throw .overLimit("SVG element <\(name)> has more than \(SVGSanitizer.maxAttributes) attributes")
            }
            attributes.append(SVGAttribute(name: attribute, value: String(decoding: value, as: UTF8.self)))
        }
    }

    /// A DOCTYPE: skipped, internal subset and all, unless it declares entities.
    private mutating func doctype() throws(DecodeError) -> Token {
        var i = position + 9
        var quote: UInt8?
        var bracket = 0
        while i < bytes.count {
            let c = bytes[i]
            if let q = quote {
                if c == q { quote = nil }
            } else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                quote = c
            } else if c == UInt8(ascii: "[") {
                bracket += 1
            } else if c == UInt8(ascii: "]") {
                bracket -= 1
            } else if c == UInt8(ascii: "<"), bracket > 0, bytes[i...].starts(with: Array("<!ENTITY".utf8)) {
                throw .unsupported("SVG declares XML entities (<!ENTITY>), which Kiln never expands")
            } else if c == UInt8(ascii: ">"), bracket <= 0 {
                position = i + 1
                return .ignored
            }
            i += 1
        }
        throw .corrupt("SVG has an unclosed DOCTYPE")
    }

    private mutating func readName() throws(DecodeError) -> String {
        let start = position
        while position < bytes.count, Self.isNameByte(bytes[position]) { position += 1 }
        guard position > start, position - start <= 256 else { throw .corrupt("SVG has a malformed tag or attribute name") }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    static func isNameByte(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "."): true
        default: false
        }
    }

    private mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
    }

    private func matches(_ prefix: String) -> Bool {
        bytes[position...].starts(with: prefix.utf8)
    }

    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard start <= bytes.count - needle.count else { return nil }
        var i = start
        while i <= bytes.count - needle.count {
            if bytes[i] == needle[0] && (needle.count == 1 || bytes[(i + 1)..<(i + needle.count)].elementsEqual(needle[1...])) {
                return i
            }
            i += 1
        }
        return nil
    }

    /// `raw` with `&lt; &gt; &amp; &quot; &apos;` and character references decoded; any other
    /// entity is undeclared (a declaring DOCTYPE is refused), hence corrupt.
    static func decodeReferences(_ raw: ArraySlice<UInt8>) throws(DecodeError) -> [UInt8] {
        guard raw.contains(UInt8(ascii: "&")) else { return Array(raw) }
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = raw.startIndex
        while i < raw.endIndex {
            guard raw[i] == UInt8(ascii: "&") else { out.append(raw[i]); i += 1; continue }
            guard let semicolon = raw[i..<min(raw.endIndex, i + 12)].firstIndex(of: UInt8(ascii: ";")) else {
                throw .corrupt("SVG has a bare '&'")
            }
            let name = String(decoding: raw[(i + 1)..<semicolon], as: UTF8.self)
            switch name {
            case "lt": out.append(UInt8(ascii: "<"))
            case "gt": out.append(UInt8(ascii: ">"))
            case "amp": out.append(UInt8(ascii: "&"))
            case "quot": out.append(UInt8(ascii: "\""))
            case "apos": out.append(UInt8(ascii: "'"))
            default:
                let scalar: UInt32? = name.hasPrefix("#x") ? UInt32(name.dropFirst(2), radix: 16)
                    : name.hasPrefix("#") ? UInt32(name.dropFirst(), radix: 10) : nil
                guard let scalar else { throw .corrupt("SVG uses the undeclared entity &\(name.prefix(20));") }
                guard let unicode = Unicode.Scalar(scalar), scalar >= 0x20 || [0x09, 0x0A, 0x0D].contains(scalar) else {
                    throw .corrupt("SVG has an invalid character reference &\(name.prefix(20));")
                }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
            }
            i = semicolon + 1
        }
        return out
    }
}

/// One attribute as written (name with its prefix, value with references decoded).
struct SVGAttribute: Equatable {
    var name: String
    var value: String
}
