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
        accept(data, size * count, context) { $0.response.appendHeaderLine($1) }
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

    /// CURLOPT_READFUNCTION: the request body, handed out once. There is deliberately no
    /// seek callback, so libcurl cannot rewind it to send it again (see `configure`).
    static let upload: curl_read_callback = { buffer, size, count, context in
        guard let context, let buffer else { return 0 }
        let handle = Unmanaged<EasyHandle>.fromOpaque(context).takeUnretainedValue()
        let chunk = min(size * count, handle.upload.count - handle.uploadOffset)
        guard chunk > 0 else { return 0 }
        let offset = handle.uploadOffset
        handle.upload.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            UnsafeMutableRawPointer(buffer).copyMemory(from: base + offset, byteCount: chunk)
        }
        handle.uploadOffset += chunk
        return chunk
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
