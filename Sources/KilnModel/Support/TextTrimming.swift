extension StringProtocol {
    /// Without leading and trailing spaces and tabs (settings values, list items, header fields).
    public func trimmingSpacesAndTabs() -> String {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }

    /// Without leading and trailing ASCII whitespace, line breaks included (XML attribute values).
    public func trimmingASCIIWhitespace() -> String {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" || f == "\n" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\n" || l == "\r" { s = s.dropLast() }
        return String(s)
    }
}
