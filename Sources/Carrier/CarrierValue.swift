/// A value in a carrier definition: a literal, a `{{…}}` template, or an operation. Every
/// value evaluates to bytes; text is its UTF-8. There is no code in definitions, only this
/// fixed catalogue of operations (carrier.md §11.3).
public indirect enum CarrierValue: Sendable, Hashable {
    case literal(String)
    case template([TemplatePart])
    /// The bytes a transform works on (a body being encrypted, a phone being decrypted).
    case current
    case now(TimeFormat)
    case random(RandomCharset, length: Int)
    case uuid
    case concat([CarrierValue])
    case canonical(Canonical)
    /// RFC 3986 percent-encoding of the value's text (unreserved kept, `%XX` upper case).
    case percent(CarrierValue)
    case hash(DigestName, message: CarrierValue, output: ByteEncoding)
    case hmac(DigestName, key: CarrierValue, message: CarrierValue, output: ByteEncoding)
    case cipher(CipherOperation)
    case rsa(RSAOperation)
    /// `Basic base64(user:password)`.
    case basic(user: CarrierValue, password: CarrierValue)
    case gzip(CarrierValue)
    /// With `ifMagic`, bytes that do not start like gzip pass through unchanged.
    case gunzip(CarrierValue, ifMagic: Bool)
    /// Bytes → text in an encoding.
    case encode(CarrierValue, ByteEncoding)
    /// Text → bytes from an encoding.
    case decode(CarrierValue, ByteEncoding)
    /// Lowercase hex MD5 of the value (Shanyan's key and IV source).
    case md5Hex(CarrierValue)
    case slice(CarrierValue, from: Int, to: Int)
    /// Truncates or right-pads to `length` bytes with `byte` (Emay: secret keys to 16 bytes).
    case pad(CarrierValue, length: Int, byte: UInt8)

    /// True when evaluating this needs the request's other fields (a signature over them).
    var dependsOnFields: Bool {
        switch self {
        case .canonical: true
        case .literal, .template, .current, .now, .random, .uuid: false
        case .concat(let parts): parts.contains { $0.dependsOnFields }
        case .percent(let v), .gzip(let v), .encode(let v, _), .decode(let v, _), .md5Hex(let v): v.dependsOnFields
        case .gunzip(let v, _), .slice(let v, _, _), .pad(let v, _, _): v.dependsOnFields
        case .hash(_, let m, _): m.dependsOnFields
        case .hmac(_, let k, let m, _): k.dependsOnFields || m.dependsOnFields
        case .cipher(let c): c.key.dependsOnFields || c.input.dependsOnFields || (c.iv?.dependsOnFields ?? false)
        case .rsa(let r): r.input.dependsOnFields || r.keyPEM.dependsOnFields
        case .basic(let u, let p): u.dependsOnFields || p.dependsOnFields
        }
    }
}

/// A piece of a `{{…}}` template.
public enum TemplatePart: Sendable, Hashable {
    case text(String)
    case reference(Reference)
}

/// What `{{…}}` names.
public indirect enum Reference: Sendable, Hashable {
    case secret(String)
    case input(String)
    /// A `let` binding.
    case binding(String)
    /// `map.NAME[key]`: the entry of a definition map for another reference's value.
    case map(String, key: Reference)
}

public enum TimeFormat: Sendable, Hashable {
    case epochMilliseconds
    case epochSeconds
    /// `yyyyMMddHHmmssSSS` at a UTC offset in minutes.
    case compact(offsetMinutes: Int)
    /// `yyyy-MM-ddTHH:mm:ssZ` in UTC.
    case iso8601
}

public enum RandomCharset: String, Sendable, Hashable {
    case digits
    case alnum
    case hex
}

public enum DigestName: String, Sendable, Hashable {
    case md5
    case sha1
    case sha256
}

/// How bytes are written as text, or read from it.
public enum ByteEncoding: String, Sendable, Hashable {
    case raw
    case hex
    /// Upper-case hex.
    case upperHex = "HEX"
    case base64
}

/// `canonical`: the request's fields as one string to sign.
public struct Canonical: Sendable, Hashable {
    public enum Source: String, Sendable, Hashable {
        case body
        case query
    }

    public var source: Source
    public var exclude: Set<String>
    public var sorted: Bool
    /// `{k}` and `{v}` are replaced by each field's name and value.
    public var pair: String
    public var separator: String
    public var percentEncode: Bool
    public var includeEmpty: Bool
    public var prefix: CarrierValue?
    public var suffix: CarrierValue?
}

public struct CipherOperation: Sendable, Hashable {
    public enum Algorithm: String, Sendable, Hashable {
        case aes
        case des
        case tripleDES = "3des"
    }

    public var algorithm: Algorithm
    public var cbc: Bool
    public var decrypting: Bool
    public var key: CarrierValue
    public var iv: CarrierValue?
    public var input: CarrierValue
    public var inputEncoding: ByteEncoding
    public var outputEncoding: ByteEncoding
}

public struct RSAOperation: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case decrypt = "rsa_decrypt"
        case encrypt = "rsa_encrypt"
        case sign = "rsa_sign"
    }

    public var kind: Kind
    public var keyPEM: CarrierValue
    public var input: CarrierValue
    public var inputEncoding: ByteEncoding
    public var outputEncoding: ByteEncoding
    /// For `rsa_sign`: SHA-1 instead of SHA-256.
    public var sha1: Bool
}
