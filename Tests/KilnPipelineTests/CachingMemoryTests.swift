import Foundation
import Testing
import KilnTestBytes
import KilnTestSupport
import KilnModel
@testable import KilnPipeline

@Suite struct CachingMemoryTests {
    func img(_ count: Int, _ seed: UInt8 = 1) -> CachedImage { CachingFixtures.image(count, seed: seed) }

    @Test func leastRecentlyUsedGoesFirst() {
        let cache = MemoryCache(costLimit: 1 << 20, countLimit: 3, ttl: 0)
        cache.set(img(10, 1), forKey: "a")
        cache.set(img(10, 2), forKey: "b")
        cache.set(img(10, 3), forKey: "c")
        #expect(cache.keysByRecency == ["c", "b", "a"])
        #expect(cache.value(forKey: "a") == img(10, 1))
        #expect(cache.keysByRecency == ["a", "c", "b"])
        cache.set(img(10, 4), forKey: "d")
        #expect(cache.value(forKey: "b") == nil)
        #expect(cache.keysByRecency == ["d", "a", "c"])
        #expect(cache.totalCount == 3)
    }

    @Test func costLimitEvictsTheColdestUntilItFits() {
        let cache = MemoryCache(costLimit: 100, countLimit: 100, ttl: 0, entryCostLimit: 100)
        cache.set(img(40, 1), forKey: "a")
        cache.set(img(40, 2), forKey: "b")
        _ = cache.value(forKey: "a")
        cache.set(img(30, 3), forKey: "c")        // 110 > 100: b (coldest) goes
        #expect(cache.keysByRecency == ["c", "a"])
        #expect(cache.totalCost == 70)
        cache.set(img(100, 4), forKey: "d")       // needs everything else gone
        #expect(cache.keysByRecency == ["d"])
        #expect(cache.totalCost == 100)
        cache.set(img(10, 5), forKey: "d")        // replacing adjusts the cost
        #expect(cache.totalCost == 10)
    }

    @Test func entriesOverTheEntryLimitAreNotKept() {
        let cache = MemoryCache(costLimit: 1000, countLimit: 10, ttl: 0)   // entry limit 100
        cache.set(img(50), forKey: "a")
        cache.set(img(101), forKey: "a")          // too big: the old value must not be served either
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.totalCost == 0)
    }

    @Test func countLimitEvicts() {
        let cache = MemoryCache(costLimit: 1 << 20, countLimit: 2, ttl: 0)
        for (i, k) in ["a", "b", "c", "d"].enumerated() { cache.set(img(5, UInt8(i)), forKey: k) }
        #expect(cache.keysByRecency == ["d", "c"])
        #expect(cache.totalCost == 10)
        let off = MemoryCache(costLimit: 1 << 20, countLimit: 0, ttl: 0)
        off.set(img(5), forKey: "a")
        #expect(off.value(forKey: "a") == nil)
    }

    @Test func entriesExpireAfterTheirTTLWhetherHitOrNot() {
        let clock = ManualClock()
        let cache = MemoryCache(costLimit: 1 << 20, countLimit: 10, ttl: 10, now: { clock.nanoseconds })
        cache.set(img(5), forKey: "a")
        clock.advance(seconds: 5)
        cache.set(img(5, 2), forKey: "b")
        #expect(cache.value(forKey: "a") != nil)  // a hit does not extend the life
        clock.advance(seconds: 4.9)
        #expect(cache.value(forKey: "a") != nil)
        clock.advance(seconds: 0.1)
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.totalCount == 1)             // removed on the expired read
        #expect(cache.value(forKey: "b") != nil)
        clock.advance(seconds: 5)
        #expect(cache.value(forKey: "b") == nil)
        #expect(cache.totalCost == 0)
    }

    @Test func expiredColdEntriesAreDroppedOnStore() {
        let clock = ManualClock()
        let cache = MemoryCache(costLimit: 1 << 20, countLimit: 10, ttl: 10, now: { clock.nanoseconds })
        cache.set(img(5), forKey: "old")
        clock.advance(seconds: 11)
        cache.set(img(5, 2), forKey: "new")
        #expect(cache.keysByRecency == ["new"])
    }

    @Test func subscriptUsesTheDigestAndNilRemoves() {
        let cache = MemoryCache()
        let key = CachingFixtures.key("rs:300:0:fit")
        cache[key] = img(10)
        #expect(cache.value(forKey: key.hex) == img(10))
        cache[key] = nil
        #expect(cache[key] == nil)
        cache[key] = img(10)
        cache.removeAll()
        #expect(cache.totalCount == 0 && cache.totalCost == 0 && cache[key] == nil)
    }

    /// Random operations against a plain array model: order, contents and cost must agree.
    @Test func agreesWithAReferenceModel() {
        let cache = MemoryCache(costLimit: 500, countLimit: 8, ttl: 0, entryCostLimit: 200)
        var model: [(key: String, cost: Int)] = []   // most recent first
        var rng = SplitMix64(state: 0x6B69_6C6E)   // seeded: a failure reproduces
        for step in 0..<5000 {
            let key = "k\(Int.random(in: 0..<20, using: &rng))"
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5:
                let cost = Int.random(in: 0...250, using: &rng)
                cache.set(img(cost, UInt8(step % 251)), forKey: key)
                model.removeAll { $0.key == key }
                if cost <= 200 {
                    model.insert((key, cost), at: 0)
                    while model.reduce(0, { $0 + $1.cost }) > 500 || model.count > 8 { model.removeLast() }
                }
            case 5..<9:
                let hit = cache.value(forKey: key) != nil
                if let i = model.firstIndex(where: { $0.key == key }) {
                    #expect(hit)
                    model.insert(model.remove(at: i), at: 0)
                } else {
                    #expect(!hit)
                }
            default:
                cache.removeValue(forKey: key)
                model.removeAll { $0.key == key }
            }
            guard cache.keysByRecency == model.map(\.key), cache.totalCost == model.reduce(0, { $0 + $1.cost }) else {
                Issue.record("diverged at step \(step): \(cache.keysByRecency) vs \(model.map(\.key))")
                return
            }
        }
    }
}

@Suite struct CachingKeyAndConfigurationTests {
    let identity = SourceIdentity(size: 10, mtimeNanoseconds: 5_000_000_000, inode: 7)

    @Test func keysAreStableDigestsOfEveryPart() {
        let base = CacheKey(canonicalRequest: "rs:300:0:fit/-/a.jpg", outputFormat: "webp", source: identity, sourcePath: "a.jpg")
        #expect(base.hex.count == 64 && CacheFiles.isHex(base.hex, count: 64))
        #expect(base.hex == Digest.sha256Hex(base.text))
        #expect(base == CacheKey(canonicalRequest: "rs:300:0:fit/-/a.jpg", outputFormat: "webp", source: identity, sourcePath: "a.jpg"))
        let variants = [
            CacheKey(canonicalRequest: "rs:301:0:fit/-/a.jpg", outputFormat: "webp", source: identity, sourcePath: "a.jpg"),
            CacheKey(canonicalRequest: "rs:300:0:fit/-/a.jpg", outputFormat: "source", source: identity, sourcePath: "a.jpg"),
            CacheKey(canonicalRequest: "rs:300:0:fit/-/a.jpg", outputFormat: "webp",
                     source: SourceIdentity(size: 10, mtimeNanoseconds: 5_000_000_001, inode: 7), sourcePath: "a.jpg"),
            CacheKey(canonicalRequest: "rs:300:0:fit/-/a.jpg", outputFormat: "webp", source: identity, sourcePath: "a.jpg", settings: "jq=81"),
            CacheKey(canonicalRequest: "rs:300:0:fit/-/a.jpg", outputFormat: "webp", source: identity, sourcePath: "a.jpg", version: CacheKey.formatVersion + 1),
        ]
        #expect(Set(variants.map(\.hex) + [base.hex]).count == 6)
    }

    @Test func outputTokenFollowsAcceptOnlyForAuto() {
        #expect(CacheKey.outputToken(OutputOptions(format: .auto), accepted: accepting("image/avif,image/webp,*/*")) == "avif+webp")
        #expect(CacheKey.outputToken(OutputOptions(format: .auto), accepted: accepting("image/png")) == "source")
        #expect(CacheKey.outputToken(OutputOptions(format: .auto), accepted: accepting(nil)) == "source")
        #expect(CacheKey.outputToken(OutputOptions(format: .source), accepted: accepting("image/webp")) == "source")
        #expect(CacheKey.outputToken(OutputOptions(format: .format(.png)), accepted: accepting("image/webp")) == "png")
        let request = ImageRequest(sourcePath: "x/a.jpg", output: OutputOptions(format: .auto))
        let webp = CacheKey(request: request, accepted: accepting("image/webp"), source: identity)
        let plain = CacheKey(request: request, accepted: accepting("image/jpeg"), source: identity)
        #expect(webp.hex != plain.hex)
        #expect(webp.sourcePath == "x/a.jpg")
        var output = OutputConfiguration()
        let before = output.cacheSettings(for: OutputOptions(), outputToken: "source")
        output.jpegQuality = 90
        #expect(output.cacheSettings(for: OutputOptions(), outputToken: "source") != before)
    }

    @Test func configurationDefaultsAndParsing() throws {
        let d = try CacheConfiguration(ConfigValues())
        #expect(d == CacheConfiguration())
        #expect(d.memoryCostLimit == 64 << 20 && d.memoryCountLimit == 1000 && d.memoryTTL == 600)
        // The disk cache is on by default: `$CACHE_DIRECTORY`, else kiln-cache in the working folder.
        let cwd = FileManager.default.currentDirectoryPath
        let expected = ProcessInfo.processInfo.environment["CACHE_DIRECTORY"].map { String($0.split(separator: ":")[0]) } ?? (cwd == "/" ? "" : cwd) + "/kiln-cache"
        #expect(d.diskEnabled && d.diskPath == expected && d.diskPathIsDefault)
        #expect(d.diskSizeLimit == 1 << 30 && d.diskLowWater == 0.9)
        #expect(try !CacheConfiguration(ConfigValues(["cache.disk_path": ""], origin: "file")).diskEnabled, "empty turns it off")
        #expect(d.lockTimeout == 10 && d.negativeTTL == 10 && d.store == .final && d.storesFinal)

        let c = try CacheConfiguration(ConfigValues([
            "cache.memory_cost_limit": "16MB", "cache.memory_count_limit": "500", "cache.memory_ttl": "2m",
            "cache.disk_path": "/var/cache/kiln/", "cache.disk_size_limit": "2GB", "cache.disk_low_water": "80%",
            "cache.lock_timeout": "500ms", "cache.negative_ttl": "0", "cache.store": "Original",
        ], origin: "file"))
        #expect(c.memoryCostLimit == 16 << 20 && c.memoryCountLimit == 500 && c.memoryTTL == 120)
        #expect(c.diskPath == "/var/cache/kiln" && c.diskEnabled && c.diskSizeLimit == 2 << 30 && c.diskLowWater == 0.8)
        #expect(c.lockTimeout == 0.5 && c.negativeTTL == 0 && c.store == .original && !c.storesFinal)
        #expect(try CacheConfiguration(ConfigValues(["cache.disk_low_water": "0.75"])).diskLowWater == 0.75)
        #expect(try CacheConfiguration(ConfigValues(["cache.store": "both"])).storesFinal)
    }

    @Test func configurationRejectsBadValues() {
        for (key, value) in [("cache.disk_path", "relative/cache"), ("cache.disk_low_water", "1.5"), ("cache.disk_low_water", "ninety"),
                             ("cache.store", "everything"), ("cache.disk_size_limit", "10KB"), ("cache.lock_timeout", "1h"),
                             ("cache.memory_count_limit", "-1"), ("cache.negative_ttl", "soon")] {
            #expect(throws: ConfigError.self, "\(key) = \(value)") { try CacheConfiguration(ConfigValues([key: value])) }
        }
        #expect(CacheConfiguration.keys.count == 9 && CacheConfiguration.keys.allSatisfy { $0.hasPrefix("cache.") })
    }
}
