import Testing
import KilnTestBytes
import KilnPipeline
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI
@testable import KilnServer

/// The FastCGI record reader over bytes: whole requests in any split, padding, long lengths,
/// limits, garbage, and the answers it gives without a handler.
@Suite struct FastCGIRecordReaderTests {
    typealias Parser = FastCGIRequestParser

    typealias B = FastCGIBytes

    static let nginxLike: [(String, String)] = [
        ("REQUEST_METHOD", "GET"), ("REQUEST_URI", "/w:100/a.jpg?x=1"), ("DOCUMENT_URI", "/w:100/a.jpg"),
        ("HTTP_ACCEPT", "image/webp,*/*"), ("REMOTE_ADDR", "127.0.0.1"), ("EMPTY", ""),
    ]

    @Test func wholeRequestInOneFeed() throws {
        var p = Parser()
        let out = try p.feed(B.request(params: Self.nginxLike, stdin: [1, 2, 3]))
        let r = try #require(out.request)
        #expect(r.id == 1 && !r.keepConnection && r.stdinBytes == 3)
        #expect(r.params == Dictionary(uniqueKeysWithValues: Self.nginxLike))
        #expect(out.replies.isEmpty && !out.close)
    }

    @Test func everySplitPointGivesTheSameRequest() throws {
        let bytes = B.request(id: 7, params: Self.nginxLike, stdin: [9], padding: 5)
        var whole = Parser()
        let expected = try #require(try whole.feed(bytes).request)
        for cut in 0...bytes.count {
            var p = Parser()
            let first = try p.feed(Array(bytes[..<cut]))
            if cut < bytes.count {
                #expect(first.request == nil, "complete after \(cut) of \(bytes.count) bytes")
                #expect(p.hasPartialRequest == (cut > 0))
                let second = try p.feed(Array(bytes[cut...]))
                #expect(second.request == expected, "split at \(cut)")
            } else {
                #expect(first.request == expected)
            }
        }
        // One byte at a time.
        var p = Parser()
        var got: FastCGIRequest?
        for b in bytes { if let r = try p.feed([b]).request { got = r } }
        #expect(got == expected)
    }

    @Test func theEmptyStdinRecordEndsTheRequest() throws {
        var p = Parser()
        let full = B.request(params: Self.nginxLike)
        let withoutStdinEnd = Array(full.dropLast(8))
        #expect(try p.feed(withoutStdinEnd).request == nil)
        #expect(p.hasPartialRequest)
        #expect(try p.feed(Array(full.suffix(8))).request != nil)
    }

    @Test func longLengthsPaddingAndSeveralParamsRecords() throws {
        let big = String(repeating: "x", count: 70_000) // 4-byte length, spans two PARAMS records
        let name = String(repeating: "N", count: 200)    // 4-byte name length
        var p = Parser()
        let r = try #require(try p.feed(B.request(params: [(name, "v"), ("Q", big), ("A", "b")], padding: 255)).request)
        #expect(r.params[name] == "v" && r.params["Q"] == big && r.params["A"] == "b")
    }

    @Test func nulAndInvalidUTF8AreKeptVisibleAndDoNotCrash() throws {
        var body: [UInt8] = []
        body += [11, 12] + Array("DOCUMENT_URI".utf8).dropLast(1) // name "DOCUMENT_UR" (11)
        body += Array("/a.jpg\0.png".utf8) + [0]                  // value: 12 bytes with NULs
        body += [1, 2] + [0x41] + [0xff, 0xfe]                     // "A" = invalid UTF-8
        var p = Parser()
        let r = try #require(try p.feed(B.begin() + B.record(4, body) + B.record(4, []) + B.record(5, [])).request)
        #expect(r.params["DOCUMENT_UR"] == "/a.jpg\0.png\0")
        #expect(r.params["A"] == "\u{FFFD}\u{FFFD}")
        // The bytes of the value that is not UTF-8 are kept, so U+FFFD never stands for them.
        #expect(r.nonUTF8Params == ["A": [0xff, 0xfe]])
        #expect(HTTPRequest(fastCGIParams: r.params, nonUTF8: r.nonUTF8Params).pathIsUTF8)
        #expect(!HTTPRequest(fastCGIParams: r.params, nonUTF8: ["DOCUMENT_URI": [0xff]]).pathIsUTF8)
    }

    @Test func malformedPairsAreProtocolErrors() {
        let cases: [[UInt8]] = [
            [5, 1, 0x41],                    // name runs past the end
            [0x80, 0, 0],                    // 4-byte length cut short
            [1],                             // value length missing
            [0xff, 0xff, 0xff, 0xff, 0, 0x41], // 2^31-1 name length
            [1, 0x8f, 0xff, 0xff, 0xff, 0x41],
        ]
        for body in cases {
            var p = Parser()
            #expect(throws: FastCGIProtocolError.self, "\(body)") {
                _ = try p.feed(B.begin() + B.record(4, body) + B.record(4, []) + B.record(5, []))
            }
        }
    }

    @Test func limitsOnParamsBytesPairsAndRecords() {
        var p = Parser(limits: .init(maxParamsBytes: 1000, maxParams: 10, maxRecords: 50))
        let big = B.nameValues([("A", String(repeating: "b", count: 1200))])
        #expect(throws: FastCGIProtocolError.tooLarge("more than 1000 bytes of params")) {
            _ = try p.feed(B.begin() + B.record(4, big))
        }
        var q = Parser(limits: .init(maxParamsBytes: 1000, maxParams: 10, maxRecords: 50))
        let many = B.nameValues((0..<11).map { ("K\($0)", "") })
        #expect(throws: FastCGIProtocolError.tooLarge("more than 10 params")) {
            _ = try q.feed(B.begin() + B.record(4, many) + B.record(4, []))
        }
        var r = Parser(limits: .init(maxParamsBytes: 1000, maxParams: 10, maxRecords: 50))
        let stdinDrip = (0..<60).flatMap { _ in B.record(5, [1]) }
        #expect(throws: FastCGIProtocolError.tooLarge("more than 50 records")) {
            _ = try r.feed(B.begin() + B.record(4, []) + stdinDrip)
        }
    }

    @Test func garbageAndWrongVersionAreRefused() {
        var p = Parser()
        #expect(throws: FastCGIProtocolError.unsupportedVersion(0x47)) { _ = try p.feed(Array("GET / HTTP/1.1\r\n\r\n".utf8)) }
        var q = Parser()
        #expect(throws: FastCGIProtocolError.unsupportedVersion(2)) { _ = try q.feed(B.record(1, [0, 1, 0, 0, 0, 0, 0, 0], version: 2)) }
        // STDIN before the params ended, records a web server never sends, a short BEGIN body.
        let bad: [[UInt8]] = [
            B.begin() + B.record(5, []),
            B.begin() + B.record(6, [1]),
            B.begin() + B.record(3, [0, 0, 0, 0, 0, 0, 0, 0]),
            B.begin() + B.record(4, []) + B.record(8, [1]),
            B.begin() + B.begin(),
            B.record(1, [0, 1]),
            B.record(42, id: 3, []),
        ]
        for bytes in bad {
            var r = Parser()
            #expect(throws: FastCGIProtocolError.self, "\(bytes)") { _ = try r.feed(bytes) }
        }
    }

    @Test func authorizerAndFilterGetUnknownRole() throws {
        for role in [FastCGI.Role.authorizer, FastCGI.Role.filter, 0, 99] {
            var p = Parser()
            let out = try p.feed(B.request(id: 3, role: role, params: Self.nginxLike))
            #expect(out.request == nil)
            #expect(out.close)
            #expect(out.replies == FastCGIRecords.endRequest(requestID: 3, protocolStatus: FastCGI.ProtocolStatus.unknownRole))
            #expect(Array(out.replies[8..<16]) == [0, 0, 0, 0, 3, 0, 0, 0])
        }
        // With FCGI_KEEP_CONN the refused request's records are ignored and the next one is served.
        var p = Parser()
        let out = try p.feed(B.request(id: 3, role: 2, keep: true, params: Self.nginxLike) + B.request(id: 4, params: [("A", "1")]))
        #expect(!out.close)
        #expect(out.replies.count == 16 && out.replies[4 + 8] == FastCGI.ProtocolStatus.unknownRole)
        #expect(out.request?.id == 4 && out.request?.params == ["A": "1"])
    }

    @Test func aSecondRequestIDGetsCantMultiplex() throws {
        var p = Parser()
        let out = try p.feed(B.begin(id: 1) + B.begin(id: 2) + B.record(4, id: 2, [1, 1, 0x41, 0x42])
                             + B.record(4, id: 1, []) + B.record(5, id: 1, []))
        #expect(out.replies == FastCGIRecords.endRequest(requestID: 2, protocolStatus: FastCGI.ProtocolStatus.cantMultiplexConnection))
        #expect(out.request?.id == 1 && out.request?.params == [:])
    }

    @Test func getValuesAndUnknownManagementTypes() throws {
        var p = Parser()
        let query = B.nameValues([("FCGI_MAX_CONNS", ""), ("FCGI_MAX_REQS", ""), ("FCGI_MPXS_CONNS", ""), ("OTHER", "")])
        let out = try p.feed(B.record(9, id: 0, query) + B.record(77, id: 0, [1, 2]))
        #expect(out.request == nil && !out.close)
        let header = Array(out.replies[0..<8])
        #expect(header[0] == 1 && header[1] == FastCGI.RecordType.getValuesResult && header[2] == 0 && header[3] == 0)
        let length = Int(header[4]) << 8 | Int(header[5])
        let values = try Array(out.replies[8..<8 + length]).withUnsafeBytes { try FastCGINameValuePairs.decode($0, maxPairs: 10) }
        #expect(values == ["FCGI_MAX_CONNS": "1", "FCGI_MAX_REQS": "1", "FCGI_MPXS_CONNS": "0"])
        let unknown = Array(out.replies[(8 + length + Int(header[6]))...])
        #expect(unknown == FastCGIRecords.record(type: FastCGI.RecordType.unknownType, requestID: 0, content: [77, 0, 0, 0, 0, 0, 0, 0]))
        // Management records also work in the middle of a request.
        var q = Parser()
        let mid = try q.feed(B.begin() + B.record(9, id: 0, query) + B.record(4, []) + B.record(5, []))
        #expect(mid.request != nil && !mid.replies.isEmpty)
    }

    @Test func abortDropsTheRequestAndInactiveIDsAreIgnored() throws {
        var p = Parser()
        let out = try p.feed(B.record(4, id: 9, [1, 1, 0x41, 0x42]) + B.begin(id: 1) + B.record(2, id: 1, []))
        #expect(out.request == nil && out.close)
        #expect(out.replies == FastCGIRecords.endRequest(requestID: 1, protocolStatus: FastCGI.ProtocolStatus.requestComplete))
    }

    @Test func keptConnectionDeliversOneRequestAtATime() throws {
        var p = Parser()
        let first = try p.feed(B.request(id: 1, keep: true, params: [("A", "1")]) + B.request(id: 2, keep: true, params: [("A", "2")]))
        #expect(first.request?.params == ["A": "1"] && first.request?.keepConnection == true)
        #expect(p.bufferedBytes > 0)
        let second = try p.feed([])
        #expect(second.request?.params == ["A": "2"] && second.request?.id == 2)
        let third = try p.feed([])
        #expect(third.request == nil && !p.hasPartialRequest)
    }

    /// Apache's mod_proxy_fcgi writes BEGIN_REQUEST and the params in one write and the empty
    /// STDIN record in a later one; it sends REQUEST_URI raw and no DOCUMENT_URI. The request is
    /// complete only with that last record, and the raw URI is what gets parsed.
    @Test func apacheStyleStdinInALaterWrite() throws {
        let params: [(String, String)] = [
            ("REQUEST_METHOD", "GET"), ("REQUEST_URI", "/w:10/a%20b%2Fc.jpg?x=1"), ("QUERY_STRING", "x=1"),
            ("SCRIPT_NAME", "/w:10/a b%2Fc.jpg"), ("SCRIPT_FILENAME", "proxy:fcgi://localhost/w:10/a%20b%2Fc.jpg"),
            ("HTTP_IF_NONE_MATCH", "\"abc\""), ("REMOTE_ADDR", "127.0.0.1"),
        ]
        let bytes = B.request(params: params)
        var p = Parser()
        let first = try p.feed(Array(bytes.dropLast(8)))
        #expect(first.request == nil && first.replies.isEmpty && !first.close && p.hasPartialRequest)
        let r = try #require(try p.feed(Array(bytes.suffix(8))).request)
        #expect(r.id == 1 && !r.keepConnection && r.params == Dictionary(uniqueKeysWithValues: params))
        let http = HTTPRequest(fastCGIParams: r.params)
        #expect(http.uri == "/w:10/a%20b%2Fc.jpg?x=1" && http.documentURI == nil)
        #expect(http.specPath.path == "/w:10/a%20b%2Fc.jpg?x=1" && !http.specPath.isDecoded)
        #expect(http.headers["if-none-match"] == "\"abc\"")
        #expect(p.bufferedBytes == 0)
    }

    /// A front end may use another request id, put each pair in its own padded PARAMS record,
    /// send a body in several STDIN records, and send each record in its own write; a late
    /// ABORT_REQUEST for the request already handed out is ignored without closing.
    @Test func manyRecordsOtherIDAndALateAbort() throws {
        let params: [(String, String)] = (0..<40).map { ("P\($0)", String(repeating: "v", count: $0 * 7)) }
            + [("REQUEST_METHOD", "GET"), ("REQUEST_URI", "/w:20/a.jpg")]
        var records = [B.begin(id: 258)]
        for pair in params { records.append(B.record(4, id: 258, B.nameValues([pair]), padding: 3)) }
        records += [B.record(4, id: 258, []), B.record(5, id: 258, [1, 2, 3]), B.record(5, id: 258, [4]),
                    B.record(5, id: 258, [])]
        var p = Parser()
        var got: [FastCGIRequest] = []
        for (i, record) in records.enumerated() {
            let out = try p.feed(record)
            #expect(out.replies.isEmpty && !out.close)
            if let r = out.request { got.append(r); #expect(i == records.count - 1) }
        }
        let r = try #require(got.first)
        #expect(got.count == 1 && r.id == 258 && r.stdinBytes == 4 && r.params == Dictionary(uniqueKeysWithValues: params))
        let late = try p.feed(B.record(2, id: 258, []))
        #expect(late.request == nil && late.replies.isEmpty && !late.close)
    }

    /// Whether `bytes` are whole FastCGI version-1 records, nothing left over.
    static func wholeRecords(_ bytes: [UInt8]) -> Bool {
        var i = 0
        while i + 8 <= bytes.count {
            guard bytes[i] == 1 else { return false }
            i += 8 + (Int(bytes[i + 4]) << 8 | Int(bytes[i + 5])) + Int(bytes[i + 6])
        }
        return i == bytes.count
    }

    /// Seeded random bytes, and seeded corruptions of a valid request (the fuzzer does this at
    /// scale): each feed is a `FastCGIProtocolError` or an output of whole reply records and at
    /// most one request that the bytes can hold (its id one of their record ids, no more params
    /// than limits allow, no more STDIN than was sent); the same bytes give the same answer
    /// again; each answer comes at once. An untouched request parses as it was written.
    @Test func randomBytesNeverCrash() throws {
        var rng = SplitMix64(state: 0x4663_6769_5265_6164)
        let valid = B.request(params: Self.nginxLike, stdin: [1, 2])
        var expected = Parser()
        let original = try #require(try expected.feed(valid).request)
        var inputs: [[UInt8]] = []
        for _ in 0..<3000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            inputs.append(bytes)
            inputs.append((0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
        let clock = ContinuousClock()
        var slowest = Duration.zero
        var requests = 0, errors = 0
        for bytes in inputs {
            func parse() -> Result<Parser.Output, FastCGIProtocolError> {
                var p = Parser()
                do throws(FastCGIProtocolError) { return .success(try p.feed(bytes)) } catch { return .failure(error) }
            }
            let started = clock.now
            let result = parse()
            slowest = max(slowest, clock.now - started)
            #expect(parse() == result, "the same bytes gave another answer: \(bytes)")
            guard case .success(let out) = result else { errors += 1; continue }
            #expect(Self.wholeRecords(out.replies), "replies that are not whole records for \(bytes)")
            guard let r = out.request else { continue }
            requests += 1
            let ids = Set(stride(from: 0, to: bytes.count - 7, by: 1).map { Int(bytes[$0 + 2]) << 8 | Int(bytes[$0 + 3]) })
            #expect(ids.contains(r.id), "request id \(r.id) is in no record of \(bytes)")
            #expect(r.params.count <= Parser.Limits().maxParams && r.stdinBytes <= bytes.count, "\(r) from \(bytes.count) bytes")
            #expect(r.params.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count } <= bytes.count, "\(r) from \(bytes.count) bytes")
            if bytes == valid { #expect(r == original) }
        }
        #expect(slowest < .milliseconds(500), "the slowest feed took \(slowest)")
        // Both outcomes occur: corruptions in padding or values still parse; most garbage does not.
        #expect(requests > 0 && errors > 0, "\(requests) requests, \(errors) errors")
    }
}
