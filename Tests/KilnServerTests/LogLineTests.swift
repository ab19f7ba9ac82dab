import KilnModel
import Logging
import Testing
import KilnPipeline
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI
@testable import KilnServer

@Suite struct LogLineTests {
    let time = "2026-11-23T21:40:01.123Z"

    @Test func logfmtQuotesOnlyWhatNeedsIt() {
        #expect(LogLine.logfmtValue("plain/uri:1") == "plain/uri:1")
        #expect(LogLine.logfmtValue("") == "\"\"")
        #expect(LogLine.logfmtValue("two words") == "\"two words\"")
        #expect(LogLine.logfmtValue("a=b") == "\"a=b\"")
        #expect(LogLine.logfmtValue("say \"hi\"") == "\"say \\\"hi\\\"\"")
        #expect(LogLine.logfmtValue("back\\slash") == "\"back\\\\slash\"")
        #expect(LogLine.logfmtValue("line\nnext\r\tend") == "\"line\\nnext\\r\\tend\"")
        #expect(LogLine.logfmtValue("nul\u{0}bell\u{7}") == "\"nul\\u0000bell\\u0007\"")
        #expect(LogLine.logfmtValue("grüße") == "grüße")
    }

    @Test func logfmtLineHasTheFieldsInOrderAndFlattensStages() {
        let line = LogLine.format(.logfmt, time: time, level: .info, label: "kiln.worker", message: "access", metadata: [
            "zeta": "last", "status": .stringConvertible(404), "pid": .stringConvertible(42), "request_id": "abc",
            "reason": "no such file: a b.jpg", "stage_ms": .dictionary(["spec": .stringConvertible(0.5), "total": .stringConvertible(1.25)]),
        ])
        #expect(line == "time=\(time) level=info logger=kiln.worker msg=access pid=42 request_id=abc status=404 "
            + "stage_ms.spec=0.5 stage_ms.total=1.25 reason=\"no such file: a b.jpg\" zeta=last\n")
    }

    @Test func aNewlineInAMessageStaysOnOneLine() {
        for format in LogFormat.allCases {
            let line = LogLine.format(format, time: time, level: .error, label: "k", message: "first\nsecond \"q\"",
                                      metadata: ["bad key=": "v\r\n"])
            #expect(line.filter { $0 == "\n" }.count == 1 && line.hasSuffix("\n"))
        }
        let logfmt = LogLine.format(.logfmt, time: time, level: .error, label: "k", message: "first\nsecond", metadata: ["bad key=": "v"])
        #expect(logfmt.contains("msg=\"first\\nsecond\"") && logfmt.contains(" bad_key_=v"))
    }

    @Test func jsonIsOneObjectWithNumbersStringsAndNesting() {
        let line = LogLine.format(.json, time: time, level: .warning, label: "kiln.master", message: "tab\there \"quoted\" \\ \u{1}",
                                  metadata: ["pid": .stringConvertible(7), "duration_ms": .stringConvertible(1.5),
                                             "stage_ms": .dictionary(["decode": .stringConvertible(2.25)]),
                                             "list": .array(["a", .stringConvertible(1)]), "uri": "/ü?x=1"])
        #expect(line == "{\"time\":\"\(time)\",\"level\":\"warning\",\"logger\":\"kiln.master\","
            + "\"msg\":\"tab\\there \\\"quoted\\\" \\\\ \\u0001\",\"pid\":7,\"uri\":\"/ü?x=1\",\"duration_ms\":1.5,"
            + "\"stage_ms\":{\"decode\":2.25},\"list\":[\"a\",1]}\n")
    }

    @Test func timestampsAreUTCWithMilliseconds() {
        #expect(LogLine.timestamp(millisecondsSinceEpoch: 0) == "1970-01-01T00:00:00.000Z")
        #expect(LogLine.timestamp(millisecondsSinceEpoch: 951_782_400_007) == "2000-02-29T00:00:00.007Z")
        #expect(LogLine.timestamp(millisecondsSinceEpoch: 1_795_470_001_123) == "2026-11-23T21:40:01.123Z")
    }

    @Test func requestIDsComeFromTheWebServerATrustedHeaderOrTheRNG() {
        let nginx = String(repeating: "ab", count: 16)
        let r = HTTPRequest(fastCGIParams: ["REQUEST_URI": "/a.jpg", "KILN_REQUEST_ID": nginx, "HTTP_X_REQUEST_ID": "client-1"])
        #expect(RequestID.resolve(r, trustHeader: false) == nginx)
        #expect(RequestID.resolve(r, trustHeader: true) == "client-1")
        let forged = HTTPRequest(fastCGIParams: ["REQUEST_URI": "/a.jpg", "HTTP_X_REQUEST_ID": "x\r\nSet-Cookie: a=b"])
        let made = RequestID.resolve(forged, trustHeader: true)
        #expect(made.count == 16 && made.utf8.allSatisfy { Hex.lowerDigits.contains($0) })
        #expect(RequestID.generate() != RequestID.generate())
        #expect(!RequestID.isValid("") && !RequestID.isValid(String(repeating: "a", count: 129)) && RequestID.isValid("a.b:c_d-1"))
    }

    @Test func accessFieldsCountWhatTheClientGot() {
        var timeline = Timeline()
        timeline.add("spec", milliseconds: 0.123)
        var response = HTTPResponse(status: 200, headers: [("X-Cache", "HIT-DISK")], body: [1, 2, 3])
        response.timeline = timeline
        response.cacheOutcome = .hitDisk
        #expect(AccessLog.bodyBytes(response, method: "GET") == 3 && AccessLog.bodyBytes(response, method: "HEAD") == 0)
        let m = AccessLog.fields(HTTPRequest(method: "GET", uri: "/x"), response, bytes: 3, milliseconds: 1.234_56)
        #expect(m["cache"] == "HIT-DISK" && m["status"]?.description == "200" && m["duration_ms"]?.description == "1.23")
        #expect(m["reason"] == nil)
        guard case let .dictionary(stages)? = m["stage_ms"] else { Issue.record("no stage_ms"); return }
        #expect(stages["spec"]?.description == "0.12" && stages["total"]?.description == "0.12")
        #expect(AccessLog.bodyBytes(HTTPResponse(status: 304, body: [1]), method: "GET") == 0)
    }
}
