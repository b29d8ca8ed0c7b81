// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import PatternLock
import PatternLockDaemon
import PatternLockWire

extension KeypadLayout: ExpressibleByArgument {}

/// `--layout`: which keys the user types the dots on.
struct LayoutOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The keys you type the dots on: phone (1 2 3 on top, the default) or numpad (a keyboard's numeric keypad, 7 8 9 on top). The same drawn shape is the same pattern on either.",
            valueName: "layout"))
    var layout: KeypadLayout = .phone
}
