import Testing
import KilnModel
import KilnProcessing
@testable import KilnServer

/// `debug.resampler`: one kernel per fleet, chosen by a setting (never by the CPU) and applied by
/// each worker at start.
@Suite struct ResamplerSettingTests {
    @Test func declaredOnceInTheCatalogWithTheFixedPointKernelAsDefault() throws {
        let setting = try #require(KilnConfiguration.catalog.settings.first { $0.key == "debug.resampler" })
        #expect(setting.type == "auto / portable / avx2 / float")
        #expect(try KilnConfiguration(ConfigValues()).debug.resampler == .automatic)
        #expect(ResamplerKernel.automatic.resolved != nil, "the default never runs the float reference")
    }

    /// The float reference runs only when asked for by name: no other choice resolves to it,
    /// whatever the CPU.
    @Test func onlyAnExplicitSettingReachesTheFloatReference() {
        #expect(ResamplerKernel.allCases.filter { $0.resolved == nil } == [.float])
        #expect(ResamplerKernel.automatic.resolved == ResamplerKernel.avx2.resolved)
    }

    @Test func parsesEachKernelAndRefusesOthers() throws {
        for kernel in ResamplerKernel.allCases {
            let values = ConfigValues([DebugConfiguration.Key.resampler.key: kernel.rawValue.uppercased()])
            #expect(try KilnConfiguration(values).debug.resampler == kernel)
        }
        #expect(throws: ConfigError.self) {
            try KilnConfiguration(ConfigValues([DebugConfiguration.Key.resampler.key: "fast"]))
        }
        #expect(throws: ConfigError.self) {
            try KilnConfiguration(ConfigValues([DebugConfiguration.Key.resampler.key: "automatic"]))
        }
    }

    /// A worker's handler sets the process's kernel. `portable` only (the same bytes as the
    /// default), so tests rendering meanwhile in this process see no change.
    @Test func theWorkerAppliesItAtStart() throws {
        let folder = try ImageFolder("resampler-setting")
        defer {
            folder.remove()
            ResamplerKernel.processDefault = .automatic
        }
        var values = folder.values
        values.merge([DebugConfiguration.Key.resampler.key: "portable"], origin: "test")
        _ = try HandlerFactory().makeHandler(try KilnConfiguration(values), quietLogger)
        #expect(ResamplerKernel.processDefault == .portable)
        #expect(Resampler().kernel == .portable)
        _ = try HandlerFactory().makeHandler(try KilnConfiguration(folder.values), quietLogger)
        #expect(ResamplerKernel.processDefault == .automatic)
    }
}
