// SPDX-License-Identifier: Apache-2.0
import CPamPatternLock
import Testing

@Suite("Module options")
struct ConfigTests {
    @Test("no options give the defaults")
    func defaults() {
        let (config, ignored) = parsedConfig([])
        #expect(ignored == 0)
        #expect(socketPath(config) == "/run/patternlock/socket")
        #expect(config.timeout == 3)
        #expect(!config.debug && !config.quiet && !config.allow_remote)
        #expect(config.grid == PL_GRID_AUTO && !config.one_prompt && !config.password_at_login)
        #expect(config.layout == PL_LAYOUT_PHONE)
        #expect(cString(config.services) == "")
        #expect(cString(config.login_services) == "login,gdm-password,lightdm,sddm,xdm,lxdm,greetd")
        #expect(cString(config.digit_passwords) == "", "no service hands an entry of dots on by default")
    }

    @Test("services= and login_services= take comma-separated PAM service names")
    func serviceLists() {
        let (config, ignored) = parsedConfig(["services=sudo,su,login,gdm-password,kde.screensaver,foo_bar+x@y"])
        #expect(ignored == 0)
        #expect(cString(config.services) == "sudo,su,login,gdm-password,kde.screensaver,foo_bar+x@y")
        #expect(cString(parsedConfig(["login_services=login"]).config.login_services) == "login")
        // An empty login_services= asks no login service in no session.
        let none = parsedConfig(["login_services="])
        #expect(none.ignored == 0 && cString(none.config.login_services) == "")
        let longest = String(repeating: "a", count: 64)
        #expect(cString(parsedConfig(["services=\(longest),b"]).config.services) == "\(longest),b")
        let digits = parsedConfig(["digit_passwords=phosh,kde"])
        #expect(digits.ignored == 0 && cString(digits.config.digit_passwords) == "phosh,kde")
    }

    @Test(
        "an unusable service list keeps the default",
        arguments: [
            "services=", "services=,sudo", "services=sudo,", "services=sudo,,su", "services=sudo su",
            "services=sudo/su", "services=s\u{e9}", "services=" + String(repeating: "a", count: 65),
            "services=" + Array(repeating: "abcdefgh", count: 29).joined(separator: ","), "login_services=,",
            "login_services=login,", "login_services=a b", "digit_passwords=", "digit_passwords=phosh,",
            "digit_passwords=a b",
        ])
    func badServiceList(word: String) {
        var config = pl_config()
        pl_config_init(&config)
        #expect(pl_config_apply(&config, word) == PL_OPTION_BAD_VALUE)
        #expect(cString(config.services) == "")
        #expect(cString(config.login_services) == "login,gdm-password,lightdm,sddm,xdm,lxdm,greetd")
        #expect(cString(config.digit_passwords) == "")
    }

    @Test("every option is applied")
    func everyOption() {
        let (config, ignored) = parsedConfig([
            "socket=/tmp/pl/socket", "timeout=7", "debug", "nogrid", "quiet", "allow_remote", "layout=numpad",
            "one_prompt", "password_at_login", "digit_passwords=phosh",
        ])
        #expect(ignored == 0)
        #expect(socketPath(config) == "/tmp/pl/socket")
        #expect(config.timeout == 7)
        #expect(config.debug && config.grid == PL_GRID_NONE && config.quiet && config.allow_remote)
        #expect(config.one_prompt && config.password_at_login)
        #expect(config.layout == PL_LAYOUT_NUMPAD)
        #expect(cString(config.digit_passwords) == "phosh")
    }

    @Test("layout=phone and layout=numpad choose the keys; the last one wins")
    func layout() {
        #expect(parsedConfig(["layout=numpad"]).config.layout == PL_LAYOUT_NUMPAD)
        #expect(parsedConfig(["layout=phone"]).config.layout == PL_LAYOUT_PHONE)
        #expect(parsedConfig(["layout=numpad", "layout=phone"]).config.layout == PL_LAYOUT_PHONE)
        #expect(parsedConfig(["layout=phone", "layout=numpad"]).config.layout == PL_LAYOUT_NUMPAD)
    }

    @Test(
        "an unknown layout keeps the phone layout",
        arguments: ["layout=", "layout=Numpad", "layout=numpad2", "layout=qwerty", "layout= numpad", "layout=phone "])
    func badLayout(word: String) {
        var config = pl_config()
        pl_config_init(&config)
        #expect(pl_config_apply(&config, word) == PL_OPTION_BAD_VALUE)
        #expect(config.layout == PL_LAYOUT_PHONE)
        let (parsed, ignored) = parsedConfig(["layout=numpad", word])
        #expect(ignored == 1)
        #expect(parsed.layout == PL_LAYOUT_NUMPAD)
    }

    @Test(
        "grid= chooses the form, nogrid is grid=none; the last one wins",
        arguments: [
            (["grid=auto"], PL_GRID_AUTO), (["grid=full"], PL_GRID_FULL), (["grid=compact"], PL_GRID_COMPACT),
            (["grid=none"], PL_GRID_NONE), (["nogrid"], PL_GRID_NONE), (["nogrid", "grid=full"], PL_GRID_FULL),
            (["grid=compact", "nogrid"], PL_GRID_NONE),
        ])
    func grid(words: [String], grid: pl_grid) {
        let (config, ignored) = parsedConfig(words)
        #expect(ignored == 0)
        #expect(config.grid == grid)
    }

    @Test("an unknown grid= keeps the form", arguments: ["grid=", "grid=Full", "grid=compact ", "grid=yes", "grid=0"])
    func badGrid(word: String) {
        var config = pl_config()
        pl_config_init(&config)
        config.grid = PL_GRID_COMPACT
        #expect(pl_config_apply(&config, word) == PL_OPTION_BAD_VALUE)
        #expect(config.grid == PL_GRID_COMPACT)
    }

    @Test("the last of a repeated option wins")
    func lastWins() {
        let (config, _) = parsedConfig(["timeout=5", "timeout=1"])
        #expect(config.timeout == 1)
    }

    @Test(
        "unknown options are ignored and counted",
        arguments: [
            "nodelay", "Debug", "debugx", "grid", "sock=/x", "", "timeout", "socket", "layout", "numpad", "one_prompt=1",
            "oneprompt", "password_at_login=72", "full",
        ])
    func unknownOption(word: String) {
        var config = pl_config()
        pl_config_init(&config)
        #expect(pl_config_apply(&config, word) == PL_OPTION_UNKNOWN)
        let (parsed, ignored) = parsedConfig([word, "debug"])
        #expect(ignored == 1)
        #expect(parsed.debug)
        #expect(socketPath(parsed) == "/run/patternlock/socket")
    }

    @Test(
        "unusable values keep the default",
        arguments: [
            "timeout=0", "timeout=-1", "timeout=abc", "timeout=3s", "timeout=", "timeout=301",
            "timeout= 3", "timeout=99999999999999999999", "socket=", "socket=relative/socket",
            "socket=/" + String(repeating: "a", count: 107),
        ])
    func badValue(word: String) {
        var config = pl_config()
        pl_config_init(&config)
        #expect(pl_config_apply(&config, word) == PL_OPTION_BAD_VALUE)
        #expect(config.timeout == 3)
        #expect(socketPath(config) == "/run/patternlock/socket")
    }

    @Test("the longest socket path that fits sockaddr_un is accepted")
    func longestSocketPath() {
        let path = "/" + String(repeating: "a", count: 106)
        let (config, ignored) = parsedConfig(["socket=" + path])
        #expect(ignored == 0)
        #expect(socketPath(config) == path)
    }

    @Test("timeout bounds", arguments: [("timeout=1", 1), ("timeout=300", 300), ("timeout=010", 10)])
    func timeoutBounds(word: String, seconds: Int32) {
        let (config, ignored) = parsedConfig([word])
        #expect(ignored == 0)
        #expect(config.timeout == seconds)
    }
}
