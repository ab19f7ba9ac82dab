import KilnModel

/// How many elements librsvg draws once references are expanded: every element once, every
/// `<use>` its target's subtree again, and every marked path its marker's subtree at each vertex.
/// Ten `<use>` of ten `<use>` of … (SVG's billion laughs) is a few hundred bytes that draw
/// 10ⁿ elements; a `<use>` that reaches itself would never end. Both are found here, before
/// librsvg parses anything.
struct SVGReferenceGraph {
    private let tree: SVGTree
    private var ids: [String: Int] = [:]

    init(_ tree: SVGTree) {
        self.tree = tree
        for (index, element) in tree.elements.enumerated() {
            if let id = element.attribute("id"), ids[id] == nil { ids[id] = index }
        }
    }

    /// The elements drawn; a reference loop through `<use>` is `DecodeError.corrupt`.
    func instances() throws(DecodeError) -> Int {
        // Post-order over the element graph (children, a use's target, markers), iterative, with
        // the weight of each element memoised and loops found by the elements on the path.
        enum Mark { case unvisited, onPath, done }
        var marks = [Mark](repeating: .unvisited, count: tree.elements.count)
        var weights = [Int](repeating: 0, count: tree.elements.count)
        var stack: [(index: Int, expanded: Bool)] = [(0, false)]
        while let (index, expanded) = stack.popLast() {
            if expanded {
                var weight = 1
                for edge in edges(of: index) {
                    weight = Self.add(weight, weights[edge.target].multipliedReportingOverflow(by: edge.times))
                }
                weights[index] = weight
                marks[index] = .done
                continue
            }
            switch marks[index] {
            case .done: continue
            case .onPath: throw .corrupt("SVG references form a loop (through <\(tree.elements[index].name)>)")
            case .unvisited: break
            }
            marks[index] = .onPath
            stack.append((index, true))
            for edge in edges(of: index) {
                if marks[edge.target] == .onPath {
                    throw .corrupt("SVG references form a loop (<\(tree.elements[index].name)> reaches itself)")
                }
                if marks[edge.target] == .unvisited { stack.append((edge.target, false)) }
            }
        }
        // Elements outside the root's graph (none: every kept element is under the root).
        return weights[0]
    }

    private static func add(_ a: Int, _ b: (partialValue: Int, overflow: Bool)) -> Int {
        let sum = a.addingReportingOverflow(b.partialValue)
        return b.overflow || sum.overflow ? Int.max / 2 : min(sum.partialValue, Int.max / 2)
    }

    /// What drawing `index` draws again: its children once, a `<use>`'s target once, a marker
    /// at each vertex of the shape that names it.
    private func edges(of index: Int) -> [(target: Int, times: Int)] {
        let element = tree.elements[index]
        var edges: [(target: Int, times: Int)] = []
        for child in element.children {
            if case .element(let c) = child { edges.append((c, 1)) }
        }
        if element.name == "use", let href = element.attribute("xlink:href"), let id = SVGPolicy.fragmentID(href),
           let target = ids[id] {
            edges.append((target, 1))
        }
        var markers: [String] = []
        for attribute in element.attributes where attribute.name.hasPrefix("marker") || attribute.name == "style" {
            markers += SVGPolicy.urlFragments(attribute.value)
        }
        if !markers.isEmpty {
            let vertices = max(1, Self.numberCount(element.attribute("d") ?? element.attribute("points") ?? "") / 2)
            for id in markers {
                if let target = ids[id], tree.elements[target].name == "marker" { edges.append((target, vertices)) }
            }
        }
        return edges
    }

    /// The numbers in a path's data or a polygon's points (each vertex has two).
    static func numberCount(_ text: String) -> Int {
        var count = 0
        var inNumber = false
        for c in text.utf8 {
            let digit = c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")
            if digit && !inNumber { count += 1 }
            inNumber = digit || (inNumber && c == UInt8(ascii: "."))
        }
        return count
    }
}
