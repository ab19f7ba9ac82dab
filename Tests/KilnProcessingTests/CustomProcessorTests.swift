import KilnModel
import Testing
@testable import KilnProcessing

@Suite struct CustomProcessorTests {
    static var registry: ProcessorRegistry {
        var r = ProcessorRegistry()
        r.register("posterize", make: Posterize.make)
        return r
    }

    @Test func posterizeLeavesThatManyLevels() throws {
        let ramp = TestImages.rgb(width: 256, height: 1) { x, _ in (Double(x), Double(255 - x), 128) }
        for levels in [2, 4, 32] {
            let out = try Posterize(levels: levels).process(ramp, context: PixelStats.context(ramp))
            let reds = Set((0..<256).map { out.pixels[$0 * 3] })
            #expect(reds.count == levels)
            #expect(reds.contains(0) && reds.contains(255))
        }
        let two = try Posterize(levels: 2).process(ramp, context: PixelStats.context(ramp))
        #expect(two.pixel(x: 100, y: 0) == [0, 255, 255])
    }

    @Test func posterizeKeepsAlpha() throws {
        let rgba = TestImages.constant(width: 2, height: 1, [100, 160, 30, 99])
        let out = try Posterize(levels: 2).process(rgba, context: PixelStats.context(rgba))
        #expect(out.pixels == [0, 255, 0, 99, 0, 255, 0, 99])
    }

    @Test func resolverBuildsTheOperationWithTheProcessorsIdentifier() throws {
        let op = try Self.registry.resolver("posterize", ["4"])
        #expect(op == CustomOperation(name: "posterize", arguments: ["4"], identifier: "posterize:4"))
        #expect(try Self.registry.resolver("nosuch", ["4"]) == nil)
    }

    @Test(arguments: [["1"], ["33"], ["x"], [], ["4", "5"]])
    func resolverRefusesBadArgumentsNamingTheSegment(arguments: [String]) {
        #expect {
            _ = try Self.registry.resolver("posterize", arguments)
        } throws: { error in
            guard case SpecError.invalidOption(let segment, let reason) = error else { return false }
            return segment == (["posterize"] + arguments).joined(separator: ":") && reason.contains("2...32")
        }
    }

    @Test func parserAndFactoryRunACustomProcessor() throws {
        let registry = Self.registry
        let parser = SpecParser(customResolver: registry.resolver)
        let request = try parser.parse("/posterize:3/gs/cat.jpg")
        #expect(request.operations.map(\.canonical) == ["posterize:3", "grayscale"])
        let processors = ProcessorFactory(registry: registry).processors(for: request.operations)
        #expect((processors[0] as? Posterize)?.levels == 3)
        let image = PixelStats.photoLike(width: 20, height: 20)
        let out = try processors[0].process(image, context: PixelStats.context(image))
        #expect(Set(out.pixels).isSubset(of: [0, 128, 255]))
        #expect(throws: SpecError.self) { try parser.parse("/posterize:99/cat.jpg") }
    }

    @Test func factoryWithoutTheProcessorRefusesWhenRun() {
        let op = Operation.custom(CustomOperation(name: "posterize", arguments: ["3"], identifier: "posterize:3"))
        let processor = ProcessorFactory.processor(for: op)
        #expect(processor.identifier == "posterize:3")
        let image = TestImages.constant(width: 1, height: 1, [1, 2, 3])
        #expect(throws: ProcessingError.self) { try processor.process(image, context: PixelStats.context(image)) }
    }
}
