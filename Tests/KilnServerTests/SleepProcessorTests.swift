import Testing
import KilnHTTP
import KilnModel
import KilnProcessing
@testable import KilnServer

/// `debug.sleep_processor`: the integration tests' deterministic slow stage.
@Suite struct SleepProcessorTests {
    @Test func sleepIsAnUnknownOptionWhenTheSettingIsOff() throws {
        let folder = try ImageFolder("sleep-off")
        defer { folder.remove() }
        let handler = try HandlerFactory().makeHandler(try KilnConfiguration(folder.values), quietLogger)
        let r = handler.handle(HTTPRequest(method: "GET", uri: "/sleep:50/w:4/a.png"))
        #expect(r.status == 400)
        #expect(String(decoding: r.body, as: UTF8.self).contains("sleep:50"))
        // A preset using it is refused at start, like any unknown option.
        var values = folder.values
        values.merge(["presets.slow": "sleep:10"], origin: "test")
        #expect(throws: ConfigError.self) { try HandlerFactory().validate(KilnConfiguration(values)) }
    }

    @Test func sleepHoldsTheRenderWhenTheSettingIsOn() throws {
        let folder = try ImageFolder("sleep-on")
        defer { folder.remove() }
        var values = folder.values
        values.merge([DebugConfiguration.Key.sleepProcessor.key: "true", "presets.slow": "sleep:10"], origin: "test")
        try HandlerFactory().validate(KilnConfiguration(values))
        let handler = try HandlerFactory().makeHandler(try KilnConfiguration(values), quietLogger)
        let plain = handler.handle(HTTPRequest(method: "GET", uri: "/w:4/f:png/a.png"))
        var slow = HTTPResponse(status: 0, headers: [], body: [])
        let took = ContinuousClock().measure {
            slow = handler.handle(HTTPRequest(method: "GET", uri: "/sleep:300/w:4/f:png/a.png"))
        }
        #expect(slow.status == 200 && slow.header("X-Cache") == "MISS")
        #expect(took >= .milliseconds(300), "the render must last at least the sleep: \(took)")
        #expect(slow.body == plain.body, "the image passes through unchanged")
        #expect(slow.header("Server-Timing")?.contains("process") == true)
        // Bounded, whole milliseconds, one argument: anything else is a 400 naming the segment.
        for bad in ["sleep:60001", "sleep:-1", "sleep:x", "sleep:1:2", "sleep"] {
            let r = handler.handle(HTTPRequest(method: "GET", uri: "/\(bad)/a.png"))
            #expect(r.status == 400, "\(bad): \(r.status)")
        }
        // `kiln warm`'s handler has it too.
        let warm = try HandlerFactory().makeImageHandler(KilnConfiguration(values), quietLogger)
        #expect(warm.handle(HTTPRequest(method: "GET", uri: "/sleep:0/w:3/a.png")).status == 200)
    }

    @Test func theProcessorsIdentifierNamesTheDuration() throws {
        let p = try SleepProcessor.make(["250"])
        #expect(p.identifier == "sleep:250")
        #expect(throws: ProcessingError.self) { try SleepProcessor.make(["60001"]) }
        #expect(ProcessorRegistry().addingSleepProcessor(if: false).names == [])
        #expect(ProcessorRegistry().addingSleepProcessor(if: true).names == ["sleep"])
    }
}
