internal import GatehouseCore
internal import GatehouseCrypto
internal import Compression

/// Evaluating a definition's values: templates, bindings and operations (time, random, hash,
/// HMAC, ciphers, RSA, gzip), over the request being built or the answer being read.
extension CarrierExchange {
    enum Stage {
        case request
        case response
    }

    /// Evaluates values to bytes. Crypto failures while building the request mean unusable
    /// keyset material; while reading the answer they mean it did not decrypt.
    struct Evaluator {
        let exchange: CarrierExchange
        let stage: Stage
        var body: [(String, [UInt8])] = []
        var query: [(String, [UInt8])] = []

        init(exchange: CarrierExchange, stage: Stage) {
            self.exchange = exchange
            self.stage = stage
        }

        func failure(_ reason: String) -> CarrierError {
            stage == .request ? CarrierError(.misconfigured, reason) : CarrierError(.decryptFailed, reason)
        }

        mutating func text(_ value: CarrierValue, current: [UInt8]? = nil) throws(CarrierError) -> String {
            CarrierExchange.text(try bytes(value, current: current))
        }

        mutating func bytes(_ value: CarrierValue, current: [UInt8]? = nil) throws(CarrierError) -> [UInt8] {
            switch value {
            case .literal(let text): return Array(text.utf8)
            case .template(let parts):
                var out: [UInt8] = []
                for part in parts {
                    switch part {
                    case .text(let text): out += Array(text.utf8)
                    case .reference(let reference): out += resolve(reference)
                    }
                }
                return out
            case .current:
                guard let current else { throw failure("an operation has no input") }
                return current
            case .now(let format):
                let now = exchange.environment.nowMilliseconds
                switch format {
                case .epochMilliseconds: return Array(String(now).utf8)
                case .epochSeconds: return Array(String(now / 1000).utf8)
                case .compact(let offset): return Array(CivilTime(milliseconds: now, offsetMinutes: offset).compact.utf8)
                case .iso8601: return Array(CivilTime(milliseconds: now, offsetMinutes: 0).iso8601Seconds.utf8)
                }
            case .random(let charset, let length):
                let alphabet: [UInt8]
                switch charset {
                case .digits: alphabet = Array("0123456789".utf8)
                case .hex: alphabet = Array("0123456789abcdef".utf8)
                case .alnum: alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
                }
                // Rejection sampling keeps every character equally likely.
                let limit = 256 - 256 % alphabet.count
                var out: [UInt8] = []
                while out.count < length {
                    guard let random = exchange.environment.randomBytes(length * 2) else { throw failure("the random generator failed") }
                    for byte in random where Int(byte) < limit && out.count < length { out.append(alphabet[Int(byte) % alphabet.count]) }
                }
                return out
            case .uuid:
                guard var random = exchange.environment.randomBytes(16), random.count == 16 else { throw failure("the random generator failed") }
                random[6] = (random[6] & 0x0F) | 0x40
                random[8] = (random[8] & 0x3F) | 0x80
                let hex = Hex.encode(random)
                let characters = Array(hex)
                let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }
                return Array(groups.joined(separator: "-").utf8)
            case .concat(let parts):
                var out: [UInt8] = []
                for part in parts { out += try bytes(part, current: current) }
                return out
            case .canonical(let spec):
                var fields = spec.source == .body ? body : query
                fields.removeAll { spec.exclude.contains($0.0) || (!spec.includeEmpty && $0.1.isEmpty) }
                if spec.sorted { fields.sort { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) } }
                let joined = fields.map { name, value -> String in
                    let key = spec.percentEncode ? PercentEncoding.encode(name) : name
                    let text = CarrierExchange.text(value)
                    let encoded = spec.percentEncode ? PercentEncoding.encode(text) : text
                    return spec.pair.replacing("{k}", with: key).replacing("{v}", with: encoded)
                }.joined(separator: spec.separator)
                var out: [UInt8] = []
                if let prefix = spec.prefix { out += try bytes(prefix, current: current) }
                out += Array(joined.utf8)
                if let suffix = spec.suffix { out += try bytes(suffix, current: current) }
                return out
            case .percent(let inner):
                return Array(PercentEncoding.encode(try text(inner, current: current)).utf8)
            case .hash(let digest, let message, let output):
                let input = try bytes(message, current: current)
                let hashed: [UInt8]
                switch digest {
                case .md5: hashed = Digest.md5(input)
                case .sha1: hashed = Digest.sha1(input)
                case .sha256: hashed = Digest.sha256(input)
                }
                return Self.encoded(hashed, output)
            case .hmac(let digest, let key, let message, let output):
                let keyBytes = try bytes(key, current: current)
                let input = try bytes(message, current: current)
                let mac: [UInt8]
                switch digest {
                case .md5: mac = HMAC.md5(key: keyBytes, message: input)
                case .sha1: mac = HMAC.sha1(key: keyBytes, message: input)
                case .sha256: mac = HMAC.sha256(key: keyBytes, message: input)
                }
                return Self.encoded(mac, output)
            case .cipher(let operation):
                let key = try bytes(operation.key, current: nil)
                let iv = try operation.iv.map { (value) throws(CarrierError) in try bytes(value, current: nil) } ?? []
                let input = try decoded(try bytes(operation.input, current: current), operation.inputEncoding)
                let algorithm: CipherAlgorithm =
                    switch operation.algorithm {
                    case .aes: .aes
                    case .des: .des
                    case .tripleDES: .tripleDES
                    }
                do throws(CryptoError) {
                    let result =
                        operation.decrypting
                        ? try BlockCipher.decrypt(input, algorithm: algorithm, mode: operation.cbc ? .cbc : .ecb, key: key, iv: iv)
                        : try BlockCipher.encrypt(input, algorithm: algorithm, mode: operation.cbc ? .cbc : .ecb, key: key, iv: iv)
                    return Self.encoded(result, operation.outputEncoding)
                } catch {
                    throw failure("\(operation.algorithm.rawValue) \(operation.decrypting ? "decryption" : "encryption") failed: \(error.reason)")
                }
            case .rsa(let operation):
                let pem = try text(operation.keyPEM, current: nil)
                let input = try decoded(try bytes(operation.input, current: current), operation.inputEncoding)
                do throws(CryptoError) {
                    let result: [UInt8]
                    switch operation.kind {
                    case .decrypt: result = try RSACipherKey(privatePEM: pem).decrypt(input)
                    case .encrypt: result = try RSACipherKey(publicPEM: pem).encrypt(input)
                    case .sign: result = try RSACipherKey(privatePEM: pem).sign(input, sha1: operation.sha1)
                    }
                    return Self.encoded(result, operation.outputEncoding)
                } catch {
                    // A key that does not even parse is the keyset's fault at either stage.
                    if error == CryptoError.invalidKey("") { throw CarrierError(.misconfigured, "the RSA key in the keyset is unusable") }
                    throw failure("RSA \(operation.kind.rawValue) failed: \(error.reason)")
                }
            case .basic(let user, let password):
                let pair = try bytes(user, current: current) + [UInt8(ascii: ":")] + (try bytes(password, current: current))
                return Array(("Basic " + Base64.encode(pair)).utf8)
            case .gzip(let inner):
                let input = try bytes(inner, current: current)
                do throws(CompressionError) { return try Gzip.compress(input) } catch { throw failure(error.reason) }
            case .gunzip(let inner, let ifMagic):
                let input = try bytes(inner, current: current)
                if ifMagic, !Gzip.isGzip(input) { return input }
                do throws(CompressionError) { return try Gzip.decompress(input) } catch { throw failure("gunzip: \(error.reason)") }
            case .encode(let inner, let encoding):
                return Self.encoded(try bytes(inner, current: current), encoding)
            case .decode(let inner, let encoding):
                return try decoded(try bytes(inner, current: current), encoding)
            case .md5Hex(let inner):
                return Self.encoded(Digest.md5(try bytes(inner, current: current)), .hex)
            case .slice(let inner, let from, let to):
                let input = try bytes(inner, current: current)
                guard input.count >= to else { throw failure("a value is \(input.count) bytes, too short to slice to \(to)") }
                return Array(input[from..<to])
            case .pad(let inner, let length, let byte):
                let input = try bytes(inner, current: current)
                return input.count >= length ? Array(input.prefix(length)) : input + Array(repeating: byte, count: length - input.count)
            }
        }

        func resolve(_ reference: Reference) -> [UInt8] {
            switch reference {
            case .secret(let name): return Array((exchange.secrets[name] ?? "").utf8)
            case .input(let name): return Array((exchange.inputs[name] ?? "").utf8)
            case .binding(let name): return exchange.bindings[name] ?? []
            case .map(let map, let key):
                let keyText = CarrierExchange.text(resolve(key))
                return Array((exchange.definition.maps[map]?[keyText] ?? "").utf8)
            }
        }

        func decoded(_ input: [UInt8], _ encoding: ByteEncoding) throws(CarrierError) -> [UInt8] {
            switch encoding {
            case .raw: return input
            case .hex, .upperHex:
                guard let bytes = Hex.decode(input) else { throw failure("a value is not hex") }
                return bytes
            case .base64:
                let text = CarrierExchange.text(input.filter { $0 != 0x0A && $0 != 0x0D && $0 != 0x20 })
                guard let bytes = Base64.decode(text) else { throw failure("a value is not base64") }
                return bytes
            }
        }

        static func encoded(_ bytes: [UInt8], _ encoding: ByteEncoding) -> [UInt8] {
            switch encoding {
            case .raw: bytes
            case .hex: Array(Hex.encode(bytes).utf8)
            case .upperHex: Array(Hex.encode(bytes, uppercase: true).utf8)
            case .base64: Array(Base64.encode(bytes).utf8)
            }
        }
    }

    /// The vendor's answer, for selectors and predicates.
    struct Answer {
        let status: Int
        let headers: [VendorHeader]
        var json: JSONValue?

        func text(_ selector: Selector) -> String? {
            switch selector {
            case .status: return String(status)
            case .header(let name): return headers.first { $0.name.lowercased() == name.lowercased() }?.value
            case .path(let segments, let caseInsensitive):
                var node = json
                for segment in segments {
                    guard let object = node?.objectValue else { return nil }
                    if let exact = object[segment] {
                        node = exact
                    } else if caseInsensitive, let match = object.first(where: { $0.key.lowercased() == segment.lowercased() }) {
                        node = match.value
                    } else {
                        return nil
                    }
                }
                guard let node else { return nil }
                return CarrierDefinitionReader.scalarText(node)
            }
        }

        func holds(_ predicate: Predicate) -> Bool {
            let value = text(predicate.selector)
            switch predicate.test {
            case .equals(let expected): return value == expected
            case .nonEmpty: return !(value ?? "").isEmpty
            }
        }
    }
}
