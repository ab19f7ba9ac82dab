import Testing
@testable import KilnModel

@Suite struct ConfigValuesTests {
    @Test func countsArePlainNumbersWithUnderscores() {
        #expect(ConfigUnits.count("50000000") == 50_000_000)
        #expect(ConfigUnits.count("50_000_000") == 50_000_000)
        #expect(ConfigUnits.count(" 16 ") == 16)
        #expect(ConfigUnits.count("-5") == -5)
        for bad in ["50m", "10k", "1g", "", "_1", "1_", "1__0", "1.5", "0x10", "ten"] {
            #expect(ConfigUnits.count(bad) == nil, "\(bad)")
        }
    }

    @Test func sizesArePowersOf1024() {
        #expect(ConfigUnits.size("1048576") == 1 << 20)
        #expect(ConfigUnits.size("512KiB") == 512 << 10)
        #expect(ConfigUnits.size("512KB") == 512 << 10)
        #expect(ConfigUnits.size("100MiB") == 100 << 20)
        #expect(ConfigUnits.size("100 mb") == 100 << 20)
        #expect(ConfigUnits.size("2GiB") == 2 << 30 && ConfigUnits.size("2GB") == 2 << 30)
        #expect(ConfigUnits.size("1TiB") == 1 << 40)
        #expect(ConfigUnits.size("64B") == 64)
        #expect(ConfigUnits.size("1_000_000") == 1_000_000)
        for bad in ["100M", "1.5GiB", "MiB", "10 parsecs", "-1KiB", "99999999999999TiB"] {
            #expect(ConfigUnits.size(bad) == nil, "\(bad)")
        }
        #expect(ConfigUnits.formatSize(64 << 20) == "64MiB" && ConfigUnits.formatSize(1 << 30) == "1GiB")
        #expect(ConfigUnits.formatSize(1000) == "1000B" && ConfigUnits.formatSize(0) == "0B")
    }

    @Test func durationsNeedAUnit() {
        #expect(ConfigUnits.duration("500ms") == 0.5)
        #expect(ConfigUnits.duration("10s") == 10)
        #expect(ConfigUnits.duration("1.5s") == 1.5)
        #expect(ConfigUnits.duration("2m") == 120)
        #expect(ConfigUnits.duration("1h") == 3600)
        #expect(ConfigUnits.duration("0") == 0)
        for bad in ["10", "600", "1d", "s", ".5s", "ten s", "10 sec"] {
            #expect(ConfigUnits.duration(bad) == nil, "\(bad)")
        }
        #expect(ConfigUnits.formatDuration(10) == "10s" && ConfigUnits.formatDuration(600) == "10m")
        #expect(ConfigUnits.formatDuration(0.5) == "500ms" && ConfigUnits.formatDuration(3600) == "1h")
    }

    @Test func boolsAndFractions() {
        #expect(ConfigUnits.bool("true") == true && ConfigUnits.bool("OFF") == false && ConfigUnits.bool("maybe") == nil)
        #expect(ConfigUnits.fraction("0.75") == 0.75 && ConfigUnits.fraction("90%") == 0.9 && ConfigUnits.fraction("x") == nil)
        #expect(ConfigUnits.formatCount(50_000_000) == "50_000_000" && ConfigUnits.formatCount(1000) == "1000")
    }

    @Test func settingsValidateRangesAndNameTheOrigin() throws {
        let workers = Setting.count("server.workers", default: 2, in: 1...8, doc: "workers")
        var v = ConfigValues(["server.workers": "4"], origin: "file kiln.toml:2")
        #expect(try v.value(workers) == 4)
        #expect(try ConfigValues().value(workers) == 2)
        v.merge(["server.workers": "9"], origin: "flag --workers")
        do {
            _ = try v.value(workers)
            Issue.record("accepted 9")
        } catch {
            #expect(error == .invalid(key: "server.workers", value: "9", expected: workers.expected, origin: "flag --workers"))
        }
        let timeout = Setting.duration("a.t", default: 1, in: 0...60, doc: "t")
        #expect(try ConfigValues(["a.t": "500ms"]).value(timeout) == 0.5)
        #expect(throws: ConfigError.self) { try ConfigValues(["a.t": "2m"]).value(timeout) }
        enum Mode: String, CaseIterable, Sendable { case fast, slow }
        let mode = Setting<Mode>.choice("a.mode", default: .fast, doc: "m")
        #expect(try ConfigValues(["a.mode": "Slow"]).value(mode) == .slow)
        #expect(throws: ConfigError.self) { try ConfigValues(["a.mode": "medium"]).value(mode) }
    }

    @Test func catalogKnowsDeclaredKeysAndFreeSections() throws {
        let catalog = SettingsCatalog(
            settings: [Setting.count("server.workers", default: 2, in: 1...8, doc: "w").info,
                       Setting.bool("http.server_timing", default: true, doc: "t").info],
            freeSections: [FreeSection(name: "presets", doc: "p", exampleKey: "a", exampleValue: "w:1")])
        #expect(catalog.isKnown("server.workers") && catalog.isKnown("presets.anything"))
        #expect(!catalog.isKnown("server.wokers") && !catalog.isKnown("presets.") && !catalog.isKnown("workers"))
        #expect(catalog.sections == ["server", "http", "presets"])
        #expect(throws: ConfigError.unknownKey("server.wokers", origin: "flag --set")) {
            try catalog.validateKeys(ConfigValues(["server.wokers": "1", "presets.x": "w:1"], origin: "flag --set"))
        }
        let table = catalog.markdownTable()
        #expect(table.contains("| `server.workers` | count 1…8 | `2` | w |"))
        #expect(table.contains("| `presets.<name>` |"))
        #expect(catalog.exampleTOML().contains("[http]\n# t (true/false)\nserver_timing = true\n"))
    }

    @Test func secretValuesNeverAppearInErrors() {
        let plain = Setting.count("a.n", default: 1, in: 1...9, doc: "n")
        let secret = Setting.count("a.key", default: 1, in: 1...9, doc: "key").secret()
        let values = ConfigValues(["a.n": "deadbeef", "a.key": "deadbeef"], origin: "env")
        #expect(secret.isSecret && !plain.isSecret)
        #expect(throws: ConfigError.self) { try values.value(secret) }
        do { _ = try values.value(secret) } catch { #expect(!error.description.contains("deadbeef") && error.description.contains("a.key")) }
        do { _ = try values.value(plain) } catch { #expect(error.description.contains("deadbeef")) }
    }

}
