import KilnModel

/// The device's Client Hints and Save-Data, read from one request's headers and resolved for a
/// URL's `DeviceHintUse` while it is parsed (`RequestGate`), so the request that reaches the
/// pipeline, and its cache key, already holds the answer:
///
/// - `w:auto`: `Sec-CH-Width` (legacy `Width`, device pixels), else `Sec-CH-Viewport-Width`
///   (legacy `Viewport-Width`, CSS pixels) times the pixel ratio (the URL's `dpr:` when it has
///   one), snapped UP to the first of
///   `http.hint_widths` that holds it (above the largest: the largest); without either hint,
///   `http.hint_default_width`.
/// - `ch:1` without `dpr:` in the URL: `Sec-CH-DPR` (legacy `DPR`) multiplies the URL's sizes as
///   `dpr:` would, clamped to 1...4 and rounded up to a multiple of 0.5, so at most seven ratios
///   exist.
/// - `Save-Data: on` (and `ECT: 2g` / `slow-2g` with `http.save_data_ect`): `http.save_data_quality`
///   for URLs without `q:` (an explicit `q:` wins), on `ch:1` URLs (`http.save_data = hinted`) or
///   all image URLs (`all`).
///
/// Values that are not numbers in the grammar (`1e9`, `-1`, `abc`, `0`) are ignored, as if the
/// hint was not sent: an absurd hint lands on the default, never on a key of its own. `Vary`
/// (`varyNames`) is a function of the URL and the answer's format alone (itself fixed by the URL
/// and the `Accept` class), listing every hint the URL consults that can change the answer, so a
/// shared cache keeps one answer per hint value for every client, hinted or not.
public struct ClientHints: DeviceHintResolving, Equatable {
    /// Device pixels of the image's slot (`Sec-CH-Width`), if a usable number was sent.
    public var width: Int?
    /// CSS pixels of the viewport (`Sec-CH-Viewport-Width`).
    public var viewportWidth: Int?
    /// The pixel ratio after clamping and rounding (`Sec-CH-DPR`).
    public var dpr: Double?
    /// `Save-Data: on`, or a slow `ECT` when `http.save_data_ect` is on.
    public var saveData: Bool
    let settings: HintSettings

    /// The `http.*` settings the resolution reads.
    public struct HintSettings: Sendable, Equatable {
        public var widths: [Int]
        public var defaultWidth: Int
        public var saveData: SaveDataScope
        public var saveDataQuality: Int
        public var saveDataECT: Bool

        public init(http: HTTPConfiguration) {
            widths = http.hintWidths.sorted()
            defaultWidth = http.hintDefaultWidth
            saveData = http.saveData
            saveDataQuality = http.saveDataQuality
            saveDataECT = http.saveDataECT
        }
    }

    public init(headers: [String: String], http: HTTPConfiguration) {
        settings = HintSettings(http: http)
        width = Self.pixels(headers, HeaderName.Hint.width, HeaderName.Hint.legacyWidth)
        viewportWidth = Self.pixels(headers, HeaderName.Hint.viewportWidth, HeaderName.Hint.legacyViewportWidth)
        dpr = Self.ratio(Self.value(headers, HeaderName.Hint.dpr, HeaderName.Hint.legacyDPR))
        saveData = Self.savesData(headers, ect: settings.saveDataECT)
    }

    public func resolve(_ use: DeviceHintUse) -> DeviceAnswer {
        var answer = DeviceAnswer()
        if use.enabled && use.dpr { answer.dpr = dpr }
        if use.width {
            let ratio = use.dpr ? (dpr ?? 1) : use.urlDPR
            if let width {
                answer.width = snapped(width)
            } else if let viewportWidth {
                answer.width = snapped(Int((Double(viewportWidth) * ratio).rounded(.up)))
            } else {
                answer.width = settings.defaultWidth
            }
        }
        if saveData, Self.saveDataApplies(use, settings.saveData) { answer.quality = settings.saveDataQuality }
        return answer
    }

    /// The first bucket at least `width` wide, else the largest.
    public func snapped(_ width: Int) -> Int {
        settings.widths.first { $0 >= width } ?? settings.widths.last ?? width
    }

    /// Whether Save-Data can change this URL's answer.
    static func saveDataApplies(_ use: DeviceHintUse, _ scope: SaveDataScope) -> Bool {
        guard use.quality else { return false }
        switch scope {
        case .off: return false
        case .hinted: return use.enabled
        case .all: return true
        }
    }

    /// The `Vary` names for a URL: the hints it consults (Sec-CH- and legacy names), whatever
    /// this request sent. `answered`: the format of the answer (nil: a document), and whether it
    /// is lossless: Save-Data (and ECT) only when a quality can change it (`ImageFormat.hasQuality`),
    /// so a PNG or lossless answer keeps one object per URL at the edge. For one URL and one
    /// `Accept` class the answer's format is always the same, so `Vary` stays a function of both.
    public static func varyNames(_ use: DeviceHintUse, http: HTTPConfiguration, answered: ImageFormat? = .jpeg,
                                 lossless: Bool = false) -> [String] {
        var names: [String] = []
        if use.width {
            names += [HeaderName.Hint.width, HeaderName.Hint.viewportWidth, HeaderName.Hint.legacyWidth, HeaderName.Hint.legacyViewportWidth]
        }
        if use.enabled && use.dpr { names += [HeaderName.Hint.dpr, HeaderName.Hint.legacyDPR] }
        if saveDataApplies(use, http.saveData), answered?.hasQuality(lossless: lossless) ?? false {
            names.append(HeaderName.Hint.saveData)
            if http.saveDataECT { names.append(HeaderName.Hint.ect) }
        }
        return names
    }

    static func value(_ headers: [String: String], _ name: String, _ legacy: String) -> String? {
        headers[name.lowercased()] ?? headers[legacy.lowercased()]
    }

    /// A whole number of pixels, 1 or more (at most 9 digits), or nil.
    static func pixels(_ headers: [String: String], _ name: String, _ legacy: String) -> Int? {
        guard let text = value(headers, name, legacy)?.trimmingSpacesAndTabs(), !text.isEmpty,
              text.utf8.count <= 9, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let v = Int(text), v > 0 else { return nil }
        return v
    }

    /// A pixel ratio in plain decimal notation, clamped to 1...4 and rounded up to a multiple of
    /// 0.5 (a hair above a step, as 2.0000001, counts as the step); nil when not a number above 0.
    static func ratio(_ raw: String?) -> Double? {
        guard let text = raw?.trimmingSpacesAndTabs(), !text.isEmpty, text.utf8.count <= 16 else { return nil }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }),
              let v = Double(text), v.isFinite, v > 0 else { return nil }
        let clamped = min(max(v, 1), 4)
        return ((clamped * 2) - 0.001).rounded(.up) / 2
    }

    /// `Save-Data: on` (first token, any case), or `ECT: 2g` / `slow-2g` when `ect` is on.
    static func savesData(_ headers: [String: String], ect: Bool) -> Bool {
        if let v = headers[HeaderName.Hint.saveData.lowercased()],
           v.split(separator: ";").first?.trimmingSpacesAndTabs().lowercased() == "on" { return true }
        if ect, let v = headers[HeaderName.Hint.ect.lowercased()]?.trimmingSpacesAndTabs().lowercased(),
           v == "2g" || v == "slow-2g" { return true }
        return false
    }
}

/// Which URLs `Save-Data` lowers the quality of (`http.save_data`).
public enum SaveDataScope: String, CaseIterable, Sendable {
    /// Never.
    case off
    /// URLs that opt in to device hints (`ch:1`, `w:auto`) and have no `q:`.
    case hinted
    /// Every image URL without `q:` (all of them then carry `Vary: Save-Data`).
    case all
}
