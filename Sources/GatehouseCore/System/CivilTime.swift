/// Calendar fields of an instant at a fixed UTC offset, computed without Foundation or the
/// C library's time zone database (Howard Hinnant's days-from-civil inverse).
public struct CivilTime: Sendable {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int
    public var millisecond: Int

    public init(milliseconds: Int64, offsetMinutes: Int = 0) {
        let shifted = milliseconds + Int64(offsetMinutes) * 60_000
        let millisecondsPerDay: Int64 = 86_400_000
        var days = shifted / millisecondsPerDay
        var rest = shifted % millisecondsPerDay
        if rest < 0 {
            rest += millisecondsPerDay
            days -= 1
        }
        millisecond = Int(rest % 1000)
        second = Int(rest / 1000 % 60)
        minute = Int(rest / 60_000 % 60)
        hour = Int(rest / 3_600_000)
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    /// `yyyyMMdd` (Foursquare's `v` versions requests by date).
    public var compactDate: String {
        Self.pad(year, 4) + Self.pad(month, 2) + Self.pad(day, 2)
    }

    /// `yyyyMMddHHmmssSSS` (CMCC's `systemtime`).
    public var compact: String {
        compactDate + Self.pad(hour, 2) + Self.pad(minute, 2) + Self.pad(second, 2) + Self.pad(millisecond, 3)
    }

    /// `yyyy-MM-ddTHH:mm:ssZ` (Aliyun's `Timestamp`); only meaningful at offset 0.
    public var iso8601Seconds: String {
        dateAndTime + "Z"
    }

    /// `yyyy-MM-ddTHH:mm:ss.SSSZ`, as log lines carry it; only meaningful at offset 0.
    public var iso8601Milliseconds: String {
        dateAndTime + "." + Self.pad(millisecond, 3) + "Z"
    }

    private var dateAndTime: String {
        Self.pad(year, 4) + "-" + Self.pad(month, 2) + "-" + Self.pad(day, 2) + "T" + Self.pad(hour, 2) + ":" + Self.pad(minute, 2)
            + ":" + Self.pad(second, 2)
    }
}
