internal import CMicroHTTPD
internal import Dispatch
internal import GatehouseCore
internal import Synchronization

/// One request on one connection, from its headers to its completion callback.
///
/// libmicrohttpd calls into it from one pool thread at a time; a deferred handler's task
/// only touches `reply` (behind a mutex). `@unchecked Sendable` because it holds the
/// connection pointer, which is used only on libmicrohttpd's threads and in
/// `MHD_resume_connection`, which is documented as callable from any thread.
final class Exchange: TaskExecutor, @unchecked Sendable {
    private let connection: OpaquePointer
    private let daemon: Daemon
    private let method: String
    private let url: String
    private let headers: HTTPHeaders
    /// A header field was malformed (`headerCollector`), so `headers` may be incomplete.
    private let malformedField: Bool
    private let requestID: String
    private let started: ContinuousClock.Instant?
    private var body: [UInt8] = []
    private var status = 0
    private var route = Router.unmatched
    /// The declared `Content-Length`, if any.
    let declaredLength: Int?
    /// The client waits for `100 Continue` before sending its body.
    var expectsContinue: Bool { headers["expect"]?.lowercased() == "100-continue" }
    /// Set once a 413 is decided, so later body chunks are dropped.
    var rejectedForSize = false
    private var discarded = 0
    /// Whether a deferred handler has been started; later final calls come after a resume.
    private var dispatched = false
    private let reply = Mutex(Reply())

    /// What a deferred handler and libmicrohttpd's thread for this connection share.
    private struct Reply {
        /// The handler's answer, until the connection's thread queues it.
        var response: HTTPResponse?
        /// The handler's next stretch, woken by another thread, for the connection's thread
        /// to run.
        var parked: UnownedJob?
        /// The connection is suspended: whoever leaves something here must resume it.
        var suspended = false
        /// The one answer this exchange takes has been given (or the connection is gone).
        var answered = false
        /// The watchdog holds this exchange.
        var watched = false
    }

    init(connection: OpaquePointer, method: String, url: String, daemon: Daemon) {
        self.connection = connection
        self.method = method
        self.url = url
        self.daemon = daemon
        started = daemon.logger.level <= .info || daemon.configuration.observer != nil ? ContinuousClock.now : nil
        let collected = Collected<HTTPHeaders.Field>.gather(.HEADER_KIND, of: connection, with: headerCollector)
        headers = HTTPHeaders(fields: collected.items)
        malformedField = collected.malformed
        declaredLength = headers["content-length"].flatMap { Int($0) }
        requestID = RequestID.accept(headers["x-request-id"]) ?? RequestID.next()
    }

    /// The answer to a head whose framing cannot be trusted (`RequestHead`), given at the first
    /// call, before any of the body is read.
    func headRefusal(isHTTP10: Bool) -> HTTPResponse? {
        RequestHead.refusal(headers, malformedField: malformedField, isHTTP10: isHTTP10)
    }

    /// Handles every call after the first: body chunks, the final call, the post-resume call.
    func advance(data: UnsafePointer<CChar>?, size: UnsafeMutablePointer<Int>) -> MHD_Result {
        let chunk = size.pointee
        if status != 0 {
            // A response is already queued (an early 413); nothing more to do.
            size.pointee = 0
            return .YES
        }
        if chunk > 0 {
            size.pointee = 0
            let limit = daemon.configuration.maxBodyBytes
            if rejectedForSize || body.count + chunk > limit {
                // Read and drop the rest so the 413 arrives intact: closing on unread data makes
                // the kernel send a reset that can destroy the response. A sender that keeps
                // going far past the limit is cut off instead.
                rejectedForSize = true
                body = []
                discarded += chunk
                return discarded > limit * 16 ? .NO : .YES
            }
            if let data {
                data.withMemoryRebound(to: UInt8.self, capacity: chunk) { body.append(contentsOf: UnsafeBufferPointer(start: $0, count: chunk)) }
            }
            return .YES
        }
        if dispatched { return settle() }
        if rejectedForSize { return queue(.error(413, "payload_too_large", "the request body exceeds the limit")) }
        return dispatch()
    }

    private func dispatch() -> MHD_Result {
        // libmicrohttpd hands over the path with the query already split off.
        let rawPath = url
        guard RequestHead.isCleanPath(rawPath) else {
            let reason = "the path contains an encoded NUL, a space or a control character"
            return queue(.error(400, "invalid_request", reason))
        }
        guard let query = collectQuery() else {
            return queue(.error(400, "invalid_request", "the query string has a malformed percent-escape"))
        }
        let limit = daemon.configuration.maxHeaderBytes
        let head = headBytes(query: query)
        if head.total > limit {
            return head.line > limit
                ? queue(.error(414, "uri_too_long", "the request line exceeds the header limit"))
                : queue(.error(431, "request_header_fields_too_large", "the request line and headers exceed the header limit"))
        }
        var request = HTTPRequest(
            method: method, rawPath: rawPath, query: query, headers: headers, body: body, requestID: requestID,
            remoteAddress: peerAddress())
        let (match, route) = daemon.router.resolve(method: method, rawPath: rawPath)
        self.route = route
        switch match {
        case .notFound:
            return queue(.error(404, "not_found", "no such endpoint"))
        case .badPath:
            return queue(.error(400, "invalid_request", "the path has a malformed percent-escape"))
        case .methodNotAllowed(let allowed):
            var response = HTTPResponse.error(405, "method_not_allowed", "this endpoint does not accept \(method)")
            response.headers.set("Allow", allowed.joined(separator: ", "))
            return queue(response)
        case .found(.immediate(let handler), let parameters):
            request.pathParameters = parameters
            return queue(handler(request))
        case .found(.deferred(let handler), let parameters):
            request.pathParameters = parameters
            let frozen = request
            dispatched = true
            // The handler starts here, on this thread; if it finishes without suspending, its
            // answer is already in `reply` when the task creation returns.
            InlineResumption.shared.runningInline {
                Task(executorPreference: self) { [self] in complete(await handler(frozen)) }
            }
            return settle()
        }
    }

    /// Runs on this connection's thread whatever of the handler is ready to run, then queues
    /// its answer or suspends the connection until another thread leaves something.
    private func settle() -> MHD_Result {
        enum Next { case answer(HTTPResponse), run(UnownedJob), wait }
        while true {
            let next = reply.withLock { slot -> Next in
                if let job = slot.parked {
                    slot.parked = nil
                    return .run(job)
                }
                if let ready = slot.response {
                    slot.response = nil
                    return .answer(ready)
                }
                // Suspend under the lock, so a thread finishing or waking the handler right now
                // resumes only a connection that is already suspended.
                slot.suspended = true
                MHD_suspend_connection(connection)
                if !slot.watched {
                    slot.watched = true
                    // Watched before the lock opens, so a completion always finds the entry to drop.
                    daemon.watchdog.watch(self, deadline: ContinuousClock.now + daemon.configuration.handlerTimeout)
                }
                return .wait
            }
            switch next {
            case .answer(let response): return queue(response)
            case .run(let job): job.runSynchronously(on: asUnownedTaskExecutor())
            case .wait: return .YES
            }
        }
    }

    /// Hands a deferred handler's response back to libmicrohttpd, once: the handler and the
    /// watchdog's timeout race, and only the first answer counts. While the connection's
    /// thread is in `settle`, the answer just waits in `reply` for it.
    func complete(_ response: HTTPResponse) {
        let (resume, watched) = reply.withLock { slot -> (Bool, Bool) in
            guard !slot.answered else { return (false, false) }
            slot.answered = true
            slot.response = response
            defer { slot.suspended = false; slot.watched = false }
            return (slot.suspended, slot.watched)
        }
        if watched { daemon.watchdog.forget(self) }
        if resume { resumeConnection() }
    }

    /// Outside the lock: libmicrohttpd takes its own mutex here, and its threads call back
    /// into this exchange. A thread resuming several handlers in a row hands the connections
    /// back together at the end, so the server thread wakes once for them.
    private func resumeConnection() {
        if !InlineResumption.shared.afterBatch({ [self] in MHD_resume_connection(connection) }) {
            MHD_resume_connection(connection)
        }
    }

    /// The watchdog gave up on the handler.
    func timedOut() {
        daemon.logger.warning("Handler timed out", ["request.id": requestID, "http.path": url])
        complete(.error(504, "timeout", "the request took too long"))
    }

    /// Called from the completion callback. A connection closed while suspended (daemon
    /// stop) must never be resumed afterwards, so the answer slot is closed here too.
    func finish() {
        let (watched, orphan) = reply.withLock { slot -> (Bool, UnownedJob?) in
            slot.answered = true
            defer { slot.watched = false; slot.parked = nil }
            return (slot.watched, slot.parked)
        }
        // Only a suspended handler is ever watched; most requests skip the watchdog's lock.
        if watched { daemon.watchdog.forget(self) }
        // The connection went before its thread ran the handler's next stretch.
        if let orphan { runElsewhere(orphan) }
        if let observer = daemon.configuration.observer, let started {
            observer(RequestObservation(method: method, route: route, status: status, duration: .now - started))
        }
        let logger = daemon.logger
        guard logger.level <= .info else { return }
        // An encoded query inside the path (`/request/p/%2Fme%3Faccess_token%3D…`) may hold
        // credentials: it is cut off, as the real query string never reaches this line either.
        let path = Self.withoutEncodedQuery(url)
        let level: Logger.Level = (path == "/healthz" || path == "/readyz") ? .debug : .info
        guard level >= logger.level, let started else { return }
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.attoseconds / 1_000_000_000_000) / 1000
            + Double(elapsed.components.seconds) * 1000
        logger.log(level, "Request completed", [
            "request.id": requestID, "http.method": method, "http.path": path,
            "http.status_code": status == 0 ? "aborted" : "\(status)",
            "duration_ms": String(Double(Int(milliseconds * 100)) / 100),
        ])
    }

    /// `url` cut at the first `%3F`/`%3f`, found by a byte scan: this runs for every request.
    static func withoutEncodedQuery(_ url: String) -> String {
        let bytes = url.utf8
        var index = bytes.startIndex
        while let percent = bytes[index...].firstIndex(of: UInt8(ascii: "%")) {
            let rest = bytes[percent...].prefix(3)
            if rest.count == 3, rest.dropFirst().first == UInt8(ascii: "3"), rest.last == UInt8(ascii: "F") || rest.last == UInt8(ascii: "f") {
                return String(url[..<percent])
            }
            index = bytes.index(after: percent)
        }
        return url
    }

    func queue(_ response: HTTPResponse) -> MHD_Result {
        status = response.status
        let created = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let created else { return .NO }
        // Explicit withCString: the implicit String-to-pointer conversion copies short
        // (inline) strings to the heap, and nearly every header name is short.
        for field in response.headers {
            field.name.withCString { name in
                _ = field.value.withCString { value in MHD_add_response_header(created, name, value) }
            }
        }
        _ = requestID.withCString { MHD_add_response_header(created, "X-Request-Id", $0) }
        let result = MHD_queue_response(connection, UInt32(response.status), created)
        MHD_destroy_response(created)
        if result != .YES {
            // libmicrohttpd closes the connection without an answer; it should never happen.
            daemon.logger.warning("Response refused by libmicrohttpd; connection closed unanswered", [
                "request.id": requestID, "http.status_code": "\(response.status)",
            ])
        }
        return result
    }

    /// The request head's size as the header limit counts it: the request line, and it with
    /// every header line, the `Cookie` header twice (libmicrohttpd parses a copy of it). The
    /// query counts as decoded, so a heavily escaped one counts a little short. The
    /// connection's memory has room beyond the limit (`Daemon.headroomBytes`), so every head
    /// up to it reaches this check whole.
    private func headBytes(query: [FormField]) -> (line: Int, total: Int) {
        // "METHOD /path?query HTTP/1.1\r\n"
        var line = method.utf8.count + url.utf8.count + 12
        for field in query { line += field.name.utf8.count + field.value.utf8.count + 2 }
        var total = line + 2
        for field in headers {
            let size = field.name.utf8.count + field.value.utf8.count + 4
            total += field.name.equalsIgnoringASCIICase("cookie") ? 2 * size : size
        }
        return (line, total)
    }

    /// Query arguments arrive with `+` already turned into spaces and nothing else decoded
    /// (see the unescape shim); percent-escapes are decoded here so a bad one is a 400.
    private func collectQuery() -> [FormField]? {
        let collected = Collected<FormField>.gather(.GET_ARGUMENT_KIND, of: connection, with: queryCollector)
        return collected.malformed ? nil : collected.items
    }

    private func peerAddress() -> PeerAddress {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { buffer in
            guard let base = buffer.baseAddress else { return .unknown }
            let count = Int(gh_mhd_client_address(connection, base))
            return PeerAddress.from(UnsafeBufferPointer(buffer), count: count)
        }
    }

    /// The handler's executor, which runs each stretch where the thread waking it asks:
    /// right there if it opted in (`InlineResumption.runningInline`: the dispatching
    /// callback, the HTTP client, a Redis reply); on this connection's server thread if it
    /// hands its handlers off (`handingOff`: the SQLite writer after a commit), which has to
    /// wake anyway to send the answer; anywhere else (a timer) on Dispatch's pool.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if InlineResumption.shared.claimInlineTurn() {
            job.runSynchronously(on: asUnownedTaskExecutor())
            return
        }
        guard InlineResumption.shared.isHandingOff else { return runElsewhere(job) }
        enum Route { case resume, pickedUp, elsewhere }
        let route = reply.withLock { slot -> Route in
            guard !slot.answered, slot.parked == nil else { return .elsewhere }
            slot.parked = job
            // Not suspended: the connection's thread is still in `settle`, and looks here
            // before it suspends.
            guard slot.suspended else { return .pickedUp }
            slot.suspended = false
            return .resume
        }
        switch route {
        case .resume: resumeConnection()
        case .pickedUp: break
        case .elsewhere: runElsewhere(job)
        }
    }

    /// A stretch not handed to the connection, or with no connection to run on (answered
    /// already, or the connection gone).
    private func runElsewhere(_ job: UnownedJob) {
        DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
