// SPDX-License-Identifier: Apache-2.0
import Testing

import PatternLock

@Suite("The fleet's --store URI")
struct DatabaseURLTests {
    @Test("A TCP URI with verify-full and a CA file")
    func tcpVerifyFull() throws {
        let u = try DatabaseURL(parsing: "postgresql://pl@db.example.org:6543/locks?sslmode=verify-full&sslrootcert=/etc/pl/ca.pem")
        #expect(u.user == "pl" && u.database == "locks")
        #expect(u.endpoint == .tcp(host: "db.example.org", port: 6543))
        #expect(u.tlsMode == .verifyFull && u.rootCertificate == "/etc/pl/ca.pem")
    }

    @Test("host=/dir names a Unix socket directory, as libpq does")
    func socketDirectory() throws {
        let u = try DatabaseURL(parsing: "postgresql://pl@/locks?host=/run/postgresql&port=5433")
        #expect(u.endpoint == .unixSocket(path: "/run/postgresql/.s.PGSQL.5433"))
        #expect(u.tlsMode == .disable)
        // The port stays: a URI copied from a message names the same server.
        #expect(u.description == "postgresql://pl@/locks?host=/run/postgresql&port=5433")
        #expect(
            try DatabaseURL(parsing: "postgresql://pl@/locks?host=/run/postgresql").description
                == "postgresql://pl@/locks?host=/run/postgresql")
    }

    @Test("Over TCP the certificate is checked unless told otherwise, so a CA file is needed")
    func tcpDefaultsToVerifyFull() {
        #expect(throws: DatabaseURL.Error.self) { try DatabaseURL(parsing: "postgresql://pl@db.example.org/locks") }
    }

    @Test(
        "Off this host, a certificate that is not checked is refused",
        arguments: [
            "postgresql://pl@db.example.org/locks?sslmode=disable", "postgresql://pl@10.0.0.5/locks?sslmode=require",
            "postgresql://pl@127.0.0.1.example.org/locks?sslmode=disable", "postgresql://pl@[2001:db8::1]/locks?sslmode=disable",
        ])
    func uncheckedOffHostRefused(_ text: String) {
        do {
            _ = try DatabaseURL(parsing: text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description.contains("sslmode=verify-full"))
        }
    }

    @Test("On loopback too sslmode=disable and require are refused: a local listener would get the password")
    func loopbackUnchecked() throws {
        for host in ["127.0.0.1", "127.8.9.10", "localhost", "[::1]"] {
            for mode in ["disable", "require"] {
                do {
                    _ = try DatabaseURL(parsing: "postgresql://pl@\(host)/locks?sslmode=\(mode)")
                    Issue.record("sslmode=\(mode) on \(host) was accepted")
                } catch {
                    #expect(error.description.contains("loopback") && error.description.contains("Unix socket"))
                }
            }
        }
    }

    @Test(
        "A password in the URI is refused with the way to give it",
        arguments: [
            "postgresql://pl:secret@db/locks?sslmode=disable", "postgresql://pl@db/locks?sslmode=disable&password=secret",
        ])
    func passwordRefused(_ text: String) {
        do {
            _ = try DatabaseURL(parsing: text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description.contains("--store-password-file"))
            #expect(!error.description.contains("secret"))
        }
    }

    @Test(
        "Malformed URIs are refused with a sentence",
        arguments: [
            "mysql://pl@db/locks", "postgresql://@db/locks?sslmode=disable", "postgresql://pl@db:99999/locks?sslmode=disable",
            "postgresql://pl@db/locks?sslmode=maybe", "postgresql://pl@db/locks?sslmode=disable&frobnicate=1",
            "postgresql://pl@/locks?host=/run/postgresql&sslmode=require",
        ])
    func malformed(_ text: String) {
        #expect(throws: DatabaseURL.Error.self) { try DatabaseURL(parsing: text) }
    }
}
