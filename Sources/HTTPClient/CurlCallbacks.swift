internal import CCurl
internal import GatehouseCore

/// The C entry points libcurl and pthreads call into.
///
/// Each is a non-capturing `@convention(c)` closure: C function pointers
/// cannot carry Swift context, so all state arrives through the `void *`
/// argument (an unretained `EasyHandle` or a retained `CurlMulti`). They
/// never throw or trap, since unwinding through C frames is not allowed.
enum CurlCallbacks {
    /// CURLOPT_WRITEFUNCTION: body bytes (already content-decoded).
    /// Returning anything other than `size * count` makes libcurl abort the
    /// transfer with CURLE_WRITE_ERROR, which is how the size cap works.
    static let body: curl_write_callback = { data, size, count, context in
        accept(data, size * count, context) { $0.response.appendBody($1) }
    }

    /// CURLOPT_HEADERFUNCTION: one complete header line per call, for every
    /// response in the exchange (1xx, redirects, final, trailers).
    static let header: curl_write_callback = { data, size, count, context in
        accept(data, size * count, context) { handle, line in
            handle.awaitingResponse = false
            return handle.response.appendHeaderLine(line)
        }
    }

    /// Hands `total` bytes to `store` on the owning handle; libcurl's "all taken" or "stop".
    private static func accept(
        _ data: UnsafeMutablePointer<CChar>?, _ total: Int, _ context: UnsafeMutableRawPointer?,
        _ store: (EasyHandle, UnsafeRawBufferPointer) -> Bool
    ) -> Int {
        guard let context else { return 0 }
        let handle = Unmanaged<EasyHandle>.fromOpaque(context).takeUnretainedValue()
        return store(handle, UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : total)) ? total : 0
    }

    /// CURLOPT_PREREQFUNCTION, for POST and PATCH: libcurl is about to send the request. If
    /// the previous send got no response byte at all, this is libcurl's own replay on a fresh
    /// connection (see `configure`): refused, so the transfer fails instead of sending twice.
    /// A redirect it follows comes after a response, and goes ahead.
    static let prerequest: curl_prereq_callback = { context, _, _, _, _ in
        guard let context else { return CURL_PREREQFUNC_ABORT }
        let handle = Unmanaged<EasyHandle>.fromOpaque(context).takeUnretainedValue()
        guard !handle.awaitingResponse else { return CURL_PREREQFUNC_ABORT }
        handle.awaitingResponse = true
        return CURL_PREREQFUNC_OK
    }

    /// pthread start routine for the multi thread. Takes over the +1
    /// reference `CurlMulti.startWorker` passed in, keeping the engine alive
    /// until the loop has fully shut down.
    static let workerEntry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { context in
        guard let context else { return nil }
        let engine = Unmanaged<CurlMulti>.fromOpaque(context).takeRetainedValue()
        ServiceThread.setName("http-client")
        ServiceThread.preferThroughput()
        engine.runLoop()
        return nil
    }
}
