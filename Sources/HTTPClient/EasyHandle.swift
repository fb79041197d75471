internal import CCurl

/// Owns one libcurl easy handle (taken from, and given back to, an
/// `EasyHandlePool`) and the C memory it references for the lifetime of a
/// single request.
///
/// `@unchecked Sendable` because it owns raw C pointers. Ownership moves
/// exactly once: the calling task creates and configures the handle, then
/// hands it to the multi thread through the Mutex-guarded inbox of
/// `CurlMulti`. After that only the multi thread touches `easy` and
/// `response` (libcurl invokes our callbacks from inside
/// `curl_multi_perform` on that thread). The one member used from other
/// threads, `completion`, does its own locking.
final class EasyHandle: @unchecked Sendable {
    /// The CURL* (a `void *` in C, hence a raw pointer in Swift).
    let easy: UnsafeMutableRawPointer
    /// Decides the outcome exactly once across the multi thread,
    /// cancellation and shutdown.
    let completion = RequestCompletion()
    /// Filled by the C callbacks on the multi thread only.
    var response: ResponseBuffer
    /// A request went out and no byte of a response has come back since (see
    /// `CurlCallbacks.prerequest`). Multi thread only.
    var awaitingResponse = false
    /// Request header list; libcurl keeps pointing at it until cleanup.
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// CURLOPT_ERRORBUFFER target: libcurl's detailed message ("SSL
    /// certificate problem: self-signed certificate") beats the generic
    /// curl_easy_strerror text in logs.
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// Where `easy` goes back when this request is over.
    private let pool: EasyHandlePool

    private init(easy: UnsafeMutableRawPointer, pool: EasyHandlePool, limit: Int) {
        self.easy = easy
        self.pool = pool
        self.response = ResponseBuffer(limit: limit)
        let size = Int(CURL_ERROR_SIZE)
        self.errorBuffer = .allocate(capacity: size)
        self.errorBuffer.initialize(repeating: 0, count: size)
    }

    /// Builds a handle ready to be added to a multi handle. Validation and
    /// option setting happen on the caller's task so bad input fails fast
    /// without a round trip through the multi thread.
    static func make(
        for request: HTTPClientRequest,
        configuration: HTTPClient.Configuration,
        pool: EasyHandlePool
    ) throws(HTTPClientError) -> EasyHandle {
        guard let easy = pool.take() else {
            throw .transport("curl_easy_init failed")
        }
        // From here the object owns `easy`: if configure throws, deinit
        // returns the handle and frees anything attached so far.
        let handle = EasyHandle(easy: easy, pool: pool, limit: configuration.maxResponseBytes)
        try handle.configure(request: request, configuration: configuration)
        return handle
    }

    deinit {
        // Runs only after the multi thread removed the handle from the
        // multi (or it was never added), so no transfer can still use it.
        // The reset inside `give` also drops the handle's pointers to the
        // header list and the error buffer before they are freed below.
        pool.give(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// Opaque pointer to `self` for CURLOPT_PRIVATE / WRITEDATA /
    /// HEADERDATA. Unretained: the multi thread's `active` table holds the
    /// strong reference for as long as libcurl may call back.
    var context: UnsafeMutableRawPointer {
        Unmanaged.passUnretained(self).toOpaque()
    }

    /// Recovers the owner of an easy handle inside the multi loop.
    static func owner(of easy: UnsafeMutableRawPointer) -> EasyHandle? {
        var raw: UnsafeMutableRawPointer?
        guard shim_easy_getinfo_private(easy, &raw) == CURLE_OK, let raw else { return nil }
        return Unmanaged<EasyHandle>.fromOpaque(raw).takeUnretainedValue()
    }

    /// New connections this transfer opened (CURLINFO_NUM_CONNECTS); 0 when
    /// it reused a pooled connection.
    var connectionsOpened: Int {
        var count = 0
        guard shim_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &count) == CURLE_OK else { return 0 }
        return count
    }

    /// Converts libcurl's verdict into the request's outcome. Runs on the
    /// multi thread after the transfer finished.
    func outcome(for code: CURLcode) -> RequestCompletion.Outcome {
        if code == CURLE_OK {
            var status = 0
            _ = shim_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            return .success(response.takeResponse(status: status))
        }
        if response.exceededLimit {
            return .failure(.responseTooLarge("response exceeded \(response.limit) bytes"))
        }
        let detail = errorBuffer.pointee != 0
            ? String(cString: errorBuffer)
            : String(cString: curl_easy_strerror(code))
        return .failure(HTTPClientError(curlCode: code, detail: detail))
    }

    // MARK: - Typed option setters (each wraps one C shim)

    func set(_ option: CURLoption, _ value: Int) throws(HTTPClientError) {
        try check(shim_easy_setopt_long(easy, option, value), option)
    }

    func set(_ option: CURLoption, offset value: Int) throws(HTTPClientError) {
        try check(shim_easy_setopt_off_t(easy, option, curl_off_t(value)), option)
    }

    func set(_ option: CURLoption, _ value: String) throws(HTTPClientError) {
        // Every string option we use is copied by libcurl during the call.
        try check(shim_easy_setopt_string(easy, option, value), option)
    }

    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws(HTTPClientError) {
        try check(shim_easy_setopt_pointer(easy, option, value), option)
    }

    func set(_ option: CURLoption, callback: curl_write_callback) throws(HTTPClientError) {
        try check(shim_easy_setopt_write_callback(easy, option, callback), option)
    }

    func setPrerequestCallback(_ callback: curl_prereq_callback) throws(HTTPClientError) {
        try check(shim_easy_setopt_prereq_callback(easy, callback), CURLOPT_PREREQFUNCTION)
    }

    func setHeaderList() throws(HTTPClientError) {
        try check(shim_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList), CURLOPT_HTTPHEADER)
    }

    func setErrorBuffer() throws(HTTPClientError) {
        try set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
    }

    /// A failing setopt means this libcurl lacks an option we rely on (for
    /// example a security restriction); refusing to run is safer than
    /// running without it.
    private func check(_ code: CURLcode, _ option: CURLoption) throws(HTTPClientError) {
        guard code == CURLE_OK else {
            let text = String(cString: curl_easy_strerror(code))
            throw .transport("curl_easy_setopt(option \(option.rawValue)) failed: \(text)")
        }
    }
}
