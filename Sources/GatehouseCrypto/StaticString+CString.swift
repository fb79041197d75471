extension StaticString {
    /// The literal's bytes as a C string. OpenSSL's parameter builders and name lookups keep
    /// the pointers they are given, and a `String` argument only lends Swift a temporary copy
    /// for the duration of one call (fine in release, dangling in debug builds). Literals live
    /// in the binary for the life of the process, so their pointers can be handed out freely.
    var cString: UnsafePointer<CChar> {
        UnsafeRawPointer(utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// The same pointer for the C APIs that take `char *` but only read through it.
    var mutableCString: UnsafeMutablePointer<CChar> {
        UnsafeMutablePointer(mutating: cString)
    }
}
