import Glibc
import KilnPOSIX

/// One accepted FastCGI connection: reads whole requests against a deadline and writes answers.
///
/// Reading polls the socket and reads whatever is there into one 64 KB buffer (nginx's request
/// usually arrives in one read), feeding `FastCGIRequestParser`. A request must be complete
/// (BEGIN_REQUEST, params, STDIN up to its empty record) within `requestReadTimeout` of the
/// connection's accept, or, on a connection the web server keeps (FCGI_KEEP_CONN), of its first
/// byte; between requests a kept connection may stay idle for `keepaliveTimeout`. Past either
/// bound the connection is closed, so a peer that sends half a request, or a byte a second,
/// holds a worker for a bounded time only.
///
/// Writing is bounded too: a write that makes no progress for `requestReadTimeout` (a peer that
/// never reads) fails (SO_SNDTIMEO) and the connection is closed.
public final class FastCGIConnection {
    public struct Timeouts: Sendable, Equatable {
        public var requestRead: Double
        public var keepalive: Double

        public init(requestRead: Double, keepalive: Double) {
            self.requestRead = requestRead
            self.keepalive = keepalive
        }
    }

    /// Why `nextRequest` returned without a request. The connection is to be closed.
    public enum End: Error, Equatable {
        /// The peer closed the connection; `midRequest`: with part of a request sent.
        case peerClosed(midRequest: Bool)
        /// The deadline passed: `idle` (a kept connection without a new request) or with
        /// `bytes` of an incomplete request.
        case timedOut(idle: Bool, bytes: Int)
        /// A refused request without FCGI_KEEP_CONN was answered (FCGI_UNKNOWN_ROLE) or aborted.
        case refused
        case protocolError(FastCGIProtocolError)
        /// A read or write failed (errno).
        case failed(Int32)
        /// A stop signal arrived while a kept connection was idle.
        case stopRequested
    }

    public enum Next: Equatable {
        case request(FastCGIRequest)
        case end(End)
    }

    public let fd: Int32
    public let timeouts: Timeouts
    private var parser: FastCGIRequestParser
    /// Bytes read in total, for the log.
    public private(set) var bytesRead = 0
    /// Whether a request was handed out on this connection already.
    private var served = false
    private var closed = false

    public init(fd: Int32, timeouts: Timeouts, limits: FastCGIRequestParser.Limits = .init()) {
        self.fd = fd
        self.timeouts = timeouts
        parser = FastCGIRequestParser(limits: limits)
        var tv = FastCGIConnection.timeval(seconds: timeouts.requestRead)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close() }

    /// Reads the next whole request. Management records and refusals are answered on the way.
    /// `buffer` is the read buffer (shared by every connection of a worker).
    public func nextRequest(buffer: UnsafeMutableRawBufferPointer, shouldStop: () -> Bool) -> Next {
        var idle = served
        var deadline = MonotonicClock.seconds() + (idle ? timeouts.keepalive : timeouts.requestRead)
        var bytes = UnsafeRawBufferPointer(start: nil, count: 0)
        while true {
            // Bytes left over from the last read are parsed before waiting for more.
            let out: FastCGIRequestParser.Output
            do {
                out = try parser.feed(bytes)
            } catch {
                return .end(.protocolError(error))
            }
            if !out.replies.isEmpty, let e = write(out.replies) { return .end(.failed(e)) }
            if let request = out.request {
                served = true
                return .request(request)
            }
            if out.close { return .end(.refused) }
            if idle && parser.hasPartialRequest {
                idle = false
                deadline = MonotonicClock.seconds() + timeouts.requestRead
            }
            switch read(into: buffer, deadline: deadline, idle: idle, shouldStop: shouldStop) {
            case let .success(n):
                bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
                if n == 0 { return .end(.peerClosed(midRequest: parser.hasPartialRequest)) }
            case let .failure(end):
                return .end(end)
            }
        }
    }

    /// Waits until the socket is readable or `deadline` passes, then reads what is there.
    private func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Double, idle: Bool,
                      shouldStop: () -> Bool) -> Result<Int, End> {
        while true {
            let left = deadline - MonotonicClock.seconds()
            guard left > 0 else {
                return .failure(.timedOut(idle: idle && !parser.hasPartialRequest, bytes: bytesRead))
            }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let rc = poll(&p, 1, Int32(min((left * 1000).rounded(.up), 3_600_000)))
            if rc < 0 {
                let e = Errno.current
                guard e == EINTR else { return .failure(.failed(e)) }
                // A stop signal ends an idle kept connection; a request being read is finished.
                if idle && !parser.hasPartialRequest && shouldStop() { return .failure(.stopRequested) }
                continue
            }
            if rc == 0 { continue }
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n < 0 {
                let e = Errno.current
                if e == EINTR || e == EAGAIN { continue }
                return .failure(.failed(e))
            }
            bytesRead += n
            return .success(n)
        }
    }

    /// Writes `bytes`; returns the errno of a failed write (the peer went away, or stopped reading
    /// for `requestReadTimeout`: EAGAIN), nil when everything was written. MSG_NOSIGNAL: a peer
    /// that went away is EPIPE, never SIGPIPE, whatever the process does with the signal.
    public func write(_ bytes: [UInt8]) -> Int32? {
        bytes.withUnsafeBytes { raw -> Int32? in
            var offset = 0
            while offset < raw.count {
                let n = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n < 0 {
                    let e = Errno.current
                    if e == EINTR { continue }
                    return e
                }
                offset += n
            }
            return nil
        }
    }

    /// Closes the socket. `linger`: first shut the sending side and read what the peer still
    /// sends for up to a second, so that over TCP the answer is not lost to a reset (unread
    /// input makes `close` send RST); for a refusal that came with input still on its way.
    public func close(linger: Bool = false) {
        guard !closed else { return }
        closed = true
        if linger && Glibc.shutdown(fd, Int32(SHUT_WR)) == 0 {
            let end = MonotonicClock.seconds() + 1
            var scratch = [UInt8](repeating: 0, count: 4096)
            while true {
                let left = end - MonotonicClock.seconds()
                guard left > 0 else { break }
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, Int32((left * 1000).rounded(.up))) > 0 else { break }
                let n = scratch.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
            }
        }
        _ = Glibc.close(fd)
    }

    public static func timeval(seconds: Double) -> Glibc.timeval {
        let whole = Int(seconds)
        return Glibc.timeval(tv_sec: whole, tv_usec: Int((seconds - Double(whole)) * 1_000_000))
    }
}
