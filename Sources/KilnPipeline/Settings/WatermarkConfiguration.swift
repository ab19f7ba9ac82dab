import KilnModel
import KilnPOSIX
import KilnProcessing

/// `[watermarks]`: named watermark images for `watermark:<name>` (`wm:`).
///
///     [watermarks]
///     logo = "/etc/kiln/logo.png"
///
/// Files of the operator, never URLs of clients. Each process reads and decodes every file once,
/// when it builds its pipeline (the master at start and on reload, to check them; each worker at
/// its start), so a missing or undecodable file stops the start. The SHA-256 of a file's bytes is
/// part of the cache key of every variant that draws it: a replaced file makes new keys and
/// ETags once the workers have read it again, after a reload (SIGHUP) or restart. Default: none.
public struct WatermarkConfiguration: Sendable, Equatable {
    /// Watermark name (lower case) → file path.
    public var paths: [String: String] = [:]
    /// Where each watermark came from (`file kiln.toml:12`), for error messages.
    public var origins: [String: String] = [:]

    /// A section of free keys: every `watermarks.<name>` is a watermark.
    public static let section = FreeSection(
        name: "watermarks", doc: "a watermark image file for `wm:<name>`, read once per worker (`KILN_WATERMARKS_<NAME>` in the environment)",
        exampleKey: "logo", exampleValue: "/etc/kiln/logo.png", exampleCommented: true)

    public init(paths: [String: String] = [:]) {
        self.paths = paths
    }

    public init(_ v: ConfigValues) {
        for (key, value) in v.values where key.hasPrefix("watermarks.") {
            let name = String(key.dropFirst("watermarks.".count))
            paths[name] = value
            origins[name] = v.origin(key)
        }
    }

    /// The names `wm:` may use.
    public var names: Set<String> { Set(paths.keys) }

    /// Checks the names (without touching the files).
    public func validate() throws(ConfigError) {
        for name in paths.keys.sorted() where !WatermarkOptions.isValidName(name) {
            throw .invalid(key: "watermarks.\(name)", value: paths[name] ?? "",
                           expected: "a name of 1 to 64 lower-case letters, digits, '_' or '-'", origin: origins[name] ?? "default")
        }
    }

    /// Reads, sniffs and decodes every file with `stages` (converted to sRGB like sources, as
    /// premultiplied RGBA); `limits` bounds each decode, `maxFileBytes` each file.
    public func load(with stages: PipelineStages, limits: DecodeLimits, maxFileBytes: Int) throws(ConfigError) -> WatermarkLibrary {
        var images: [String: WatermarkImage] = [:]
        for name in paths.keys.sorted() {
            let path = paths[name] ?? ""
            func refuse(_ why: String) -> ConfigError {
                .invalid(key: "watermarks.\(name)", value: path, expected: "a readable PNG, WebP, JPEG, GIF or AVIF image file (\(why))",
                         origin: origins[name] ?? "default")
            }
            let data: [UInt8]
            do {
                data = try Files.read(path)
            } catch {
                throw refuse("\(error)")
            }
            guard data.count <= maxFileBytes else { throw refuse("\(data.count) bytes, over limits.max_file_bytes") }
            let sniffed = stages.sniffer.sniff(data)
            guard let format = sniffed.format else { throw refuse("the file is \(sniffed.mimeType)") }
            let decoded: DecodedImage
            do {
                decoded = try stages.decoders.decoder(for: format).decode(data, options: DecodeOptions(limits: limits))
            } catch {
                throw refuse("\(error)")
            }
            var pixels = decoded.buffer
            if let profile = decoded.iccProfile { pixels = stages.colorConverter.convertToSRGB(pixels, profile: profile) }
            images[name] = WatermarkImage(decoded: pixels, identity: Digest.sha256Hex(data))
        }
        return WatermarkLibrary(images)
    }
}
