// SPDX-License-Identifier: Apache-2.0

/// A command line read one option at a time, as the screens' parsers read it:
/// `--name=value` and `--name value` alike (a short option takes the next
/// argument). One reader for the lock screen's and the setup window's options.
public struct OptionCursor {
    private let args: [String]
    private var index = -1
    private var inline: String?

    public init(_ args: [String]) { self.args = args }

    /// The next option's name (without an `=value` part), nil at the end.
    public mutating func next() -> String? {
        index += 1
        guard index < args.count else { return nil }
        let arg = args[index]
        inline = nil
        if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
            inline = String(arg[arg.index(after: eq)...])
            return String(arg[..<eq])
        }
        return arg
    }

    /// The argument as it was written (for a message about it).
    public var current: String { index >= 0 && index < args.count ? args[index] : "" }

    /// The value of the option just read: after its `=`, else the next
    /// argument (taken); nil when there is none.
    public mutating func value() -> String? {
        if let inline { return inline }
        guard index + 1 < args.count else { return nil }
        index += 1
        return args[index]
    }
}
