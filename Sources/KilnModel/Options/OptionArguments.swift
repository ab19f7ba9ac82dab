/// The arguments of one option segment, with typed accessors that name the segment on error.
struct OptionArguments {
    let segment: String
    let args: [String]

    var count: Int { args.count }
    subscript(i: Int) -> String { args[i] }

    func invalid(_ reason: String) -> SpecError { .invalidOption(segment: segment, reason: reason) }

    func arity(_ allowed: ClosedRange<Int>) throws(SpecError) {
        guard allowed.contains(args.count) else {
            let n = allowed.lowerBound == allowed.upperBound ? "\(allowed.lowerBound)" : "\(allowed.lowerBound) to \(allowed.upperBound)"
            throw invalid("takes \(n) argument(s)")
        }
    }

    func int(_ i: Int, _ what: String, _ range: ClosedRange<Int>) throws(SpecError) -> Int {
        guard i < args.count else { throw invalid("missing \(what)") }
        guard let v = NumberGrammar.integer(args[i]), range.contains(v) else {
            throw invalid("\(what) must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return v
    }

    func double(_ i: Int, _ what: String, _ range: ClosedRange<Double>) throws(SpecError) -> Double {
        guard i < args.count else { throw invalid("missing \(what)") }
        guard let v = NumberGrammar.decimal(args[i]), v.isFinite, range.contains(v) else {
            throw invalid("\(what) must be a number in \(Gravity.format(range.lowerBound))...\(Gravity.format(range.upperBound))")
        }
        return v
    }

    /// A Gaussian sigma: more than 0 and at most `max`.
    func sigma(_ i: Int, max: Double) throws(SpecError) -> Double {
        guard let v = NumberGrammar.decimal(args[i]), v.isFinite, v > 0, v <= max else {
            throw invalid("sigma must be a number above 0 and at most \(Gravity.format(max))")
        }
        return v
    }

    func flag(_ i: Int, _ what: String) throws(SpecError) -> Bool {
        try int(i, what, 0...1) == 1
    }

    func color(_ i: Int) throws(SpecError) -> RGBColor {
        guard let c = RGBColor(hex: args[i]) else { throw invalid("colour must be six hex digits such as ff8800") }
        return c
    }
}
