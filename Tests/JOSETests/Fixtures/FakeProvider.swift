/// A provider's JWKS endpoint: counts fetches, can rotate keys, fail, or hold requests.
actor FakeProvider {
    private(set) var fetches = 0
    var document: [UInt8]
    var failing = false
    private var held: [CheckedContinuation<Void, Never>]? = nil

    init(document: [UInt8]) {
        self.document = document
    }

    func serve(_ document: [UInt8]) { self.document = document }
    func fail(_ failing: Bool) { self.failing = failing }

    /// Makes fetches wait until `release()`.
    func hold() { held = [] }

    func release() {
        let waiting = held ?? []
        held = nil
        for continuation in waiting { continuation.resume() }
    }

    func fetch(_ url: String) async throws -> [UInt8] {
        fetches += 1
        if held != nil {
            await withCheckedContinuation { held?.append($0) }
        }
        if failing { throw FetchFailure() }
        return document
    }

    struct FetchFailure: Error {}
}
