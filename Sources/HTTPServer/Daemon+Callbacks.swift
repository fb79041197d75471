internal import CMicroHTTPD
internal import GatehouseCore

// The C entry points. They live here, not in main.swift: top-level code there is
// main-actor isolated, and a callback defined there traps when a pool thread calls it.

/// libmicrohttpd's access handler: called once when headers arrive, once per body chunk,
/// once at the end, and once more after a suspended connection is resumed.
let accessHandler: MHD_AccessHandlerCallback = {
    context, connection, url, method, version, uploadData, uploadSize, slot in
    guard let context, let connection, let slot, let uploadSize else { return .NO }
    let daemon = Unmanaged<Daemon>.fromOpaque(context).takeUnretainedValue()
    guard let existing = slot.pointee else {
        // First call: headers only. Answering now would make libmicrohttpd close the
        // connection afterwards, so only oversized bodies are answered here.
        let exchange = Exchange(
            connection: connection, method: method.map { String(cString: $0) } ?? "GET",
            url: url.map { String(cString: $0) } ?? "/", daemon: daemon)
        slot.pointee = Unmanaged.passRetained(exchange).toOpaque()
        daemon.requestStarted()
        // libmicrohttpd hands over only HTTP/1.x versions it supports.
        let isHTTP10 = version.map { strcmp($0, "HTTP/1.0") == 0 } ?? false
        if let refusal = exchange.headRefusal(isHTTP10: isHTTP10) { return exchange.queue(refusal) }
        if let length = exchange.declaredLength, length > daemon.configuration.maxBodyBytes {
            exchange.rejectedForSize = true
            // A modest overshoot is read and dropped so the client, which may already be
            // sending, gets the 413 intact. A huge one, or one whose client waits for
            // `100 Continue` before sending, is answered at once (which also makes
            // libmicrohttpd close the connection).
            if length > daemon.configuration.maxBodyBytes * 16 || exchange.expectsContinue {
                return exchange.queue(.error(413, "payload_too_large", "the request body exceeds the limit"))
            }
        }
        return .YES
    }
    let exchange = Unmanaged<Exchange>.fromOpaque(existing).takeUnretainedValue()
    return exchange.advance(data: uploadData, size: uploadSize)
}

/// Called when libmicrohttpd is done with a request, answered or not (client gone, timeout).
let completionHandler: MHD_RequestCompletedCallback = { context, _, slot, _ in
    guard let context, let slot, let existing = slot.pointee else { return }
    let daemon = Unmanaged<Daemon>.fromOpaque(context).takeUnretainedValue()
    let exchange = Unmanaged<Exchange>.fromOpaque(existing).takeRetainedValue()
    slot.pointee = nil
    exchange.finish()
    daemon.requestFinished()
}

/// Collects header fields into a `Collected` value. Marks the head malformed (`RequestHead`),
/// by C scans that build no Swift string, for a name with whitespace (`Transfer-Encoding :`,
/// which libmicrohttpd keeps as another name), a value with a bare CR (a line end to some
/// parsers), or a folded line (obs-fold): libmicrohttpd 0.9.75 appends the continuation to the
/// name, so `X: a` + ` B:c` names `XB:c`, and `Transfer-Encoding:` + ` chunked` names
/// `Transfer-Encodingchunked`.
let headerCollector: MHD_KeyValueIterator = { box, _, key, value in
    guard let box, let key else { return .YES }
    let headers = box.assumingMemoryBound(to: Collected<HTTPHeaders.Field>.self)
    let badName = strpbrk(key, " \t\r:") != nil
        || extendsName(key, "transfer-encoding") || extendsName(key, "content-length")
    if badName || value.map({ strchr($0, 13) != nil }) == true {
        headers.pointee.malformed = true
        return .NO
    }
    headers.pointee.items.append(HTTPHeaders.Field(name: String(cString: key), value: value.map { String(cString: $0) } ?? ""))
    return .YES
}

/// Collects query arguments into a `Collected` box, percent-decoding each straight from
/// libmicrohttpd's C string (one String per piece, not a raw one and then a decoded one).
let queryCollector: MHD_KeyValueIterator = { box, _, key, value in
    guard let box, let key else { return .YES }
    let query = box.assumingMemoryBound(to: Collected<FormField>.self)
    // An argument without `=` has no value at all; it reads as empty.
    let decodedValue = if let value { decodedCString(value) } else { "" }
    guard let name = decodedCString(key), let decodedValue else {
        query.pointee.malformed = true
        return .NO
    }
    query.pointee.items.append(FormField(name: name, value: decodedValue))
    return .YES
}

/// `key` starts with `name` (ASCII case-insensitively) and goes on.
private func extendsName(_ key: UnsafePointer<CChar>, _ name: StaticString) -> Bool {
    let length = name.utf8CodeUnitCount
    return name.utf8Start.withMemoryRebound(to: CChar.self, capacity: length) { strncasecmp(key, $0, length) == 0 }
        && strlen(key) > length
}

private func decodedCString(_ text: UnsafePointer<CChar>) -> String? {
    text.withMemoryRebound(to: UInt8.self, capacity: 1) { bytes in
        PercentEncoding.decode(utf8: UnsafeBufferPointer(start: bytes, count: strlen(text)), plusAsSpace: false)
    }
}

/// Scratch space for the collectors above, which can only reach Swift through a pointer:
/// what they gathered, or the news that an item was malformed. A value on the caller's stack
/// (`gather`), not an object: one allocation fewer per request for each kind collected.
struct Collected<Item> {
    var items: [Item] = []
    var malformed = false

    /// Runs libmicrohttpd's iteration over the connection's values of `kind` with `collector`.
    static func gather(
        _ kind: MHD_ValueKind, of connection: OpaquePointer, with collector: MHD_KeyValueIterator
    ) -> Collected {
        var collected = Collected()
        let count = MHD_get_connection_values(connection, kind, nil, nil)
        guard count > 0 else { return collected }
        collected.items.reserveCapacity(Int(count))
        _ = withUnsafeMutablePointer(to: &collected) { MHD_get_connection_values(connection, kind, collector, $0) }
        return collected
    }
}
