/// Phone numbers as the carrier APIs return them, and as logs may show them.
public enum PhoneNumber {
    /// `number` without spaces, dashes and a `+86`/`0086`/`86` country prefix on a 13-digit
    /// value: the vendors return bare 11-digit numbers, but a few prefix the country code.
    public static func normalised(_ number: String) -> String {
        var digits = String(number.unicodeScalars.filter { $0 != " " && $0 != "-" })
        for prefix in ["+86", "0086"] where digits.hasPrefix(prefix) {
            digits.removeFirst(prefix.count)
        }
        if digits.count == 13, digits.hasPrefix("86") { digits.removeFirst(2) }
        return digits
    }

    /// A mainland mobile number: 11 digits starting with 1 and a second digit of 3–9.
    public static func isMainlandMobile(_ number: String) -> Bool {
        let bytes = Array(number.utf8)
        return bytes.count == 11 && bytes[0] == UInt8(ascii: "1") && (UInt8(ascii: "3")...UInt8(ascii: "9")).contains(bytes[1])
            && bytes.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// What a log line may show: the first three and last four digits of an 11-digit number
    /// (`138****8000`), and for anything else only its length.
    public static func masked(_ number: String) -> String {
        let characters = Array(number)
        guard characters.count >= 11 else { return "[\(characters.count) chars]" }
        return String(characters.prefix(3)) + String(repeating: "*", count: characters.count - 7) + String(characters.suffix(4))
    }
}
